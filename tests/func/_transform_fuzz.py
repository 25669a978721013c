"""One case of the transform fuzzer (docs/func.md, "The transform fuzzer"): a random
composition (depth 1-3) of ``vmap``/``grad``/``grad_and_value``/``vjp``/``jvp``/``jacrev``/
``jacfwd``/``hessian``/``linearize`` over a small function, run by hookgrad and by torch.func.

A case is a pure function of its number `k`: the base function (plain ops, pytree inputs and
outputs, ``functional_call`` over small modules with forward hooks, tied weights, ``strict``,
buffers, tensor hooks, in-place ops, dropout, a value read), the layers with their random
parameters (``in_dims``/``out_dims`` as ints, negative ints, ``None`` and nested tuples, lists
and dicts; ``argnums`` tuples; ``has_aux``; ``chunk_size``; ``randomness``) and the inputs.
Every 8th case is instead a ``stack_module_state`` ensemble under ``vmap`` (and ``grad``).

Outcomes are compared on values, pytree structure, dtypes, hook logs and exception types.
Where torch.func raises and hookgrad does not, hookgrad must equal the same program with every
``vmap`` replaced by a Python loop (PyTorch's per-sample semantics), as in the vmap sweep.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import hookgrad

# ---------------------------------------------------------------- pytrees (tuple, list, dict)


class S(tuple):
    """A shape leaf of an argument description (a plain tuple would be a pytree node)."""


def flatten(tree: Any) -> tuple[list, Any]:
    if isinstance(tree, S) or not isinstance(tree, (tuple, list, dict)):
        return [tree], "*"
    if isinstance(tree, dict):
        parts = [flatten(v) for v in tree.values()]
        return [x for p in parts for x in p[0]], ("dict", tuple(tree), tuple(p[1] for p in parts))
    parts = [flatten(v) for v in tree]
    return [x for p in parts for x in p[0]], (type(tree).__name__, None, tuple(p[1] for p in parts))


def unflatten(leaves: list, spec: Any) -> Any:
    it = iter(leaves)

    def build(sp: Any) -> Any:
        if sp == "*":
            return next(it)
        kind, keys, kids = sp
        vals = [build(c) for c in kids]
        if kind == "dict":
            return dict(zip(keys, vals))
        return list(vals) if kind == "list" else tuple(vals)

    return build(spec)


def tree_map(fn: Any, tree: Any) -> Any:
    leaves, spec = flatten(tree)
    return unflatten([fn(x) for x in leaves], spec)


# ---------------------------------------------------------------- modules of both libraries

def _arrays(seed: int, shapes: dict) -> dict:
    rng = np.random.default_rng(seed)
    return {k: rng.standard_normal(s) * 0.5 for k, s in shapes.items()}


MLP = {"0.weight": (4, 3), "0.bias": (4,), "2.weight": (2, 4), "2.bias": (2,)}
SCALED = {"lin.weight": (3, 3), "lin.bias": (3,)}
TIED = {"a.weight": (3, 3)}


def _hooked(lib: Any, module: Any, log: list, tag: str) -> Any:
    """Forward pre-hook and hook that log what PyTorch passes them (shapes, types, kwargs)."""
    def pre(mod: Any, args: tuple) -> None:
        log.append((tag, "pre", type(mod).__name__, [tuple(a.shape) for a in args]))

    def post(mod: Any, args: tuple, out: Any) -> Any:
        log.append((tag, "fwd", tuple(args[0].shape), tuple(out.shape), out.dtype is not None))
        return out * 1.5 if tag == "scale" else None

    module.register_forward_pre_hook(pre)
    module.register_forward_hook(post)
    return module


def make_model(lib: Any, kind: str, log: list, seed: int = 0) -> Any:
    """The same small module in either library (values from NumPy, hooks logging)."""
    nn = lib.nn
    if kind == "mlp":
        m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
        _hooked(lib, m[0], log, "lin0")
        shapes = MLP
    elif kind == "scaled":
        class Scaled(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.lin = nn.Linear(3, 3)
                self.register_buffer("s", lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64))

            def forward(self, x: Any) -> Any:
                return self.lin(x).sin() * self.s

        m = Scaled()
        _hooked(lib, m.lin, log, "scale")
        shapes = SCALED
    else:
        class Tied(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.a = nn.Linear(3, 3, bias=False)
                self.b = nn.Linear(3, 3, bias=False)
                self.b.weight = self.a.weight

            def forward(self, x: Any) -> Any:
                return self.b(self.a(x).tanh())

        m = Tied()
        _hooked(lib, m.b, log, "tied")
        shapes = TIED
    m = m.double()
    with lib.no_grad():
        for name, arr in _arrays(seed, shapes).items():
            dict(m.named_parameters())[name].copy_(lib.tensor(arr))
    return m


# ---------------------------------------------------------------- base functions


class Ctx:
    """What a base function sees: the library, the hook log, the models of this run."""

    def __init__(self, lib: Any) -> None:
        # built outside the transforms (PyTorch refuses `.data` writes inside them)
        self.lib, self.log = lib, []
        self._models = {kind: make_model(lib, kind, self.log) for kind in ("mlp", "scaled",
                                                                           "tied")}

    def model(self, kind: str) -> Any:
        return self._models[kind]


def _b_unary(c: Ctx, x: Any) -> Any:
    return x.sin() * x.exp()


def _b_bcast(c: Ctx, x: Any, y: Any) -> Any:
    return (x * y).tanh().sum(-1)


def _b_matmul(c: Ctx, x: Any, w: Any) -> Any:
    return c.lib.nn.functional.softplus(x @ w)


def _b_tuple_out(c: Ctx, x: Any, y: Any) -> Any:
    return x * y, (x + y).cos().sum()


def _b_dict_in(c: Ctx, d: Any) -> Any:
    return (d["b"] * d["a"]).softmax(-1)


def _b_dict_out(c: Ctx, x: Any) -> Any:
    return {"s": x.sum(0), "m": (x * x).mean()}


def _b_list_in(c: Ctx, xs: Any) -> Any:
    return xs[0] * xs[1].cos() + xs[2]


def _b_reduce(c: Ctx, x: Any) -> Any:
    return x.logsumexp(-1) + x.cumsum(0).var(0) + x.norm()


def _b_where(c: Ctx, x: Any) -> Any:
    return c.lib.where(x > 0, x, x * x * 0.5).clamp(max=1.0)


def _b_index(c: Ctx, x: Any) -> Any:
    lib = c.lib
    return x[..., [0, 2, 1]] * x.index_select(-1, lib.tensor([1, 1, 0])) + x.gather(
        -1, lib.tensor([[2, 0, 1], [1, 1, 0]]))


def _b_inplace(c: Ctx, x: Any) -> Any:
    y = x.clone()
    y.mul_(2.0)
    y.add_(x.sin())
    y[0] = y[0] * 3.0
    return y


def _b_views(c: Ctx, x: Any) -> Any:
    return x.t().reshape(6).flip(0).unsqueeze(1).expand(6, 2).narrow(1, 1, 1) * 2.0


def _b_conv(c: Ctx, x: Any, w: Any) -> Any:
    return c.lib.nn.functional.conv1d(x.unsqueeze(0), w, padding=1)[0].relu()


def _b_mlp(c: Ctx, p: Any, x: Any) -> Any:
    return c.lib.func.functional_call(c.model("mlp"), p, (x,))


def _b_scaled(c: Ctx, p: Any, x: Any) -> Any:
    m = c.model("scaled")
    return c.lib.func.functional_call(m, (p, {"s": m.s * 2.0}), x)


def _b_tied(c: Ctx, p: Any, x: Any) -> Any:
    return c.lib.func.functional_call(c.model("tied"), p, (x,), strict=True)


def _b_strict_missing(c: Ctx, p: Any, x: Any) -> Any:
    return c.lib.func.functional_call(c.model("mlp"), {"0.weight": p["0.weight"]}, (x,),
                                      strict=True)


def _b_mlp_kwargs(c: Ctx, p: Any, x: Any) -> Any:
    return c.lib.func.functional_call(c.model("mlp"), p, (), {"input": x}).sum(-1)


def _b_dropout(c: Ctx, x: Any) -> Any:
    return c.lib.nn.functional.dropout(x, 0.5, training=True) * x


def _b_rand_like(c: Ctx, x: Any) -> Any:
    return x + c.lib.rand_like(x)


def _b_tensor_hook(c: Ctx, x: Any) -> Any:
    y = x.sin()

    def hook(g: Any) -> Any:
        c.log.append(("tensor_hook", tuple(g.shape)))
        return g * 2.0

    y.register_hook(hook)
    return y * x


def _b_item(c: Ctx, x: Any) -> Any:
    return x * float(x.sum())


def _b_control(c: Ctx, x: Any) -> Any:
    return x.sin() if bool((x > 0).all()) else x.cos()


def _b_detach(c: Ctx, x: Any, y: Any) -> Any:
    return x * y.detach() + (x * 2.0).detach() * y


def _b_new_tensor(c: Ctx, x: Any) -> Any:
    out = x.new_zeros((3,))
    out[1] = x[0] * x[1]
    return out + x.sum()


BASES = {  # name: (fn, argument shapes, random?)
    "unary": (_b_unary, (S((3,)),), False),
    "bcast": (_b_bcast, (S((2, 3)), S((3,))), False),
    "matmul": (_b_matmul, (S((2, 3)), S((3, 2))), False),
    "tuple_out": (_b_tuple_out, (S((3,)), S((3,))), False),
    "dict_in": (_b_dict_in, ({"a": S((3,)), "b": S((2, 3))},), False),
    "dict_out": (_b_dict_out, (S((2, 2)),), False),
    "list_in": (_b_list_in, ([S((2,)), S((2,)), S((2,))],), False),
    "reduce": (_b_reduce, (S((2, 3)),), False),
    "where": (_b_where, (S((3,)),), False),
    "index": (_b_index, (S((2, 3)),), False),
    "inplace": (_b_inplace, (S((2, 2)),), False),
    "views": (_b_views, (S((3, 2)),), False),
    "conv": (_b_conv, (S((2, 4)), S((2, 2, 3))), False),
    "mlp": (_b_mlp, ({k: S(v) for k, v in MLP.items()}, S((3,))), False),
    "scaled": (_b_scaled, ({k: S(v) for k, v in SCALED.items()}, S((2, 3))), False),
    "tied": (_b_tied, ({k: S(v) for k, v in TIED.items()}, S((3,))), False),
    "strict_missing": (_b_strict_missing, ({k: S(v) for k, v in MLP.items()}, S((3,))), False),
    "mlp_kwargs": (_b_mlp_kwargs, ({k: S(v) for k, v in MLP.items()}, S((2, 3))), False),
    "dropout": (_b_dropout, (S((4,)),), True),
    "rand_like": (_b_rand_like, (S((3,)),), True),
    "tensor_hook": (_b_tensor_hook, (S((3,)),), False),
    "item": (_b_item, (S((3,)),), False),
    "control": (_b_control, (S((3,)),), False),
    "detach": (_b_detach, (S((3,)), S((3,))), False),
    "new_tensor": (_b_new_tensor, (S((2,)),), False),
}


# ---------------------------------------------------------------- transform layers


def pattern(lib: Any, t: Any) -> Any:
    """A fixed, value-independent cotangent/tangent of `t`'s (logical) shape."""
    n = 1
    for s in t.shape:
        n *= s
    return (lib.arange(n, dtype=t.dtype).reshape(tuple(t.shape)) * 0.37 + 0.2).cos()


def scalar(lib: Any, out: Any) -> Any:
    """A nonlinear scalar of every floating leaf of `out`."""
    leaves = [x for x in flatten(out)[0] if x.dtype.is_floating_point]
    total = leaves[0].sin().sum()
    for x in leaves[1:]:
        total = total + (x * 0.5).tanh().sum()
    return total


def _argnums(rng: Any, n: int) -> Any:
    if n == 1 or rng.random() < 0.5:
        a = int(rng.integers(0, n))
        return a - n if rng.random() < 0.3 else a
    k = int(rng.integers(1, n + 1))
    return tuple(int(v) for v in rng.permutation(n)[:k])


def _leaf_dim(rng: Any, nd: int, none_ok: bool) -> Any:
    if none_ok and rng.random() < 0.25:
        return None
    d = int(rng.integers(0, nd + 1))
    return d - nd - 1 if rng.random() < 0.4 else d


def _in_dim_tree(rng: Any, arg: Any) -> Any:
    """An in_dim for one argument: an int for all its leaves, None, or a nested structure."""
    leaves, spec = flatten(arg)
    if spec != "*" and rng.random() < 0.5:
        return unflatten([_leaf_dim(rng, len(s), True) for s in leaves], spec)
    if rng.random() < 0.2:
        return None
    return _leaf_dim(rng, min(len(s) for s in leaves), False)


def _batched_shapes(arg: Any, dim: Any, size: int) -> Any:
    """The argument's shapes once a vmap with `dim` (an int, None or a tree) is outside."""
    leaves, spec = flatten(arg)
    if dim is None or isinstance(dim, int):
        dims = [dim] * len(leaves)
    else:
        dims = flatten(dim)[0]
    out = []
    for s, d in zip(leaves, dims):
        if d is None:
            out.append(s)
            continue
        pos = d % (len(s) + 1)
        out.append(S(s[:pos] + (size,) + s[pos:]))
    return unflatten(out, spec)


def _out_dims(rng: Any, probe: Any) -> Any:
    if probe is None or rng.random() < 0.5:
        return int(rng.choice([0, 0, -1]))
    leaves, spec = flatten(probe)
    return unflatten([_leaf_dim(rng, len(s), False) for s in leaves], spec)


def gen_layer(rng: Any, shapes: tuple, random: bool, probe: Any) -> dict:
    kinds = ["vmap", "vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd",
             "hessian", "linearize"]
    kind = str(rng.choice(kinds))
    n = len(shapes)
    lay: dict = {"kind": kind}
    if kind == "vmap":
        size = int(rng.integers(1, 4))
        dims = [_in_dim_tree(rng, a) for a in shapes]
        if all(d is None for d in dims):
            dims[int(rng.integers(0, n))] = 0
        in_dims: Any = tuple(dims)
        if n == 1 and isinstance(dims[0], int) and rng.random() < 0.5:
            in_dims = dims[0]  # a bare int for every input
        lay.update(size=size, in_dims=in_dims, out_dims=_out_dims(rng, probe),
                   chunk_size=[None, None, 1, 2][int(rng.integers(0, 4))],
                   randomness=str(rng.choice(["error", "same", "different"]) if random
                                  else "error"))
        lay["shapes"] = tuple(_batched_shapes(a, d, size) for a, d in zip(
            shapes, dims if isinstance(in_dims, tuple) else [in_dims]))
        return lay
    lay["shapes"] = shapes
    if kind in ("grad", "grad_and_value", "jacrev", "jacfwd", "hessian"):
        lay["argnums"] = _argnums(rng, n)
    if kind in ("grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd"):
        lay["has_aux"] = bool(rng.random() < 0.3)
    if kind == "jacrev":
        lay["chunk_size"] = [None, None, 1, 3][int(rng.integers(0, 4))]
    if kind == "jacfwd":
        lay["randomness"] = str(rng.choice(["error", "same", "different"]) if random
                                else "error")
    if kind in ("jacrev", "jacfwd", "hessian"):
        lay["scalarize"] = bool(rng.random() < 0.5)
    if kind in ("jvp", "vjp", "linearize"):
        lay["both"] = bool(rng.random() < 0.5)
    return lay


def loop_vmap(torch: Any, f: Any, in_dims: Any, out_dims: Any) -> Any:
    """PyTorch's per-sample semantics of ``vmap``: a Python loop over the mapped dim."""
    def run(*args: Any) -> Any:
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(args)
        flat, spec = flatten(args)
        fdims: list = []
        for a, d in zip(args, dims):
            na = len(flatten(a)[0])
            fdims += flatten(d)[0] if not (d is None or isinstance(d, int)) else [d] * na
        size = next(x.shape[d] for x, d in zip(flat, fdims) if d is not None)
        outs = [f(*unflatten([x.select(d, i) if d is not None else x for x, d in
                              zip(flat, fdims)], spec)) for i in range(size)]
        leaves = [flatten(o)[0] for o in outs]
        ospec = flatten(outs[0])[1]
        odims = [out_dims] * len(leaves[0]) if isinstance(out_dims, int) else flatten(
            out_dims)[0]
        res = [torch.stack([lv[j] for lv in leaves], odims[j] % (leaves[0][j].dim() + 1))
               for j in range(len(leaves[0]))]
        return unflatten(res, ospec)

    return run


def apply_layer(lib: Any, f: Any, lay: dict, loop: bool) -> Any:
    F = lib.func
    kind = lay["kind"]
    if kind == "vmap":
        if loop:
            return loop_vmap(lib, f, lay["in_dims"], lay["out_dims"])
        return F.vmap(f, in_dims=lay["in_dims"], out_dims=lay["out_dims"],
                      randomness=lay["randomness"], chunk_size=lay["chunk_size"])
    aux = lay.get("has_aux", False)
    if kind in ("grad", "grad_and_value"):
        def g(*a: Any) -> Any:
            out = f(*a)
            s = scalar(lib, out)
            return (s, tree_map(lambda t: t * 2.0, out)) if aux else s

        return getattr(F, kind)(g, argnums=lay["argnums"], has_aux=aux)
    if kind in ("jacrev", "jacfwd", "hessian"):
        inner = (lambda *a: scalar(lib, f(*a))) if lay["scalarize"] else f
        if aux:
            def inner2(*a: Any, _f: Any = inner) -> Any:
                out = _f(*a)
                return out, tree_map(lambda t: t + 1.0, out)
        else:
            inner2 = inner
        if kind == "jacrev":
            return F.jacrev(inner2, argnums=lay["argnums"], has_aux=aux,
                            chunk_size=lay["chunk_size"])
        if kind == "jacfwd":
            return F.jacfwd(inner2, argnums=lay["argnums"], has_aux=aux,
                            randomness=lay["randomness"])
        return F.hessian(inner2, argnums=lay["argnums"])
    if kind == "vjp":
        def vj(*a: Any) -> Any:
            if aux:
                out, fn, ax = F.vjp(lambda *b: _with_aux(f(*b)), *a, has_aux=True)
            else:
                out, fn = F.vjp(f, *a)
            grads = fn(tree_map(lambda t: pattern(lib, t), out))
            res = (out, grads) if lay["both"] else grads
            return (res, ax) if aux else res

        return vj
    if kind == "jvp":
        def jv(*a: Any) -> Any:
            tans = tuple(tree_map(lambda t: pattern(lib, t), a))
            if aux:
                p, t, ax = F.jvp(lambda *b: _with_aux(f(*b)), tuple(a), tans, has_aux=True)
                return ((p, t) if lay["both"] else t), ax
            p, t = F.jvp(f, tuple(a), tans)
            return (p, t) if lay["both"] else t

        return jv

    def lin(*a: Any) -> Any:  # linearize (the reference loop: its meaning, a jvp per call)
        out, fn = F.linearize(f, *a) if not loop else (f(*a), lambda *t: F.jvp(f, a, t)[1])
        t = fn(*tree_map(lambda t: pattern(lib, t), a))
        return (out, t) if lay["both"] else t

    return lin


def _with_aux(out: Any) -> tuple:
    return out, tree_map(lambda t: t * 3.0, out)


# ---------------------------------------------------------------- cases

def build(k: int, torch: Any) -> dict:
    rng = np.random.default_rng(k)
    if k % 8 == 7:
        return {"k": k, "ensemble": True, "model": str(rng.choice(["mlp", "scaled"])),
                "n": int(rng.integers(1, 4)), "grad": bool(rng.random() < 0.5),
                "x_batched": bool(rng.random() < 0.5),
                "chunk_size": [None, 1, 2][int(rng.integers(0, 3))]}
    names = sorted(BASES)
    name = names[int(rng.integers(0, len(names)))]
    fn, shapes, random = BASES[name]
    depth = int(rng.integers(1, 4))
    layers: list = []
    work = 1
    for _ in range(depth):
        probe = _probe(torch, name, layers, shapes)
        lay = gen_layer(rng, shapes, random, probe)
        work *= _basis(lay, shapes)
        if work > MAX_BASIS:
            break  # nested Jacobians of the module's 26 parameters: sizes multiply
        layers.append(lay)
        shapes = lay["shapes"]
    f32 = bool(rng.random() < 0.15)
    inputs = tree_map(lambda s: rng.standard_normal(s) * 0.8, shapes)
    if f32:
        inputs = tree_map(lambda a: a.astype(np.float32), inputs)
    return {"k": k, "ensemble": False, "base": name, "layers": layers, "inputs": inputs,
            "random": random, "f32": f32}


MAX_BASIS = 60


def _basis(lay: dict, shapes: tuple) -> int:
    """How many vmapped rows a Jacobian layer runs (its one-hot basis), else 1."""
    if lay["kind"] not in ("jacrev", "jacfwd", "hessian"):
        return 1
    a = lay["argnums"]
    nums = [a] if isinstance(a, int) else list(a)
    n = sum(int(np.prod(s)) for i in nums for s in flatten(shapes[i])[0])
    return n * n if lay["kind"] == "hessian" else n


def _probe(torch: Any, name: str, layers: list, shapes: tuple) -> Any:
    """The output shapes of the function built so far, per sample (for pytree out_dims)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out, _ = run_case(torch, {"base": name, "layers": layers, "random": False,
                                      "inputs": tree_map(lambda s: np.ones(s) * 0.3, shapes)},
                              loop=False)
        return tree_map(lambda t: S(tuple(t.shape)), out)
    except Exception:  # noqa: BLE001 - a failing prefix: out_dims stay ints
        return None


def _canonical(lay: dict, shapes: tuple) -> dict:
    """The layer with non-negative argnums (torch.func's jacfwd with a negative argnum under
    an outer transform returns zeros: ``jacrev(jacfwd(f, argnums=-1))``)."""
    a = lay.get("argnums")
    if a is None:
        return lay
    n = len(lay["shapes"])
    return dict(lay, argnums=a % n if isinstance(a, int) else tuple(v % n for v in a))


def run_case(lib: Any, case: dict, loop: bool, canonical: bool = False) -> tuple[Any, list]:
    """(outputs, hook log) of the case's program in `lib` (`loop`: every vmap a Python loop;
    `canonical`: argnums made non-negative)."""
    ctx = Ctx(lib)
    fn = BASES[case["base"]][0]
    f: Any = lambda *a: fn(ctx, *a)  # noqa: E731
    for lay in case["layers"]:
        f = apply_layer(lib, f, _canonical(lay, ()) if canonical else lay, loop)
    args = tree_map(lambda a: lib.tensor(a), case["inputs"])
    lib.manual_seed(case.get("k", 0))
    out = f(*args)
    return out, ctx.log


def run_ensemble(lib: Any, case: dict) -> tuple[Any, list]:
    log: list = []
    models = [make_model(lib, case["model"], log, seed=s) for s in range(case["n"])]
    params, buffers = lib.func.stack_module_state(models)
    meta = {k: (tuple(v.shape), v.requires_grad) for k, v in params.items()}
    base = models[0]
    x = lib.tensor(np.random.default_rng(case["k"]).standard_normal(
        (case["n"], 2, 3) if case["x_batched"] else (2, 3)))

    def fmodel(p: Any, b: Any, x: Any) -> Any:
        return lib.func.functional_call(base, (p, b), (x,))

    f: Any = fmodel
    if case["grad"]:
        f = lib.func.grad(lambda p, b, x: fmodel(p, b, x).sin().sum())
    out = lib.func.vmap(f, in_dims=(0, 0, 0 if case["x_batched"] else None),
                        chunk_size=case["chunk_size"])(params, buffers, x)
    return (out, meta), log


# ---------------------------------------------------------------- comparison


def _outcome(lib: Any, case: dict, loop: bool = False, canonical: bool = False) -> tuple:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if case["ensemble"]:
                return "ok", *run_ensemble(lib, case)
            return "ok", *run_case(lib, case, loop, canonical)
    except Exception as exc:  # noqa: BLE001 - the exception type is compared
        return "raise", exc, None


def describe(out: Any) -> tuple[Any, list]:
    """(structure, leaves as NumPy or plain values) of an output pytree."""
    leaves, spec = flatten(out)
    vals = []
    for x in leaves:
        if hasattr(x, "detach") and hasattr(x, "dtype"):
            x = x.detach()
            if getattr(x, "_is_zerotensor", lambda: False)():  # PyTorch's ZeroTensor
                x = x.new_zeros(x.shape)
            vals.append(np.asarray(x.numpy()))
        else:
            vals.append(x)
    return spec, vals


def differ(a: Any, b: Any, dtypes: bool = True, f32: bool = False) -> str | None:
    sa, va = describe(a)
    sb, vb = describe(b)
    if sa != sb:
        return f"structure {sa}, PyTorch {sb}"
    for i, (x, y) in enumerate(zip(va, vb)):
        if isinstance(x, np.ndarray) != isinstance(y, np.ndarray):
            return f"leaf {i}: {type(x).__name__}, PyTorch {type(y).__name__}"
        if not isinstance(x, np.ndarray):
            if x != y:
                return f"leaf {i}: {x!r}, PyTorch {y!r}"
            continue
        if x.shape != y.shape or (dtypes and x.dtype != y.dtype):
            return f"leaf {i}: {x.dtype}{x.shape}, PyTorch {y.dtype}{y.shape}"
        tol = 1e-4 if f32 or np.float32 in (x.dtype, y.dtype) else 1e-7
        if not np.allclose(x, y, rtol=tol, atol=tol, equal_nan=True):
            return f"leaf {i}: values differ by {np.nanmax(np.abs(x - y))}"
    return None


def _agrees_elsewhere(torch: Any, case: dict, got: tuple) -> bool:
    """hookgrad's result equals PyTorch's where torch.func refuses or is wrong: the program
    with non-negative argnums, or with every vmap a loop (PyTorch's per-sample meaning)."""
    if got[0] != "ok" or case["ensemble"]:
        return False
    refs = [(False, True)] + ([(True, False), (True, True)] if not case["random"] else [])
    for loop, canonical in refs:
        ref = _outcome(torch, case, loop=loop, canonical=canonical)
        # values only: torch.func's dtype can be off too (a float32 program's jacfwd with
        # non-negative argnums came back float64)
        if ref[0] == "ok" and differ(got[1], ref[1], False, case.get("f32", False)) is None and (
                loop or got[2] == ref[2]):  # a loop calls hooks once per sample
            return True
    if case["random"]:  # the loop draws other numbers: its shapes and structure only
        ref = _outcome(torch, case, loop=True)
        if ref[0] == "ok" and _same_layout(got[1], ref[1]):
            return True
    return False


def _same_layout(a: Any, b: Any) -> bool:
    """Same pytree structure, and leaves of the same shapes (values not compared)."""
    (sa, va), (sb, vb) = describe(a), describe(b)
    return sa == sb and all(np.shape(x) == np.shape(y) for x, y in zip(va, vb))


# torch.func refusals that are implementation limits, where hookgrad returns and no other
# PyTorch program gives a reference (random cases): linearize traces with make_fx inside a
# forward-AD level of its own, so a linearize inside linearize cannot run in PyTorch
TORCH_LIMITS = ("Nested forward mode AD is not supported",
                # linearize under vmap: its make_dual has no batching rule in PyTorch
                "Batching rule not implemented for aten::_make_dual")


def _no_reference(case: dict) -> bool:
    """A random program with ``linearize`` inside a differentiating layer: torch.func's
    linearize output does not depend on the primals under an outer transform (the traced jvp
    holds them as constants: zeros), and the reference that replaces it by ``jvp`` draws other
    random numbers, so no PyTorch program gives hookgrad's (the chain rule's) values."""
    kinds = [lay["kind"] for lay in case["layers"]] if not case["ensemble"] else []
    return case.get("random", False) and "linearize" in kinds and any(
        k not in ("vmap", "linearize") for k in kinds[kinds.index("linearize") + 1:])


def check(k: int, torch: Any) -> str | None:
    """None when case `k` agrees with torch.func (or with PyTorch's loop), else what differs."""
    case = build(k, torch)
    want = _outcome(torch, case)
    got = _outcome(hookgrad, case)
    name = describe_case(case)
    if want[0] == "raise":
        if got[0] == "raise" and type(got[1]).__name__ == type(want[1]).__name__:
            return None
        if _agrees_elsewhere(torch, case, got):
            return None
        if got[0] == "ok" and any(m in str(want[1]) for m in TORCH_LIMITS):
            return None
        return (f"{name}: hookgrad {_show(got)}; torch.func raised "
                f"{type(want[1]).__name__}: {str(want[1])[:200]}")
    if got[0] == "raise":
        return f"{name}: hookgrad raised {type(got[1]).__name__}: {str(got[1])[:300]}"
    d = differ(got[1], want[1], f32=case.get("f32", False))
    if d is None and got[2] != want[2]:
        d = f"hook log {got[2]}, PyTorch {want[2]}"
    if d and not _no_reference(case) and not _agrees_elsewhere(torch, case, got):
        return f"{name}: {d}"
    return None


def _show(o: tuple) -> str:
    return f"raised {type(o[1]).__name__}: {str(o[1])[:200]}" if o[0] == "raise" else "returned"


def describe_case(case: dict) -> str:
    if case["ensemble"]:
        return (f"case {case['k']}: ensemble {case['model']} n={case['n']} grad={case['grad']} "
                f"x_batched={case['x_batched']} chunk={case['chunk_size']}")
    lays = [{k: v for k, v in lay.items() if k != "shapes"} for lay in case["layers"]]
    shapes = tree_map(lambda a: a.shape, case["inputs"])
    return f"case {case['k']}: {case['base']} {lays} inputs={shapes}"
