"""Realistic torch.func programs, written the way PyTorch's functorch tutorials and user code
write them, each a function of the library (``torch`` or ``hookgrad``) returning a pytree of
results (tests/func/test_programs.py runs each on both and compares).

Every program seeds its own weights and inputs from NumPy so both libraries see the same
values; random draws inside use the library's own seeded generator (hookgrad's streams are
PyTorch's).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

PROGRAMS: dict = {}


def program(fn: Any) -> Any:
    PROGRAMS[fn.__name__] = fn
    return fn


def _arr(seed: int, *shape: int, scale: float = 1.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _load(lib: Any, model: Any, seed: int) -> Any:
    """Give `model` deterministic weights (the same in both libraries)."""
    with lib.no_grad():
        for i, (_, p) in enumerate(sorted(model.named_parameters())):
            p.copy_(lib.tensor(_arr(seed + i, *p.shape, scale=0.3)))
        for i, (name, b) in enumerate(sorted(model.named_buffers())):
            if b.dtype.is_floating_point:
                vals = _arr(seed + 100 + i, *b.shape, scale=0.2)
                if "var" in name:
                    vals = np.abs(vals) + 0.5
                b.copy_(lib.tensor(vals))
    return model


def _cnn(lib: Any) -> Any:
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(4 * 3 * 3, 5))


# ---------------------------------------------------------------- per-sample gradients
@program
def per_sample_grads_batchnorm_eval(lib: Any) -> Any:
    """functional_call with parameters and buffers (BatchNorm in eval), vmap(grad)."""
    from_func = lib.func
    model = _load(lib, _cnn(lib), 1).eval()
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}
    x = lib.tensor(_arr(2, 6, 1, 8, 8))
    y = lib.tensor(np.array([0, 1, 2, 3, 4, 0]))

    def loss(p, b, sample, target):
        out = from_func.functional_call(model, (p, b), (sample.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, target.unsqueeze(0))

    grads = from_func.vmap(from_func.grad(loss), in_dims=(None, None, 0, 0))(params, buffers,
                                                                              x, y)
    return grads


@program
def per_sample_grads_and_loss(lib: Any) -> Any:
    """grad_and_value with has_aux under vmap, argnums over a tuple of dicts."""
    F = lib.func
    model = _load(lib, lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(),
                                         lib.nn.Linear(8, 3)), 5)
    params = dict(model.named_parameters())
    x = lib.tensor(_arr(6, 7, 4))
    y = lib.tensor(np.array([0, 1, 2, 1, 0, 2, 1]))

    def loss(p, xb, yb):
        logits = F.functional_call(model, p, (xb[None],))
        lv = lib.nn.functional.cross_entropy(logits, yb[None])
        return lv, logits.softmax(-1)

    g, (val, probs) = F.vmap(F.grad_and_value(loss, has_aux=True), in_dims=(None, 0, 0))(
        params, x, y)
    return g, probs, val


@program
def per_sample_grad_norm_clip(lib: Any) -> Any:
    """DP-SGD style: per-sample gradients, clipped per sample, summed."""
    F = lib.func
    model = _load(lib, lib.nn.Linear(5, 2), 7)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = lib.tensor(_arr(8, 9, 5))
    t = lib.tensor(_arr(9, 9, 2))

    def loss(p, xb, tb):
        return lib.nn.functional.mse_loss(F.functional_call(model, p, (xb,)), tb)

    g = F.vmap(F.grad(loss), in_dims=(None, 0, 0))(params, x, t)
    norms = lib.stack([v.flatten(1).norm(dim=1) for v in g.values()]).norm(dim=0)
    factor = (1.0 / (norms + 1e-6)).clamp(max=1.0)
    return {k: lib.einsum("b,b...->...", factor, v) for k, v in g.items()}, norms


# ---------------------------------------------------------------- ensembling
@program
def ensemble_stack_module_state(lib: Any) -> Any:
    """Model ensembling: stack_module_state + vmap over a 'meta'-free base copy."""
    F = lib.func
    models = [_load(lib, lib.nn.Sequential(lib.nn.Linear(6, 10), lib.nn.GELU(),
                                           lib.nn.Linear(10, 3)), 20 + i) for i in range(4)]
    params, buffers = F.stack_module_state(models)
    base = models[0]

    def fmodel(p, b, x):
        return F.functional_call(base, (p, b), (x,))

    x = lib.tensor(_arr(30, 5, 6))
    same = F.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, x)
    xs = lib.tensor(_arr(31, 4, 5, 6))
    diff = F.vmap(fmodel)(params, buffers, xs)
    return same, diff


@program
def ensemble_with_batchnorm_buffers_chunked(lib: Any) -> Any:
    """Ensemble of CNNs with BatchNorm (eval) buffers, chunk_size, out_dims=1."""
    F = lib.func
    models = [_load(lib, _cnn(lib), 40 + 10 * i).eval() for i in range(3)]
    params, buffers = F.stack_module_state(models)
    x = lib.tensor(_arr(41, 2, 1, 8, 8))
    out = F.vmap(lambda p, b, xx: F.functional_call(models[0], (p, b), (xx,)),
                 in_dims=(0, 0, None), out_dims=1, chunk_size=2)(params, buffers, x)
    return out


# ---------------------------------------------------------------- NTK
@program
def ntk_jacobian_contraction(lib: Any) -> Any:
    """The NTK tutorial: jacrev over params, vmap over inputs, einsum contraction."""
    F = lib.func
    model = _load(lib, lib.nn.Sequential(lib.nn.Linear(3, 6), lib.nn.Tanh(),
                                         lib.nn.Linear(6, 2)), 50)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def fnet_single(p, x):
        return F.functional_call(model, p, (x.unsqueeze(0),)).squeeze(0)

    x1 = lib.tensor(_arr(51, 4, 3))
    x2 = lib.tensor(_arr(52, 5, 3))
    jac1 = F.vmap(F.jacrev(fnet_single), (None, 0))(params, x1)
    jac2 = F.vmap(F.jacrev(fnet_single), (None, 0))(params, x2)
    j1 = [j.flatten(2) for j in jac1.values()]
    j2 = [j.flatten(2) for j in jac2.values()]
    full = lib.stack([lib.einsum("Naf,Mbf->NMab", a, b) for a, b in zip(j1, j2)]).sum(0)
    trace = lib.stack([lib.einsum("Naf,Maf->NM", a, b) for a, b in zip(j1, j2)]).sum(0)
    return full, trace


@program
def ntk_vector_products(lib: Any) -> Any:
    """The NTK tutorial's second method: vjp of jvp, vmapped over the identity."""
    F = lib.func
    model = _load(lib, lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(),
                                         lib.nn.Linear(4, 2)), 60)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def fnet_single(p, x):
        return F.functional_call(model, p, (x.unsqueeze(0),)).squeeze(0)

    x1 = lib.tensor(_arr(61, 3, 3))
    x2 = lib.tensor(_arr(62, 2, 3))

    def get_ntk(a, b):
        def f1(p):
            return fnet_single(p, a)

        def f2(p):
            return fnet_single(p, b)

        def get_ntk_slice(vec):
            _, vjp_fn = F.vjp(f1, params)
            vjps = vjp_fn(vec)
            _, jvps = F.jvp(f2, (params,), vjps)
            return jvps

        basis = lib.eye(2, dtype=a.dtype).view(2, 2)
        return F.vmap(get_ntk_slice)(basis)

    return F.vmap(F.vmap(get_ntk, (None, 0)), (0, None))(x1, x2)


# ---------------------------------------------------------------- meta-learning
@program
def maml_grad_of_grad(lib: Any) -> Any:
    """MAML: an inner SGD step by grad, the outer loss differentiated through it, vmapped
    over tasks."""
    F = lib.func
    model = _load(lib, lib.nn.Sequential(lib.nn.Linear(1, 16), lib.nn.ReLU(),
                                         lib.nn.Linear(16, 1)), 70)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x, y):
        return lib.nn.functional.mse_loss(F.functional_call(model, p, (x,)), y)

    def inner(p, x, y):
        g = F.grad(loss)(p, x, y)
        return {k: p[k] - 0.1 * g[k] for k in p}

    def task_loss(p, xs, ys, xq, yq):
        return loss(inner(p, xs, ys), xq, yq)

    xs = lib.tensor(_arr(71, 3, 5, 1))
    ys = lib.sin(xs)
    xq = lib.tensor(_arr(72, 3, 4, 1))
    yq = lib.sin(xq)
    per_task = F.vmap(F.grad_and_value(task_loss), in_dims=(None, 0, 0, 0, 0))(
        params, xs, ys, xq, yq)
    return per_task


# ---------------------------------------------------------------- forward mode
@program
def jvp_linearize_jacfwd(lib: Any) -> Any:
    """linearize reused for several tangents, jvp with has_aux, jacfwd vs jacrev."""
    F = lib.func
    w = lib.tensor(_arr(80, 4, 4, scale=0.5))

    def f(x):
        return lib.tanh(x @ w).exp() * x.sin()

    x = lib.tensor(_arr(81, 4))
    out, jvp_fn = F.linearize(f, x)
    ts = [jvp_fn(lib.tensor(_arr(82 + i, 4))) for i in range(3)]
    p, t, aux = F.jvp(lambda u: (f(u), u.norm()), (x,), (lib.ones(4),), has_aux=True)
    return out, ts, p, t, aux, F.jacfwd(f)(x), F.jacrev(f)(x)


@program
def hessian_of_loss_wrt_params_dict(lib: Any) -> Any:
    """hessian of a loss with respect to a parameters dict (dict of dicts of blocks)."""
    F = lib.func
    model = _load(lib, lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Sigmoid(),
                                         lib.nn.Linear(2, 1)), 90)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = lib.tensor(_arr(91, 5, 3))
    y = lib.tensor(_arr(92, 5, 1))

    def loss(p):
        return ((F.functional_call(model, p, (x,)) - y) ** 2).mean()

    h = F.hessian(loss)(params)
    hfr = F.jacfwd(F.jacrev(loss))(params)
    hrr = F.jacrev(F.jacrev(loss))(params)
    return h, hfr, hrr


@program
def hvp_forward_over_reverse(lib: Any) -> Any:
    """Hessian-vector product as jvp of grad, and as vjp of grad (the tutorial's hvp)."""
    F = lib.func

    def f(x):
        return (x.sin() * x.cos().sum()).sum() + (x ** 3).sum()

    x = lib.tensor(_arr(100, 6))
    v = lib.tensor(_arr(101, 6))
    fwd = F.jvp(F.grad(f), (x,), (v,))[1]
    _, vjp_fn = F.vjp(F.grad(f), x)
    rev = vjp_fn(v)[0]
    return fwd, rev, F.hessian(f)(x) @ v


# ---------------------------------------------------------------- vmap over ops
@program
def vmap_out_dims_tuple(lib: Any) -> Any:
    F = lib.func

    def f(x, y):
        return x * y, (x + y).sum(0), {"m": x.max(-1).values}

    x = lib.tensor(_arr(110, 3, 4, 5))
    y = lib.tensor(_arr(111, 4, 5))
    return F.vmap(f, in_dims=(0, None), out_dims=(1, 0, {"m": -1}))(x, y)


@program
def vmap_masked_indexing_ops(lib: Any) -> Any:
    F = lib.func
    x = lib.tensor(_arr(120, 4, 6))
    idx = lib.tensor(np.array([[0, 2], [1, 5], [3, 3], [4, 0]]))

    def f(row, ix):
        masked = lib.where(row > 0, row, lib.zeros_like(row))
        filled = row.masked_fill(row < -0.5, -1.0)
        g = row.gather(0, ix)
        c = row.cumsum(0)
        s, order = row.sort(descending=True)
        top = row.topk(3)
        picked = row[ix]
        sel = row.index_select(0, ix)
        return masked, filled, g, c, s, order, top.values, top.indices, picked, sel

    return F.vmap(f)(x, idx)


@program
def vmap_conv_layernorm_embedding(lib: Any) -> Any:
    F = lib.func
    nnf = lib.nn.functional
    w = lib.tensor(_arr(130, 3, 2, 3, 3, scale=0.3))
    emb = lib.tensor(_arr(131, 10, 4))
    ln_w = lib.tensor(_arr(132, 4))
    ln_b = lib.tensor(_arr(133, 4))

    def f(img, tok):
        c = nnf.conv2d(img.unsqueeze(0), w, padding=1).squeeze(0)
        e = nnf.embedding(tok, emb)
        n = nnf.layer_norm(e, (4,), ln_w, ln_b)
        return c.relu().mean((1, 2)), n

    imgs = lib.tensor(_arr(134, 5, 2, 6, 6))
    toks = lib.tensor(np.random.default_rng(135).integers(0, 10, (5, 7)))
    return F.vmap(f)(imgs, toks)


@program
def vmap_cross_entropy_grad(lib: Any) -> Any:
    """Per-sample cross-entropy with label smoothing and class weights, and its gradient."""
    F = lib.func
    weight = lib.tensor(np.abs(_arr(140, 5)) + 0.5)

    def loss(logits, target):
        return (lib.nn.functional.cross_entropy(logits, target, weight=weight)
                + lib.nn.functional.cross_entropy(logits, target, label_smoothing=0.1))

    def both(logits, target):  # PyTorch's vmap refuses weights with label smoothing
        return lib.nn.functional.cross_entropy(logits, target, weight=weight,
                                               label_smoothing=0.1)

    logits = lib.tensor(_arr(141, 6, 3, 5))
    target = lib.tensor(np.random.default_rng(142).integers(0, 5, (6, 3)))
    try:
        refused = F.vmap(both)(logits, target)
    except RuntimeError as exc:
        refused = type(exc).__name__
    return (F.vmap(loss)(logits, target), F.vmap(F.grad(loss))(logits, target), refused,
            both(logits[0], target[0]))


@program
def vmap_dropout_randomness(lib: Any) -> Any:
    """Dropout in each randomness mode (the seed is shared, so the masks are PyTorch's)."""
    F = lib.func
    x = lib.ones(4, 8)
    res = []
    for mode in ("same", "different"):
        lib.manual_seed(0)
        res.append(F.vmap(lambda r: lib.nn.functional.dropout(r, 0.5), randomness=mode)(x))
        lib.manual_seed(1)
        res.append(F.vmap(lambda r: r * lib.rand(8), randomness=mode)(x))
    try:
        F.vmap(lambda r: lib.nn.functional.dropout(r, 0.5))(x)
        res.append("no error")
    except RuntimeError as exc:
        res.append(type(exc).__name__)
    model = lib.nn.Sequential(lib.nn.Linear(8, 8), lib.nn.Dropout(0.3))
    _load(lib, model, 143)
    params = dict(model.named_parameters())
    lib.manual_seed(2)
    res.append(F.vmap(lambda p, r: F.functional_call(model, p, (r,)), in_dims=(None, 0),
                      randomness="different")(params, x))
    return res


@program
def vmap_chunk_size_jacrev(lib: Any) -> Any:
    F = lib.func

    def f(x):
        return (x.unsqueeze(0) * x.unsqueeze(1)).tanh().sum(0)

    x = lib.tensor(_arr(150, 7))
    return (F.jacrev(f, chunk_size=3)(x), F.jacrev(f, chunk_size=1)(x),
            F.vmap(f, chunk_size=2)(lib.tensor(_arr(151, 5, 7))))


# ---------------------------------------------------------------- autograd.Function
def _function_classes(lib: Any) -> tuple:
    class Cube(lib.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x ** 3, x * 2.0

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, g, _gx):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

        @staticmethod
        def jvp(ctx, t):
            return 3 * ctx.saved_tensors[0] ** 2 * t, t * 2.0

    class ScaledSum(lib.autograd.Function):
        @staticmethod
        def forward(x, scale):
            return x.sum(-1) * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.scale = inputs[1]
            ctx.n = inputs[0].shape[-1]

        @staticmethod
        def backward(ctx, g):
            return g.unsqueeze(-1).expand(*g.shape, ctx.n) * ctx.scale, None

        @staticmethod
        def vmap(info, in_dims, x, scale):
            xd = in_dims[0]
            xm = x.movedim(xd, 0) if xd is not None else x
            return ScaledSum.apply(xm, scale), 0 if xd is not None else None

    return Cube, ScaledSum


@program
def autograd_function_under_vmap(lib: Any) -> Any:
    F = lib.func
    Cube, ScaledSum = _function_classes(lib)
    x = lib.tensor(_arr(160, 4, 3))
    v = F.vmap(lambda r: Cube.apply(r)[0])(x)
    g = F.vmap(F.grad(lambda r: Cube.apply(r)[0].sum()))(x)
    j = F.jacfwd(lambda r: Cube.apply(r)[0])(x[0])
    s = F.vmap(lambda r: ScaledSum.apply(r, 2.0))(x)
    gs = F.vmap(F.grad(lambda r: ScaledSum.apply(r, 2.0)))(x)
    s1 = F.vmap(lambda r: ScaledSum.apply(r, 3.0), in_dims=1)(x)
    return v, g, j, s, gs, s1


# ---------------------------------------------------------------- helpers
@program
def functionalize_and_replace_batchnorm(lib: Any) -> Any:
    F = lib.func

    def f(x):
        y = x.clone()
        y.add_(1.0)
        y[0] = 5.0
        v = y.view(-1)
        v.mul_(2.0)
        return y

    x = lib.tensor(_arr(170, 2, 3))
    out = F.functionalize(f)(x)
    model = _load(lib, _cnn(lib), 171)
    F.replace_all_batch_norm_modules_(model)
    bn = model[1]
    flags = (bn.running_mean is None, bn.running_var is None, bn.track_running_stats)
    imgs = lib.tensor(_arr(172, 3, 2, 1, 8, 8))
    params = {k: v.detach() for k, v in model.named_parameters()}
    outs = F.vmap(lambda p, im: F.functional_call(model, p, (im,)), in_dims=(None, 0))(
        params, imgs)
    return out, flags, outs


@program
def jacrev_argnums_has_aux_dict(lib: Any) -> Any:
    F = lib.func

    def f(a, b):
        out = {"s": (a["w"] * b).sum(-1), "p": a["u"].exp() * b[:2]}
        return out, {"norm": b.norm()}

    a = {"w": lib.tensor(_arr(180, 3, 4)), "u": lib.tensor(_arr(181, 2))}
    b = lib.tensor(_arr(182, 4))
    j, aux = F.jacrev(f, argnums=(0, 1), has_aux=True)(a, b)
    jf, auxf = F.jacfwd(f, argnums=(0, 1), has_aux=True)(a, b)
    return j, aux, jf, auxf


@program
def vmap_nested_in_dims_pytrees(lib: Any) -> Any:
    F = lib.func

    def f(d, s):
        return d["a"] @ d["b"] + s

    d = {"a": lib.tensor(_arr(190, 2, 3, 3, 4)), "b": lib.tensor(_arr(191, 4, 5))}
    s = lib.tensor(_arr(192, 3, 5))
    inner = F.vmap(f, in_dims=({"a": 0, "b": None}, 0))
    return F.vmap(inner, in_dims=({"a": 0, "b": None}, None))(d, s)


@program
def vmap_module_forward_hooks(lib: Any) -> Any:
    """Forward (pre-)hooks see the per-sample values under vmap(functional_call)."""
    F = lib.func
    model = _load(lib, lib.nn.Linear(3, 2), 200)
    log = []
    model.register_forward_pre_hook(lambda m, a: log.append(("pre", tuple(a[0].shape))))
    model.register_forward_hook(lambda m, a, o: log.append(("post", tuple(o.shape))))
    params = dict(model.named_parameters())
    x = lib.tensor(_arr(201, 4, 3))
    out = F.vmap(lambda p, r: F.functional_call(model, p, (r,)), in_dims=(None, 0))(params, x)
    return out, log


@program
def per_sample_grads_transformer_layer(lib: Any) -> Any:
    """Per-sample gradients through a small attention block (softmax, layer_norm, GELU)."""
    F = lib.func
    d = 8

    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = lib.nn.Linear(d, 3 * d)
            self.proj = lib.nn.Linear(d, d)
            self.ln = lib.nn.LayerNorm(d)
            self.ff = lib.nn.Sequential(lib.nn.Linear(d, 16), lib.nn.GELU(), lib.nn.Linear(16, d))

        def forward(self, x):
            q, k, v = self.qkv(self.ln(x)).chunk(3, -1)
            att = (q @ k.transpose(-2, -1) / math.sqrt(d)).masked_fill(
                lib.ones(x.shape[-2], x.shape[-2]).triu(1).bool(), float("-inf")).softmax(-1)
            x = x + self.proj(att @ v)
            return x + self.ff(x)

    model = _load(lib, Block(), 210)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = lib.tensor(_arr(211, 3, 5, d))

    def loss(p, xb):
        return F.functional_call(model, p, (xb,)).pow(2).mean()

    return F.vmap(F.grad(loss), in_dims=(None, 0))(params, x)


# ---------------------------------------------------------------- batch 2: edges users hit
def _outcome(fn: Any) -> Any:
    """`fn()`'s value, or the exception type's name when it raises (compared too)."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - the type is the outcome compared
        return f"raised {type(exc).__name__}"


@program
def vmap_linalg_ops(lib: Any) -> Any:
    F = lib.func
    a = lib.tensor(_arr(300, 4, 3, 3)) + 3 * lib.eye(3)
    b = lib.tensor(_arr(301, 4, 3))
    spd = a @ a.transpose(-1, -2)
    return (F.vmap(lib.linalg.solve)(a, b), F.vmap(lib.linalg.det)(a),
            F.vmap(lib.linalg.cholesky)(spd), F.vmap(lib.linalg.norm)(a),
            F.vmap(lambda m: lib.linalg.inv(m) @ m)(a), F.vmap(lib.trace)(a),
            F.vmap(lib.diag)(b), F.vmap(lib.outer)(b, b), F.vmap(lib.kron)(a[:, :2, :2], a[:, 1:, 1:]),
            F.vmap(lambda u, v: lib.cdist(u[None], v[None])[0])(a, a.flip(1)),
            F.vmap(lambda m: lib.tensordot(m, m, dims=([1], [0])))(a),
            F.vmap(lambda m: lib.einsum("...ij,...jk->...ik", m, m))(a),
            F.vmap(F.grad(lambda m: lib.linalg.slogdet(m)[1]))(a))


@program
def vmap_spatial_ops(lib: Any) -> Any:
    F = lib.func
    nnf = lib.nn.functional
    x = lib.tensor(_arr(310, 3, 2, 6, 6))

    def f(img):
        up = nnf.interpolate(img[None], scale_factor=2, mode="bilinear", align_corners=False)[0]
        pooled = nnf.avg_pool2d(img, 2)
        padded = nnf.pad(img, (1, 2, 0, 1), mode="reflect")
        patches = nnf.unfold(img[None], 3)[0]
        gn = nnf.group_norm(img[None], 2)[0]
        ap = nnf.adaptive_avg_pool2d(img, (2, 3))
        return up.mean(), pooled, padded, patches, gn, ap

    return F.vmap(f)(x), F.vmap(F.grad(lambda i: f(i)[0] + f(i)[4].pow(2).sum()))(x)


@program
def vmap_scatter_index_ops(lib: Any) -> Any:
    F = lib.func
    x = lib.tensor(_arr(320, 4, 6))
    idx = lib.tensor(np.random.default_rng(321).integers(0, 3, (4, 6)))

    def f(row, ix):
        sa = lib.zeros(3).scatter_add(0, ix, row)
        ia = lib.zeros(3).index_add(0, ix, row)
        z = lib.zeros(3)
        z = z.index_put((ix,), row, accumulate=True)
        out = row.new_zeros(6)
        out[1:4] = row[:3] * 2
        b = lib.bucketize(row, lib.tensor([-0.5, 0.0, 0.5]))
        ss = lib.searchsorted(lib.tensor([-1.0, 0.0, 1.0]), row, right=True)
        s2 = lib.searchsorted(row.sort().values, lib.tensor([0.0, 0.5]), out_int32=True)
        s3 = lib.searchsorted(row, lib.tensor([0.1, -0.2]), sorter=row.argsort())
        return sa, ia, z, out, b, ss, s2, s3

    return F.vmap(f)(x, idx)


@program
def vmap_refusals(lib: Any) -> Any:
    """What PyTorch's vmap refuses, with its exception types."""
    F = lib.func
    x = lib.tensor(_arr(330, 3, 4))
    bn = lib.nn.BatchNorm1d(4)
    return [
        _outcome(lambda: F.vmap(lambda r: r.sum().item())(x)),
        _outcome(lambda: F.vmap(lambda r: r if r.sum() > 0 else -r)(x)),
        _outcome(lambda: F.vmap(lambda r: lib.nonzero(r))(x)),
        _outcome(lambda: F.vmap(lambda r: r[r > 0])(x)),
        _outcome(lambda: F.vmap(lambda r: bn(r[None]))(x)),
        _outcome(lambda: F.vmap(lambda r: lib.rand(2) + r[:2])(x)),
        _outcome(lambda: F.vmap(lambda r: lib.bernoulli(r.sigmoid()), randomness="same")(x)),
        _outcome(lambda: F.vmap(lambda r: 1.0)(x)),
        _outcome(lambda: F.vmap(lambda r, y: r + y, in_dims=(0, 0))(x, lib.ones(2, 4))),
        _outcome(lambda: F.vmap(lambda r: r, in_dims=2)(x)),
        _outcome(lambda: F.grad(lambda r: r.sum())(lib.ones(3, dtype=lib.long))),
        _outcome(lambda: F.grad(lambda r: r)(x)),
        _outcome(lambda: F.vmap(lambda r: lib.zeros(4).add_(r))(x)),
        _outcome(lambda: F.vmap(lambda r: r.add_(x[0]))(x.clone())),
    ]


@program
def vmap_over_autograd_grad(lib: Any) -> Any:
    """vmap over torch.autograd.grad (the Jacobian by vmap of vjp done by hand), and
    is_grads_batched."""
    x = lib.tensor(_arr(340, 4), requires_grad=True)
    y = (x.sin() * x.sum()).tanh()

    def vjp(v):
        return lib.autograd.grad(y, x, v, retain_graph=True)[0]

    eye = lib.eye(4)
    jac = lib.func.vmap(vjp)(eye)
    jac2 = lib.autograd.grad(y, x, eye, retain_graph=True, is_grads_batched=True)[0]
    return jac, jac2


@program
def functional_call_strict_tied_mha(lib: Any) -> Any:
    F = lib.func

    class Tied(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = lib.nn.Embedding(7, 4)
            self.att = lib.nn.MultiheadAttention(4, 2, batch_first=True)
            self.out = lib.nn.Linear(4, 7, bias=False)
            self.out.weight = self.emb.weight

        def forward(self, tok):
            h = self.emb(tok)
            a, w = self.att(h, h, h)
            return self.out(a), w

    m = _load(lib, Tied(), 350).eval()
    params = dict(m.named_parameters())
    new = {k: v * 1.5 for k, v in params.items()}
    tok = lib.tensor(np.random.default_rng(351).integers(0, 7, (2, 5)))
    res = [F.functional_call(m, new, (tok,))]
    res.append(_outcome(lambda: F.functional_call(m, {"emb.weight": params["emb.weight"]},
                                                  (tok,), strict=True)))
    only = {"emb.weight": params["emb.weight"] * 2}  # tied: out.weight follows
    res.append(F.functional_call(m, only, (tok,), tie_weights=True))
    res.append(F.vmap(lambda t: F.functional_call(m, new, (t[None],))[0][0])(tok))
    res.append(F.vmap(F.grad(lambda p, t: F.functional_call(m, p, (t[None],))[0].sum()),
                      in_dims=(None, 0))(params, tok))
    return res


@program
def jacobians_argnums_and_shapes(lib: Any) -> Any:
    F = lib.func

    def f(x, y, z):
        return (x[:, None] * y[None]).sin() + z, (x.sum() * y).exp()

    x, y, z = (lib.tensor(_arr(360 + i, *s)) for i, s in enumerate([(3,), (2,), (3, 2)]))
    return (F.jacrev(f, argnums=(0, -1))(x, y, z), F.jacfwd(f, argnums=1)(x, y, z),
            F.hessian(lambda a, b: (a.outer(b) ** 2).sum(), argnums=(0, 1))(x, y),
            F.vmap(F.jacfwd(lambda a: a.softmax(-1)))(lib.tensor(_arr(363, 4, 5))),
            F.jacrev(lambda a: (a.softmax(-1), a.log_softmax(-1)), chunk_size=2,
                     has_aux=False)(x))


@program
def per_sample_grads_nll_sum_reduction(lib: Any) -> Any:
    F = lib.func
    model = _load(lib, lib.nn.Sequential(lib.nn.Linear(6, 4), lib.nn.LogSoftmax(-1)), 370)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = lib.tensor(_arr(371, 5, 3, 6))
    y = lib.tensor(np.random.default_rng(372).integers(0, 4, (5, 3)))

    def loss(p, xb, yb):
        return lib.nn.functional.nll_loss(F.functional_call(model, p, (xb,)), yb,
                                          reduction="sum")

    return F.vmap(F.grad(loss, argnums=0), in_dims=(None, 0, 0))(params, x, y)


@program
def custom_function_vmap_staticmethod_tuple(lib: Any) -> Any:
    """autograd.Function with a vmap staticmethod returning two outputs and out_dims tuple."""
    F = lib.func

    class SplitScale(lib.autograd.Function):
        @staticmethod
        def forward(x, w):
            return x * w, (x - w).abs()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, ga, gb):
            x, w = ctx.saved_tensors
            s = (x - w).sign()
            return ga * w + gb * s, (ga * x - gb * s)

        @staticmethod
        def vmap(info, in_dims, x, w):
            xd, wd = in_dims
            x = x.movedim(xd, 0) if xd is not None else x.expand(info.batch_size, *x.shape)
            w = w.movedim(wd, 0) if wd is not None else w.expand(info.batch_size, *w.shape)
            a, b = SplitScale.apply(x, w)
            return (a, b), (0, 0)

    x = lib.tensor(_arr(380, 4, 3))
    w = lib.tensor(_arr(381, 3))
    out = F.vmap(SplitScale.apply, in_dims=(0, None))(x, w)
    out1 = F.vmap(SplitScale.apply, in_dims=(1, None), out_dims=(1, 0))(x.t().contiguous(), w)
    g = F.vmap(F.grad(lambda a, b: sum(t.sum() for t in SplitScale.apply(a, b)), argnums=(0, 1)),
               in_dims=(0, None))(x, w)
    return out, out1, g


@program
def ensemble_meta_base_model(lib: Any) -> Any:
    """The ensembling tutorial verbatim: a deepcopy of one model moved to 'meta' as the
    stateless base, ``torch.vmap`` over stacked parameters and buffers."""
    import copy

    F = lib.func
    models = [_load(lib, lib.nn.Sequential(lib.nn.Linear(5, 7), lib.nn.ReLU(),
                                           lib.nn.Linear(7, 2)), 400 + 7 * i)
              for i in range(3)]
    params, buffers = F.stack_module_state(models)
    base = copy.deepcopy(models[0]).to("meta")

    def fmodel(p, b, x):
        return F.functional_call(base, (p, b), (x,))

    minibatches = lib.tensor(_arr(401, 3, 4, 5))
    out = lib.vmap(fmodel)(params, buffers, minibatches)
    out2 = lib.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatches[0])
    shapes = {k: tuple(v.shape) for k, v in params.items()}
    return out, out2, shapes, [base[0].weight.is_meta]


@program
def per_sample_grads_tutorial_verbatim(lib: Any) -> Any:
    """The per-sample-gradients tutorial's code path: params and buffers as separate
    arguments, ``in_dims=(None, None, 0, 0)``, checked against the loop of ``autograd``."""
    F = lib.func

    class SimpleCNN(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = lib.nn.Conv2d(1, 4, 3, 1)
            self.conv2 = lib.nn.Conv2d(4, 6, 3, 1)
            self.fc1 = lib.nn.Linear(6 * 2 * 2, 8)
            self.fc2 = lib.nn.Linear(8, 3)

        def forward(self, x):
            x = lib.nn.functional.relu(self.conv1(x))
            x = lib.nn.functional.relu(self.conv2(x))
            x = lib.nn.functional.max_pool2d(x, 2)
            x = lib.flatten(x, 1)
            x = lib.nn.functional.relu(self.fc1(x))
            return lib.nn.functional.log_softmax(self.fc2(x), dim=1)

    model = _load(lib, SimpleCNN(), 410)
    data = lib.tensor(_arr(411, 4, 1, 8, 8))
    targets = lib.tensor(np.array([0, 2, 1, 2]))
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        predictions = F.functional_call(model, (params, buffers), (batch,))
        return lib.nn.functional.nll_loss(predictions, target.unsqueeze(0))

    ft = F.vmap(F.grad(compute_loss), in_dims=(None, None, 0, 0))(params, buffers, data,
                                                                   targets)
    loop = []
    for i in range(4):
        loss = lib.nn.functional.nll_loss(model(data[i:i + 1]), targets[i:i + 1])
        loop.append(lib.autograd.grad(loss, list(model.parameters())))
    stacked = [lib.stack(gs) for gs in zip(*loop)]
    return ft, stacked


@program
def vmap_misc_user_ops(lib: Any) -> Any:
    """A sweep of small things users write under vmap/grad (each compared with PyTorch)."""
    F = lib.func
    nnf = lib.nn.functional
    a = lib.tensor(_arr(420, 4, 3, 5))
    b = lib.tensor(_arr(421, 4, 5))

    def vjp_twice():
        out, fn = F.vjp(lambda x: x.sin() * 2, b)
        return fn(lib.ones_like(out)), fn(lib.ones_like(out) * 2)

    def inplace_view(r):
        r = r.clone()
        r[:, 0] += 1.0
        r[1].mul_(2.0)
        return r

    def sdpa(q):
        return nnf.scaled_dot_product_attention(q[None], q[None], q[None], is_causal=True)[0]

    toks = lib.tensor(np.array([[0, 1], [3, 2]]))
    return [
        vjp_twice(),
        F.grad(lambda x: lib.autograd.grad((x ** 3).sum(), x, create_graph=True)[0].sum())(b[0]),
        F.vmap(inplace_view)(a),
        F.vmap(lambda r: (r * 2, lib.ones(2)), out_dims=(0, None))(a),
        F.vmap(sdpa)(a), F.vmap(F.grad(lambda q: sdpa(q).sum()))(a),
        F.vmap(lambda i: nnf.one_hot(i, 4))(toks), F.vmap(lambda i: nnf.one_hot(i, 3))(toks),
        _outcome(lambda: F.vmap(lambda i: nnf.one_hot(i))(toks)),
        F.vmap(lambda r, lo: r.clamp(min=lo, max=lo + 1))(b, b[:, 0]),
        F.vmap(lambda i: nnf.embedding_bag(i[None], a[0], mode="mean"))(toks.clamp(max=2)),
        F.vmap(F.hessian(lambda x, y: (x * y.sin()).sum(), argnums=(0, 1)))(b, b),
        F.vmap(F.grad(F.grad(lambda x: x.sin().exp())))(b[:, 0]),
        _outcome(lambda: F.jacrev(lambda x: (x > 0).long())(b[0])),
        _outcome(lambda: F.vjp(lambda x: (x * 2, (x > 0).long()), b)),
        F.grad(lambda x: (x > 0).sum())(b),
        F.vmap(lambda xs: xs[0] + xs[1], in_dims=([0, 1],))([b, b.t()]),
        F.vmap(lambda x, scale=1.0: x * scale)(b, scale=3.0),
        F.vmap(lambda x: (x.unbind(0), x.chunk(2, -1), x.max(0)))(a),
        F.vmap(lambda x: x + x.new_tensor(2.0) * lib.tensor([1.0, 2, 3, 4, 5]))(b),
        F.vmap(lambda x, m: x.masked_fill(m, 0.0))(b, b > 0),
        F.vmap(lambda x: (x.std(), x.var(0, unbiased=False), x.norm(p=1)))(a),
        F.vmap(F.grad(lambda x: x.logsumexp(-1).sum()))(a),
        F.vmap(lambda x: (nnf.silu(x), nnf.mish(x), nnf.softplus(x), nnf.elu(x),
                          nnf.hardswish(x)))(b),
        F.jacfwd(lambda x: F.vmap(lambda r: lib.tanh(r @ a[0].t()))(x))(b),
        F.vmap(F.grad(lambda x: x.cumprod(-1).sum()))(b),
        F.vmap(F.grad(lambda x: (x.sort().values * lib.arange(5.0)).sum()))(b),
        F.vmap(F.grad(lambda x: x.topk(2).values.pow(2).sum()))(b),
        F.vmap(lambda x: nnf.pdist(x))(a),
        F.vmap(lambda x, y: nnf.kl_div(x.log_softmax(-1), y.softmax(-1),
                                       reduction="batchmean"))(a, a.flip(2)),
        F.vmap(F.grad(lambda x, y: nnf.binary_cross_entropy_with_logits(
            x, y.sigmoid(), pos_weight=lib.ones(5) * 2)))(b, b.flip(0)),
        F.vmap(lambda x: (lib.diff(x), x.roll(1, -1), x.rot90(1, (0, 1)), x[..., -1]))(a),
    ]


@program
def vmap_modules_and_batchnorm_modes(lib: Any) -> Any:
    """Modules called directly under vmap; training-mode batch norm refused with running
    stats (PyTorch's error), accepted without them, after replace_all_batch_norm_modules_,
    in eval mode and with batched running stats; modules under jacrev/hessian/jvp."""
    F = lib.func
    nn = lib.nn
    nnf = lib.nn.functional
    a = lib.tensor(_arr(430, 4, 3, 5))
    b = lib.tensor(_arr(431, 4, 5))
    lin = _load(lib, nn.Linear(5, 3), 432)
    bn = _load(lib, nn.Sequential(nn.Linear(5, 4), nn.BatchNorm1d(4)), 433)
    conv = _load(lib, nn.Conv1d(3, 2, 2), 434)
    fixed = _load(lib, nn.Sequential(nn.Linear(5, 4), nn.BatchNorm1d(4)), 435)
    F.replace_all_batch_norm_modules_(fixed)
    p = dict(lin.named_parameters())
    return [
        F.vmap(lin)(b), F.vmap(lin, in_dims=1)(b.t().contiguous()),
        _outcome(lambda: F.vmap(bn)(a)),
        _outcome(lambda: F.vmap(lambda x, m: nnf.batch_norm(x, m, lib.ones(4), training=True))(
            a[..., :4], lib.zeros(4, 4))),
        _outcome(lambda: F.vmap(lambda x: nnf.instance_norm(
            x[None], lib.zeros(3), lib.ones(3), use_input_stats=True))(a)),
        F.vmap(lambda x, m, v: nnf.batch_norm(x, m, v, training=True))(
            a[..., :4], lib.zeros(4, 4), lib.ones(4, 4)),
        F.vmap(lambda x: nnf.batch_norm(x, None, None, training=True))(a),
        F.vmap(fixed)(a), F.vmap(bn.eval())(a),
        F.jacrev(lambda x: conv(x))(a[0]),
        F.hessian(lambda q: F.functional_call(lin, q, (b,)).pow(2).sum())(p),
        F.jvp(lambda x: F.functional_call(bn.eval(), dict(bn.named_parameters()), (x,)), (b,),
              (lib.ones_like(b),)),
        F.vmap(F.jacfwd(lambda q, x: F.functional_call(lin, q, (x,))), in_dims=(None, 0))(p, b),
        F.grad(lambda q, x: F.functional_call(lin, q, (x,)).sum(), argnums=(0, 1))(p, b),
        _outcome(lambda: F.vmap(lambda x: b[0].add_(x))(b)),
        F.vmap(lambda x: nnf.fold(x[None], (3, 3), 2)[0])(lib.tensor(_arr(436, 2, 4, 4))),
        F.vmap(lambda img, g: nnf.grid_sample(img[None], g[None], align_corners=False)[0])(
            lib.tensor(_arr(437, 2, 1, 4, 4)), lib.tensor(_arr(438, 2, 3, 3, 2)).tanh()),
        F.vmap(lambda m: (m.tril(), m.triu(1), lib.diag_embed(m[0]), m.amax(0), m.aminmax()))(a),
    ]


@program
def outer_transforms_over_vmap_fallbacks(lib: Any) -> Any:
    """grad/jvp/jacrev/hessian *outside* a vmap whose ops take per-sample paths (per-sample
    conv weights, embedding with padding_idx, batch norm with batched running stats)."""
    F = lib.func
    nnf = lib.nn.functional
    x = lib.tensor(_arr(440, 3, 2, 5).astype(np.float64))
    w = lib.tensor(_arr(441, 3, 2, 2, 3).astype(np.float64))
    emb = lib.tensor(_arr(442, 6, 4).astype(np.float64))
    idx = lib.tensor(np.array([[0, 2, 5], [1, 0, 3], [2, 2, 4]]))
    stats = (lib.zeros(3, 2, dtype=lib.float64), lib.ones(3, 2, dtype=lib.float64))
    conv_grad = F.grad(lambda u, v: nnf.conv1d(u[None], v).pow(3).sum())
    emb_grad = F.grad(lambda t, i: nnf.embedding(i, t, padding_idx=2).pow(2).sum())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # hookgrad's fallback warning
        return [
            F.grad(lambda a: F.vmap(lambda u, v: nnf.conv_transpose1d(
                u[None], v.transpose(0, 1).contiguous()))(a, w).sin().sum())(x),
            F.jvp(lambda a: F.vmap(conv_grad)(a, w), (x,), (lib.ones_like(x),))[1],
            F.grad(lambda e: F.vmap(emb_grad, in_dims=(None, 0))(e, idx).sin().sum())(emb),
            F.grad(lambda a: F.vmap(lambda u, m, s: nnf.batch_norm(u, m, s, training=True))(
                a, *stats).pow(2).sum())(x.reshape(3, 5, 2)),
            F.hessian(lambda a: F.vmap(lambda u, v: nnf.conv1d(u[None], v).tanh().sum())(
                a, w))(x[:, :, :3]),
            F.jacrev(lambda a: F.vmap(conv_grad)(a, w).sum(0))(x),
        ]


@program
def third_derivative_over_module_params(lib: Any) -> Any:
    """jacfwd(jacrev(grad)) of a module's loss over its parameters dict: three nested levels
    whose reshapes meet interleaved batch dimensions."""
    F = lib.func
    m = _load(lib, lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Tanh(), lib.nn.Linear(3, 1)),
              450)
    p = {k: v.detach() for k, v in m.named_parameters()}
    x = lib.tensor(_arr(451, 4, 2))

    def f(q):
        return F.functional_call(m, q, (x,)).pow(2).sum()

    return F.hessian(f)(p), F.jacfwd(F.jacrev(F.grad(f)))(p)
