"""nanmedian, nanquantile, mode, histc/histogram/histogramdd, bit shifts, frexp,
unique_consecutive and nonzero_static against PyTorch: values, dtypes, gradients, errors."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err

NAN = float("nan")
A = [[1.0, NAN, 3.0, 2.0], [NAN] * 4, [2.0, 5.0, 1.0, 0.5]]  # no tied medians
M = [[4.0, 1.0, 4.0, 1.0, 2.0], [3.0, 3.0, 0.0, 7.0, 0.0]]
PTS = [[0.1, 0.9], [0.5, 0.5], [1.0, 0.0], [0.25, 0.75], [0.75, 0.3]]


def _out(x):
    if isinstance(x, (tuple, list)):
        return tuple(_out(e) for e in x)
    if not hasattr(x, "dtype"):
        return x
    vals = np.asarray(x.detach().numpy(), dtype=float)
    return (str(x.dtype).replace("torch.", ""), tuple(x.shape),
            np.where(np.isnan(vals), -999.0, vals).tolist())


VALUES = {
    "nanmedian_all": lambda lib: lib.nanmedian(lib.tensor(A)),
    "nanmedian_dim": lambda lib: lib.nanmedian(lib.tensor(A)[[0, 2]], 1),
    "nanmedian_keepdim": lambda lib: lib.tensor(A)[[0, 2]].nanmedian(-1, keepdim=True),
    "nanmedian_0d": lambda lib: lib.nanmedian(lib.tensor(2.5), 0),
    "nanmedian_int": lambda lib: lib.nanmedian(lib.tensor([[3, 1, 2], [5, 4, 9]]), 1),
    "mode": lambda lib: lib.mode(lib.tensor(M)),
    "mode_dim0_keep": lambda lib: lib.tensor(M).mode(0, keepdim=True),
    "mode_int": lambda lib: lib.mode(lib.tensor([3, 1, 3, 1, 2])),
    "mode_nan": lambda lib: lib.mode(lib.tensor(A), 1),
    "nanquantile": lambda lib: lib.nanquantile(lib.tensor(A), 0.4),
    "nanquantile_q": lambda lib: lib.nanquantile(lib.tensor(A), lib.tensor([0.3, 0.5]), dim=1,
                                                 keepdim=True),
    "histc": lambda lib: lib.histc(lib.tensor([0.0, 1, 2, 2.5, 7, -1]), 4),
    "histc_range": lambda lib: lib.tensor([0.0, 1, 2, 2.5, 7], dtype=lib.float64).histc(
        5, min=1, max=3),
    "histc_equal": lambda lib: lib.histc(lib.tensor([2.0, 2.0]), 4),
    "histogram": lambda lib: lib.histogram(lib.tensor([0.0, 1, 2, 2.5, 7]), 3),
    "histogram_edges": lambda lib: lib.histogram(
        lib.tensor([0.0, 1, 2, 2.5, 7]), lib.tensor([0.0, 1, 5]), weight=lib.ones(5) * 2,
        density=True),
    "histogram_range": lambda lib: lib.tensor([0.0, 1, 2, 2.5, 7]).histogram(3, range=(0., 4.)),
    "histogram_equal": lambda lib: lib.histogram(lib.tensor([2.0, 2.0]), 4),
    "histogramdd": lambda lib: lib.histogramdd(lib.tensor(PTS), bins=[2, 3]),
    "histogramdd_range": lambda lib: lib.histogramdd(lib.tensor(PTS), bins=2,
                                                     range=[0., 1., 0., 1.]),
    "histogramdd_edges": lambda lib: lib.histogramdd(
        lib.tensor(PTS), [lib.tensor([0.0, 0.5, 1]), lib.tensor([0.0, 1])],
        weight=lib.tensor([1.0, 2, 3, 4, 5]), density=True),
    "lshift": lambda lib: lib.bitwise_left_shift(lib.tensor([1, 2, -3]), 2),
    "rshift_int8": lambda lib: lib.bitwise_right_shift(lib.tensor([1, 2, -3], dtype=lib.int8),
                                                       lib.tensor([1, 9, 1])),
    "lshift_uint8_wide": lambda lib: lib.tensor([1, 2, 3], dtype=lib.uint8).bitwise_left_shift(9),
    "lshift_scalar_self": lambda lib: lib.bitwise_left_shift(5, lib.tensor([1, 2])),
    "rshift_70": lambda lib: lib.tensor([-8, 2]) >> 70,
    "lshift_op": lambda lib: lib.tensor([1, 2]) << lib.tensor([3, 1]),
    "lshift_inplace": lambda lib: lib.tensor([1, 2]).bitwise_left_shift_(lib.tensor([1, 2])),
    "frexp": lambda lib: lib.frexp(lib.tensor([0.0, 1, -3.5, 1e-40, float("inf"), NAN])),
    "frexp_f64": lambda lib: lib.tensor([0.3, 1e300], dtype=lib.float64).frexp(),
    "uc": lambda lib: lib.unique_consecutive(lib.tensor([1.0, 1, 2, 2, 3, 1, 1]),
                                             return_inverse=True, return_counts=True),
    "uc_dim0": lambda lib: lib.unique_consecutive(lib.tensor([[1, 2], [1, 2], [3, 4], [1, 2]]),
                                                  return_inverse=True, return_counts=True, dim=0),
    "uc_dim1": lambda lib: lib.tensor([[1, 2, 2], [1, 2, 2]]).unique_consecutive(
        dim=1, return_counts=True),
    "uc_2d_inverse": lambda lib: lib.unique_consecutive(lib.tensor([[1, 2], [1, 2]]),
                                                        return_inverse=True),
    "uc_0d": lambda lib: lib.unique_consecutive(lib.tensor(3), return_inverse=True,
                                                return_counts=True),
    "nonzero_static": lambda lib: lib.nonzero_static(lib.tensor([[0, 1], [2, 0]]), size=3),
    "nonzero_static_cut": lambda lib: lib.tensor([[0, 1], [2, 0]]).nonzero_static(
        size=1, fill_value=5),
    "nonzero_static_0d": lambda lib: lib.nonzero_static(lib.tensor(3.0), size=2),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_match_torch(torch, name):
    assert _out(VALUES[name](hookgrad)) == _out(VALUES[name](torch))


GRADS = {
    "nanmedian_all": lambda lib, x: lib.nanmedian(x),
    "nanmedian_all_nan": lambda lib, x: lib.nanmedian(x[1]),
    "nanmedian_dim": lambda lib, x: lib.nanmedian(x[[0, 2]], 1).values,
    "mode": lambda lib, x: lib.mode(x[[0, 2]], 1, keepdim=True).values,
    "nanquantile_linear": lambda lib, x: lib.nanquantile(x, lib.tensor([0.3, 0.5],
                                                                       dtype=lib.float64), 1),
    "nanquantile_mid": lambda lib, x: lib.nanquantile(x, 0.5, 1, interpolation="midpoint"),
    "nanquantile_higher": lambda lib, x: lib.nanquantile(x, 0.3, 1, interpolation="higher"),
    "nanquantile_all": lambda lib, x: lib.nanquantile(x, 0.7),
    "frexp": lambda lib, x: lib.frexp(x[[0, 2]] * 3).mantissa,
}


def _grad(lib, name):
    x = lib.tensor(A, dtype=lib.float64, requires_grad=True)
    out = GRADS[name](lib, x)
    w = lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape) + 1
    (g,) = lib.autograd.grad((out.nan_to_num() * w).sum(), (x,))
    return out.grad_fn.name(), g.tolist()


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_match_torch(torch, name):
    mine, theirs = _grad(hookgrad, name), _grad(torch, name)
    if not name.startswith("nanquantile"):  # PyTorch's nanquantile ends in an in-place squeeze_
        assert mine[0] == theirs[0]
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda x: hookgrad.mode(x, 1).values,
    lambda x: hookgrad.nanmedian(x, 0).values,
    lambda x: hookgrad.nanmedian(x),
    lambda x: hookgrad.frexp(x).mantissa,
    lambda x: hookgrad.nanquantile(x, 0.3, dim=1),
])
def test_gradcheck(fn):
    x = hookgrad.tensor([[0.3, -1.2, 2.5], [1.7, 0.4, -0.9]], dtype=hookgrad.float64,
                        requires_grad=True)
    assert hookgrad.autograd.gradcheck(fn, (x,))


BAD = {
    "mode_empty": lambda lib: lib.mode(lib.zeros(2, 0), 1),
    "mode_dim": lambda lib: lib.mode(lib.zeros(2, 3), 2),
    "nanmedian_dim": lambda lib: lib.nanmedian(lib.zeros(2, 3), 3),
    "nanmedian_empty": lambda lib: lib.nanmedian(lib.zeros(2, 0), 1),
    "nanquantile_int": lambda lib: lib.nanquantile(lib.tensor([1, 2]), 0.5),
    "nanquantile_q": lambda lib: lib.nanquantile(lib.tensor([1.0, 2]), 1.5),
    "nanquantile_qdtype": lambda lib: lib.nanquantile(lib.tensor([1.0, 2]),
                                                      lib.tensor([0.5], dtype=lib.float64)),
    "nanquantile_interp": lambda lib: lib.nanquantile(lib.tensor([1.0, 2]), 0.5,
                                                      interpolation="cubic"),
    "histc_int": lambda lib: lib.histc(lib.tensor([1, 2, 3]), 3),
    "histc_minmax": lambda lib: lib.histc(lib.tensor([1.0]), 4, min=3, max=1),
    "histc_bins": lambda lib: lib.histc(lib.tensor([1.0]), -1),
    "histc_inf": lambda lib: lib.histc(lib.tensor([1.0, float("inf")]), 2),
    "histogram_range": lambda lib: lib.histogram(lib.tensor([1.0, 2]), 2, range=(3., 1.)),
    "histogram_nan": lambda lib: lib.histogram(lib.tensor([1.0, NAN]), 2),
    "histogram_2d_bins": lambda lib: lib.histogram(lib.tensor([1.0, 2]),
                                                   lib.tensor([[1.0, 2]])),
    "histogram_int": lambda lib: lib.histogram(lib.tensor([1, 2]), 3),
    "histogramdd_1d": lambda lib: lib.histogramdd(lib.tensor([1.0, 2]), 2),
    "histogramdd_bins": lambda lib: lib.histogramdd(lib.zeros(3, 2), [2]),
    "histogram_weight": lambda lib: lib.histogram(lib.tensor([1.0, 2]), 2, weight=lib.ones(3)),
    "lshift_float": lambda lib: lib.bitwise_left_shift(lib.tensor([1.0]), 1),
    "frexp_int": lambda lib: lib.frexp(lib.tensor([1, 2])),
    "nonzero_static_size": lambda lib: lib.nonzero_static(lib.tensor([1]), size=-1),
    "uc_backward": lambda lib: lib.unique_consecutive(
        lib.tensor([1.0, 1.0], requires_grad=True)).sum().backward(),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(BAD))
def test_errors_match_torch_types(torch, name):
    mine, theirs = err(lambda: BAD[name](hookgrad)), err(lambda: BAD[name](torch))
    assert theirs is not None and mine is not None and mine[0] == theirs[0], (mine, theirs)
