"""``autograd.functional`` and ``hookgrad.func`` against PyTorch on small functions and an MLP loss."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import hookgrad

RNG = np.random.default_rng(0)
W1 = RNG.normal(size=(3, 4)) * 0.5
W2 = RNG.normal(size=(4, 2)) * 0.5
X = RNG.normal(size=(5, 3))
Y = np.array([0, 1, 1, 0, 1])


def _F(lib):
    return importlib.import_module(lib.__name__ + ".autograd.functional")


def _as_list(x):
    if isinstance(x, tuple):
        return [_as_list(e) for e in x]
    return np.asarray(x.detach().numpy(), dtype=float).round(6).tolist()


def _mlp_loss(lib):
    x, y = lib.tensor(X), lib.tensor(Y)

    def loss(w1, w2):
        h = lib.tanh(x @ w1)
        logits = h @ w2
        return -lib.log_softmax(logits, dim=1).gather(1, y.unsqueeze(1)).mean()

    return loss


FUNCS = {
    "cube": (lambda lib: (lambda x: (x * x * x).sum()), [np.array([0.5, -1.0, 2.0])]),
    "exp_prod": (lambda lib: (lambda a, b: (a.exp() * b).sum()),
                 [np.array([0.1, 0.2]), np.array([1.0, -1.0])]),
    "vector": (lambda lib: (lambda x: x.exp() * 2), [np.array([1.0, 2.0])]),
    "mlp": (_mlp_loss, [W1, W2]),
}


def _run(lib, name, what):
    make, arrays = FUNCS[name]
    fn = make(lib)
    args = tuple(lib.tensor(a) for a in arrays)
    inputs = args if len(args) > 1 else args[0]
    F = _F(lib)
    if what == "jacobian":
        return _as_list(F.jacobian(fn, inputs))
    if what == "jacobian_fwd":
        return _as_list(F.jacobian(fn, inputs, strategy="forward-mode", vectorize=True))
    if what == "hessian":
        return _as_list(F.hessian(fn, inputs))
    vs = tuple(lib.ones_like(a) for a in args)
    v = vs if len(vs) > 1 else vs[0]
    if what in ("hvp", "vhp", "jvp"):
        return _as_list(getattr(F, what)(fn, inputs, v))
    out = fn(*args)
    cot = lib.ones_like(out)
    return _as_list(F.vjp(fn, inputs, cot))


CASES = [
    ("cube", "jacobian"), ("cube", "hessian"), ("cube", "hvp"), ("cube", "vhp"),
    ("cube", "vjp"), ("cube", "jvp"), ("cube", "jacobian_fwd"),
    ("exp_prod", "jacobian"), ("exp_prod", "hessian"), ("exp_prod", "hvp"),
    ("vector", "jacobian"), ("vector", "jvp"), ("vector", "vjp"), ("vector", "jacobian_fwd"),
    ("mlp", "jacobian"), ("mlp", "hessian"), ("mlp", "hvp"), ("mlp", "vjp"),
]


@pytest.mark.oracle
@pytest.mark.parametrize("name,what", CASES)
def test_functional_matches_torch(torch, name, what):
    _close(_run(hookgrad, name, what), _run(torch, name, what))


def _flat(x):
    if isinstance(x, list):
        return [y for e in x for y in _flat(e)]
    return [float(x)]


def _skeleton(x):
    return [_skeleton(e) for e in x] if isinstance(x, list) else 0


def _close(a, b):
    assert _skeleton(a) == _skeleton(b)
    np.testing.assert_allclose(_flat(a), _flat(b), rtol=1e-5, atol=1e-6)


def _errors(lib):
    F = _F(lib)
    x = lib.tensor([1.0, 2.0])
    out = []
    for call in (
        lambda: F.jacobian(lambda x: x.exp(), x, strategy="bad"),
        lambda: F.jacobian(lambda x: x.exp(), x, strategy="forward-mode"),
        lambda: F.vjp(lambda x: x.exp(), x),
        lambda: F.hessian(lambda x: x.exp(), x),
        lambda: F.jacobian(lambda x: 3, x),
        lambda: F.jacobian(lambda x: lib.ones(2), x, strict=True),
    ):
        try:
            call()
            out.append(None)
        except Exception as e:  # noqa: BLE001
            out.append((type(e).__name__, str(e)))
    return out


@pytest.mark.oracle
def test_functional_errors_match_torch(torch):
    assert _errors(hookgrad) == _errors(torch)


def _func_transforms(lib):
    func = importlib.import_module(lib.__name__ + ".func")
    f = lambda x: (x.sin() * x).sum()  # noqa: E731
    x = lib.tensor([0.3, -1.2, 2.0])
    g = func.grad(f)(x)
    gv = func.grad_and_value(f)(x)
    jr = func.jacrev(lambda x: x.sin() * x)(x)
    jf = func.jacfwd(lambda x: x.sin() * x)(x)
    h = func.hessian(f)(x)
    # forward-over-reverse through ops that save their *result* (exp, tanh, sigmoid, softmax)
    h2 = func.hessian(lambda x: (x.exp() * x.tanh() + x.sigmoid() * lib.softmax(x, 0)).sum())(x)
    out, vjp_fn = func.vjp(lambda x: x.sin() * x, x)
    (vj,) = vjp_fn(lib.ones(3))
    jo, jt = func.jvp(lambda x: x.sin() * x, (x,), (lib.ones(3),))
    return [_as_list(t) for t in (g, gv[0], gv[1], jr, jf, h, h2, out, vj, jo, jt)]


@pytest.mark.oracle
def test_func_transforms_match_torch(torch):
    for a, b in zip(_func_transforms(hookgrad), _func_transforms(torch)):
        _close(a, b)


def _functional_call(lib):
    func = importlib.import_module(lib.__name__ + ".func")
    model = lib.nn.Linear(3, 2)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(W1[:, :2].T.copy()))
        model.bias.zero_()
    x = lib.tensor(X, dtype=lib.float32)
    new_w = lib.tensor(W1[:, 2:].T.repeat(2, 0)[:2].copy(), dtype=lib.float32,
                       requires_grad=True)
    out = func.functional_call(model, {"weight": new_w}, (x,))
    (g,) = lib.autograd.grad(out.sum(), new_w)
    restored = model(x)
    grads = func.grad(lambda w: func.functional_call(model, {"weight": w}, x).pow(2).sum())(
        new_w.detach())
    return [_as_list(t) for t in (out, g, restored, grads)]


@pytest.mark.oracle
def test_functional_call_matches_torch_and_restores_parameters(torch):
    for a, b in zip(_functional_call(hookgrad), _functional_call(torch)):
        _close(a, b)
