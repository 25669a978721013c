"""torch.func transforms and their compositions with vmap, against PyTorch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad
from tests.func.test_vmap import _close, _err, _np

RNG = np.random.default_rng(1)
XS = RNG.standard_normal((6, 1, 8, 8)).astype(np.float32)
YS = np.array([0, 2, 1, 3, 0, 1])


def _mlp(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Flatten(), lib.nn.Linear(64, 16), lib.nn.Tanh(),
                          lib.nn.Linear(16, 4))
    return _same_params(lib, m)


def _cnn(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Conv2d(1, 3, 3), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
                          lib.nn.Flatten(), lib.nn.Linear(27, 4))
    return _same_params(lib, m)


def _same_params(lib, m):
    rng = np.random.default_rng(7)
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
    return m


def _per_sample(lib, make):
    model = make(lib)
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def loss(p, b, x, y):
        out = lib.func.functional_call(model, (p, b), (x.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, y.unsqueeze(0))

    g = lib.func.vmap(lib.func.grad(loss), in_dims=(None, None, 0, 0))(
        params, buffers, lib.tensor(XS), lib.tensor(YS))
    return _np(g)


@pytest.mark.oracle
@pytest.mark.parametrize("make", [_mlp, _cnn])
def test_per_sample_grads_match_torch(torch, make):
    _close(_per_sample(hookgrad, make), _per_sample(torch, make), 1e-4)


def _ensemble(lib):
    models = [_mlp(lib) for _ in range(3)]
    for i, m in enumerate(models):
        with lib.no_grad():
            for p in m.parameters():
                p.mul_(1.0 + i)
    params, buffers = lib.func.stack_module_state(models)
    base = _mlp(lib).to("meta") if False else models[0]

    def f(p, b, x):
        return lib.func.functional_call(base, (p, b), (x,))

    x = lib.tensor(XS)
    same = lib.func.vmap(f, in_dims=(0, 0, None))(params, buffers, x)
    diff = lib.func.vmap(f, in_dims=(0, 0, 0))(params, buffers, x[:3].unsqueeze(1))
    return [_np(same), _np(diff), [bool(v.requires_grad) for v in params.values()]]


@pytest.mark.oracle
def test_ensembling_matches_torch(torch):
    a, b = _ensemble(hookgrad), _ensemble(torch)
    assert a[2] == b[2]
    _close(a[:2], b[:2], 1e-4)


def _jacobians(lib):
    fn = lib.func
    x = lib.tensor([0.3, -1.2, 2.0])
    y = lib.tensor([[1.0, 0.5], [-0.5, 2.0]])
    f2 = lambda a, b: (a.sin() * a.sum(), (b @ b).tanh())  # noqa: E731
    fd = lambda d: (d["a"].exp() * d["b"]).sum()  # noqa: E731
    aux = lambda a: (a.sin(), {"n": a.cos().sum()})  # noqa: E731
    out = [
        fn.jacrev(f2, argnums=(0, 1))(x, y), fn.jacfwd(f2, argnums=(0, 1))(x, y),
        fn.jacrev(lambda a: a.sin() * a, chunk_size=2)(x),
        fn.jacrev(aux, has_aux=True)(x), fn.jacfwd(aux, has_aux=True)(x),
        fn.grad(fd)({"a": x, "b": x * 2}), fn.grad_and_value(fd)({"a": x, "b": x}),
        fn.hessian(lambda a: (a.sin() * a).sum())(x),
        fn.hessian(lambda a, b: (a.exp() * b).sum(), argnums=1)(x, x),
        fn.jacrev(fn.jacrev(lambda a: a.tanh()))(x),
        fn.vmap(fn.jacrev(lambda a: a.sin() * a.sum()))(y),
        fn.jacrev(fn.vmap(lambda a: a.sin() * a.sum()))(y),
        fn.vmap(fn.hessian(lambda a: (a.sin()).sum()))(y),
        fn.grad(lambda a: fn.vmap(lambda r: (r * a).sum())(y).sum())(x[:2]),
        fn.grad(lambda a: fn.vmap(fn.grad(lambda r: (r * a).sin().sum()))(y).sum())(x[:2]),
        fn.jacrev(fn.vmap(fn.grad(lambda r: (r * r).tanh().sum())))(y),
        fn.vmap(fn.jvp, in_dims=(None, None, 0))(lambda a: a.sin(), (x,), (lib.eye(3),)),
        fn.jvp(lambda a: fn.vmap(lambda r: r.exp())(a), (y,), (y,)),
    ]
    with warnings.catch_warnings():  # torch's linearize traces with make_fx, which warns
        warnings.simplefilter("ignore")
        out.append(fn.linearize(lambda a: a.sin(), x)[1](lib.ones(3)))
    _, vjp_fn = fn.vjp(lambda a, b: {"o": a * b}, x, x)
    out.append(vjp_fn({"o": lib.ones(3)}))
    out.append(fn.vmap(vjp_fn)({"o": lib.eye(3)}))
    return _np(_flatten(out))


def _flatten(x):
    if isinstance(x, (tuple, list)):
        return [e for v in x for e in _flatten(v)]
    if isinstance(x, dict):
        return [e for k in sorted(x) for e in _flatten(x[k])]
    return [x]


@pytest.mark.oracle
def test_transforms_and_compositions_match_torch(torch):
    _close(_jacobians(hookgrad), _jacobians(torch), 1e-4)


ERRORS = {
    "grad_nonscalar": lambda lib: lib.func.grad(lambda a: a * 2)(lib.ones(3)),
    "grad_argnums": lambda lib: lib.func.grad(lambda a: a.sum(), argnums=2)(lib.ones(3)),
    "grad_aux": lambda lib: lib.func.grad(lambda a: a.sum(), has_aux=True)(lib.ones(3)),
    "grad_int": lambda lib: lib.func.grad(lambda a: a.sum())(lib.ones(3, dtype=lib.int64)),
    "jvp_tuple": lambda lib: lib.func.jvp(lambda a: a, lib.ones(2), lib.ones(2)),
    "fc_dup": lambda lib: lib.func.functional_call(
        lib.nn.Linear(2, 2), ({"weight": lib.ones(2, 2)}, {"weight": lib.ones(2, 2)}),
        (lib.ones(2),)),
    "fc_strict": lambda lib: lib.func.functional_call(
        lib.nn.Linear(2, 2), {"weight": lib.ones(2, 2)}, (lib.ones(2),), strict=True),
    "stack_empty": lambda lib: lib.func.stack_module_state([]),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_transform_errors_match_torch(torch, name):
    got, want = _err(hookgrad, ERRORS[name]), _err(torch, ERRORS[name])
    assert want is not None and got is want


class _Tied:
    @staticmethod
    def build(lib):
        class T(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = lib.nn.Linear(2, 2, bias=False)
                self.b = lib.nn.Linear(2, 2, bias=False)
                self.b.weight = self.a.weight
                with lib.no_grad():
                    self.a.weight.copy_(lib.tensor([[0.5, -1.0], [2.0, 0.25]]))

            def forward(self, x):
                return self.b(self.a(x))
        return T()


@pytest.mark.oracle
def test_functional_call_tied_weights_and_hooks(torch):
    def run(lib):
        m = _Tied.build(lib)
        log = []
        m.a.register_forward_pre_hook(lambda mod, args: log.append(("pre", tuple(args[0].shape))))
        m.a.register_forward_hook(lambda mod, a, o: log.append(("fwd", tuple(o.shape))))
        x = lib.ones(3, 2)
        w = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
        tied = lib.func.functional_call(m, {"a.weight": w}, (x,))
        untied = lib.func.functional_call(m, {"a.weight": w}, (x,), tie_weights=False)
        err = _err(lib, lambda lib: lib.func.functional_call(
            m, {"a.weight": w, "b.weight": w * 2}, (x,)))
        vm = lib.func.vmap(lambda r: lib.func.functional_call(m, {"a.weight": w}, (r,)))(x)
        return _np([tied, untied, vm]), err, log

    (a, ea, la), (b, eb, lb) = run(hookgrad), run(torch)
    _close(a[:2], b[:2])
    _close(a[2], b[2])
    assert ea is eb and la == lb


def _hooked(lib, saved_hooks):
    log = []

    def f(x):
        y = x * x
        y.register_hook(lambda g: log.append(("hook", tuple(g.shape))))
        if saved_hooks:
            with lib.autograd.graph.saved_tensors_hooks(
                    lambda t: (log.append("pack"), t)[1], lambda t: (log.append("unpack"), t)[1]):
                z = y.exp()
        else:
            z = y.exp()
        return z.sum()

    try:
        g = lib.func.grad(f)(lib.tensor([0.5, -0.25]))
    except RuntimeError as e:
        return type(e), log
    return _np(g), log


@pytest.mark.oracle
def test_tensor_hooks_under_grad_match_torch(torch):
    (a, la), (b, lb) = _hooked(hookgrad, False), _hooked(torch, False)
    _close(a, b)
    assert la == lb


@pytest.mark.oracle
def test_saved_tensor_hooks_under_grad_fire(torch):
    """Departure: PyTorch refuses saved-tensor hooks under torch.func.grad (an implementation
    limit); hookgrad's grad runs on the tape, so the hooks fire as under autograd.grad."""
    assert _hooked(torch, True)[0] is RuntimeError
    g, log = _hooked(hookgrad, True)
    _close(g, _hooked(torch, False)[0])
    assert log.count("pack") == 1 and log.count("unpack") == 1
