"""lgamma, digamma, polygamma and erfinv against PyTorch on grids with their edge values, with
SciPy and with the NumPy fallbacks used where SciPy is not installed."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from hookgrad._ops import _special_gamma

GRID = np.concatenate([np.linspace(-6.3, 12.0, 241), [0.0, -0.0, -1.0, -3.0, 1e-9, 1.0, 2.0,
                                                       0.5, 60.0, 1e4, np.inf, -np.inf,
                                                       np.nan]])
UNIT = np.concatenate([np.linspace(-0.999999, 0.999999, 201), [-1.0, 1.0, 1.5, -3.0, 0.0,
                                                               np.nan]])
POSITIVE = np.linspace(0.05, 15.0, 120)
CASES = {
    "lgamma": (lambda lib, t: lib.lgamma(t), GRID),
    "digamma": (lambda lib, t: lib.digamma(t), GRID),
    "erfinv": (lambda lib, t: lib.erfinv(t), UNIT),
    **{f"polygamma{n}": ((lambda n: lambda lib, t: lib.polygamma(n, t))(n), POSITIVE)
       for n in (0, 1, 2, 4)},
}


@pytest.fixture(params=["scipy", "numpy"])
def backend(request, monkeypatch):
    if request.param == "numpy":
        monkeypatch.setattr(_special_gamma, "_SP", None)
    elif _special_gamma._SP is None:
        pytest.skip("SciPy is not installed")
    return request.param


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_match_torch(torch, backend, name, dtype):
    fn, grid = CASES[name]
    ours = fn(hookgrad, hookgrad.tensor(grid.astype(dtype))).numpy()
    theirs = fn(torch, torch.tensor(grid.astype(dtype))).numpy()
    assert ours.dtype == theirs.dtype
    rtol = 1e-10 if dtype == "float64" else 2e-6
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=1e-12 if dtype == "float64" else 1e-6)


@pytest.mark.oracle
def test_integer_inputs_and_errors_match_torch(torch):
    def run(lib):
        out = [str(lib.lgamma(lib.tensor([1, 2, 3])).dtype), str(lib.digamma(
            lib.tensor([True])).dtype)]
        for bad in (lambda: lib.polygamma(-1, lib.tensor([1.0])),
                    lambda: lib.polygamma(1.5, lib.tensor([1.0])),
                    lambda: lib.polygamma(1, [1.0])):
            try:
                bad()
                out.append(None)
            except Exception as e:  # noqa: BLE001 - the type is compared
                out.append(type(e).__name__)
        return [s.replace("torch.", "") for s in out if s] + [o for o in out if o is None]
    assert run(hookgrad) == run(torch)


@pytest.mark.oracle
def test_cholesky_ex_matches_torch(torch):
    def run(lib):
        good = lib.tensor([[4.0, 1.0], [1.0, 3.0]], dtype=lib.float64)
        bad = lib.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=lib.float64)
        batch = lib.stack([good, bad, -good])
        out = [lib.linalg.cholesky_ex(good).L.tolist(), lib.linalg.cholesky_ex(good).info.item(),
               lib.linalg.cholesky_ex(batch).info.tolist(),
               str(lib.linalg.cholesky_ex(batch).info.dtype).split(".")[-1],
               lib.linalg.cholesky_ex(good, upper=True).L.tolist()]
        try:
            lib.linalg.cholesky_ex(bad, check_errors=True)
        except Exception as e:  # noqa: BLE001 - compared (torch's class is _C._LinAlgError)
            out.append((isinstance(e, lib.linalg.LinAlgError), str(e)))
        return out
    assert run(hookgrad) == run(torch)


@pytest.mark.oracle
def test_mvlgamma_matches_torch(torch):
    def run(lib):
        x = lib.tensor([2.0, 3.5], dtype=lib.float64, requires_grad=True)
        y = lib.mvlgamma(x, 3) + lib.special.multigammaln(x, 2)
        y.sum().backward()
        return y.tolist(), x.grad.tolist(), type(lib.mvlgamma(x, 2).grad_fn).__name__
    ours, theirs = run(hookgrad), run(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10)
    assert ours[2] == theirs[2]
