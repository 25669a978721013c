"""One-pass kernels replacing impls in generated code (NOTE [Primitive kernels] in
hookgrad/compile/codegen/nnkernels.py): float32 GELU forward and backward.

Compiled values and gradients are compared with PyTorch's eager ones (the oracle) and
hookgrad's eager ones, within float32 rounding (the kernels' tanh is a few ulp from NumPy's);
inputs the kernels do not take (float64, ``approximate="tanh"``, a strided view) run the impl
and stay bit-equal to eager.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hookgrad
from hookgrad.compile.codegen import kernels, nnkernels
from hookgrad.compile.cache.frame import CACHES

RNG = np.random.default_rng(5)
X = (RNG.normal(size=(6, 40)) * 3).astype(np.float32)
X[0, :4] = [0.0, -0.0, 12.0, -12.0]  # zeros and the saturated ends of erf


@pytest.fixture
def numba_on():
    pytest.importorskip("numba")
    kernels.set_numba(True)
    yield
    kernels.set_numba(None)


def _gelu_fn(lib: Any, approximate: str, strided: bool) -> Any:
    def fn(x: Any) -> Any:
        h = x * 1.5
        if strided:
            h = h[:, ::2]
        return (lib.nn.functional.gelu(h, approximate=approximate) * h).sum()
    return fn


def _run(lib: Any, fn: Any, dtype: Any, calls: int = 3) -> list:
    out = []
    for i in range(calls):
        x = lib.tensor(X + i, dtype=dtype, requires_grad=True)
        y = fn(x)
        y.backward()
        out.append((y.detach().numpy().copy(), x.grad.numpy().copy()))
    return out


def _close(got: list, want: list, exact: bool) -> None:
    for (y, g), (y0, g0) in zip(got, want):
        if exact:
            assert y.tobytes() == y0.tobytes() and g.tobytes() == g0.tobytes()
        else:
            np.testing.assert_allclose(y, y0, rtol=2e-6, atol=1e-5)
            np.testing.assert_allclose(g, g0, rtol=2e-6, atol=2e-6)


@pytest.mark.usefixtures("numba_on")
def test_float32_gelu_runs_the_kernels_and_matches_eager(torch: Any) -> None:
    fn = _gelu_fn(hookgrad, "none", False)
    want = _run(hookgrad, fn, hookgrad.float32)
    _close(_run(torch, _gelu_fn(torch, "none", False), torch.float32), want, exact=False)
    for backend in ("aot_eager", "inductor"):
        hookgrad._dynamo.reset()
        _close(_run(hookgrad, hookgrad.compile(fn, backend=backend), hookgrad.float32), want,
               exact=False)
        entry = CACHES[fn.__code__][0]
        names = {getattr(v, "__qualname__", "") for v in entry.artifact.fwd.__globals__.values()}
        assert any("_gelu.<locals>.gelu" in n for n in names), backend
        (variant,) = entry.artifact.variants.values()
        assert variant is not False  # the generated backward passed its check


@pytest.mark.usefixtures("numba_on")
@pytest.mark.parametrize("dtype, approximate, strided", [
    ("float64", "none", False), ("float32", "tanh", False), ("float32", "none", True)])
def test_inputs_the_kernels_do_not_take_run_the_impl(dtype: str, approximate: str,
                                                     strided: bool) -> None:
    fn = _gelu_fn(hookgrad, approximate, strided)
    want = _run(hookgrad, fn, getattr(hookgrad, dtype))
    hookgrad._dynamo.reset()
    got = _run(hookgrad, hookgrad.compile(fn, backend="inductor"), getattr(hookgrad, dtype))
    _close(got, want, exact=True)


def test_without_numba_generated_code_calls_the_impl() -> None:
    kernels.set_numba(False)
    try:
        prim = type("P", (), {"name": "gelu", "impl": staticmethod(len)})
        assert nnkernels.fast_impl(prim) is len
    finally:
        kernels.set_numba(None)


def _ln_fn(lib: Any, width: int) -> Any:
    ln = lib.nn.LayerNorm(width)
    with lib.no_grad():
        ln.weight.copy_(lib.linspace(0.5, 1.5, width))
        ln.bias.copy_(lib.linspace(-0.2, 0.3, width))

    def fn(x: Any) -> Any:
        h = x[:, :width] * 1.5
        return (ln(h) * h).sum()
    return fn, ln


def _ln_run(lib: Any, width: int, backend: str | None) -> list:
    fn, ln = _ln_fn(lib, width)
    run = fn if backend is None else hookgrad.compile(fn, backend=backend)
    out = []
    for i in range(3):
        x = lib.tensor(X * (1 + i), requires_grad=True)
        y = run(x)
        y.backward()
        out.append([v.detach().numpy().copy() for v in (y, x.grad, ln.weight.grad, ln.bias.grad)])
        ln.weight.grad = ln.bias.grad = None
    return out


@pytest.mark.usefixtures("numba_on")
@pytest.mark.parametrize("width", [40, 6])  # 6: short rows keep eager's emulated FMAs
def test_layer_norm_backward_kernel_matches_eager(torch: Any, monkeypatch: Any,
                                                  width: int) -> None:
    loaded = []
    real = nnkernels.load_kernel
    monkeypatch.setattr(nnkernels, "load_kernel", lambda src, name: loaded.append(src) or
                        real(src, name))
    want = _ln_run(hookgrad, width, None)
    for got in (_ln_run(torch, width, None), _ln_run(hookgrad, width, "inductor")):
        for vals, vals0 in zip(got, want):
            for v, v0 in zip(vals, vals0):
                np.testing.assert_allclose(v, v0, rtol=1e-5, atol=1e-5)
    assert any("dw[j] +=" in src for src in loaded) == (width > 8)
