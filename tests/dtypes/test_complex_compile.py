"""Complex values under hookgrad.compile and compiled autograd: the same values and gradients
as eager (and as PyTorch), on every call of a compiled function."""

from __future__ import annotations

import numpy as np

import hookgrad
from tests.dtypes._compare import outcome


def _rope(lib, x, t):
    freqs = lib.polar(lib.ones_like(t), t)
    xc = lib.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
    return (lib.view_as_real(xc * freqs).flatten(-2) ** 2).sum() + (xc.exp() / freqs).abs().sum()


X = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
T = np.random.default_rng(2).standard_normal((3, 2)).astype(np.float32)


def _eager(lib):
    x = lib.tensor(X, requires_grad=True)
    loss = _rope(lib, x, lib.tensor(T))
    loss.backward()
    return loss, x.grad


def _compiled_calls(backend):
    fn = hookgrad.compile(lambda x, t: _rope(hookgrad, x, t), backend=backend)
    out = []
    for _ in range(3):  # the first call traces, later ones run the compiled program
        x = hookgrad.tensor(X, requires_grad=True)
        loss = fn(x, hookgrad.tensor(T))
        loss.backward()
        out.append((loss, x.grad))
    return out


def test_compiled_function_matches_eager_and_torch(torch):
    want = outcome(torch, _eager)
    assert outcome(hookgrad, _eager) == want
    for backend in ("inductor", "aot_eager", "eager"):
        got = outcome(hookgrad, lambda lib, b=backend: _compiled_calls(b))
        assert got == ("ok", ("list", [want[1]] * 3)), backend


def test_compiled_autograd_matches_eager(torch):
    def run(lib):
        with lib._dynamo.compiled_autograd._enable(lib.compile(backend="eager")):
            return _eager(lib)

    # (PyTorch's compiled autograd refuses this program: its fake tensors meet a real one)
    assert outcome(hookgrad, run) == outcome(torch, _eager)
