"""Run one scenario on torch and on hookgrad and compare values and gradients (census tests)."""

from __future__ import annotations

import numpy as np

import hookgrad


def _arr(x):
    return np.asarray(x.detach().tolist() if hasattr(x, "detach") else x.tolist())


def same(a, b, tol=1e-5):
    """Equal values (nan-aware) and shapes of a hookgrad result `a` and a torch result `b`."""
    return (tuple(a.shape) == tuple(b.shape)
            and np.allclose(_arr(a), _arr(b), rtol=tol, atol=tol, equal_nan=True))


def run_both(torch, fn, *arrays, grad=True):
    """fn(lib, tensors) on both libraries; compare outputs and input gradients."""
    def make(lib):
        return [lib.tensor(a, requires_grad=grad and np.asarray(a).dtype.kind == "f")
                for a in arrays]
    ht, tt = make(hookgrad), make(torch)
    rh, rt = fn(hookgrad, ht), fn(torch, tt)
    if isinstance(rt, (tuple, list)):
        assert len(rh) == len(rt)
        for a, b in zip(rh, rt):
            assert same(a, b), (a, b)
        return
    assert same(rh, rt), (rh, rt)
    if rt.requires_grad:
        w = np.random.RandomState(0).randn(*rt.shape)
        (rt * torch.tensor(w, dtype=rt.dtype)).sum().backward()
        (rh * hookgrad.tensor(w, dtype=rh.dtype)).sum().backward()
        for a, b in zip(ht, tt):
            if b.grad is not None:
                assert a.grad is not None and same(a.grad, b.grad), (a.grad, b.grad)


def error_of(fn, text=str):
    """(exception type name, text(message)) of what ``fn()`` raises, or None."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return type(e).__name__, text(str(e))
    return None
