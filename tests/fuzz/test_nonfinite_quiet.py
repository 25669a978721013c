"""Non-finite values warn in neither library (fuzz class: NumPy RuntimeWarnings, issue 27).

PyTorch's kernels never warn about inf/nan; NumPy's ufuncs, dot products and reductions do. Each
op runs forward and backward on a tensor holding inf, -inf and nan, on both libraries, and the
warning categories raised must be the same (none but PyTorch's own).
"""

from __future__ import annotations

import warnings

import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _x(lib):
    inf = float("inf")
    return lib.tensor([[inf, -inf], [float("nan"), 1.0]], requires_grad=True)


def _f(lib):
    return lib.nn.functional


OPS = {
    "sin": lambda lib, x: x.sin(),
    "cos": lambda lib, x: x.cos(),
    "mm": lambda lib, x: x @ x,
    "mv": lambda lib, x: x @ x[0],
    "bmm": lambda lib, x: lib.bmm(x[None], x[None]),
    "baddbmm": lambda lib, x: lib.baddbmm(x[None], x[None], x[None]),
    "addmm": lambda lib, x: lib.addmm(x, x, x),
    "einsum": lambda lib, x: lib.einsum("ij,jk->ik", x, x),
    "linear": lambda lib, x: _f(lib).linear(x, x),
    "conv1d": lambda lib, x: _f(lib).conv1d(x[None], x[:, :, None]),
    "conv2d": lambda lib, x: _f(lib).conv2d(x[None, None], x[None, None]),
    "avg_pool1d": lambda lib, x: _f(lib).avg_pool1d(x[None], 2),
    "avg_pool2d": lambda lib, x: _f(lib).avg_pool2d(x[None], 2),
    "adaptive_avg_pool2d": lambda lib, x: _f(lib).adaptive_avg_pool2d(x[None], 1),
    "mse_loss": lambda lib, x: _f(lib).mse_loss(x, x.flip(0)),
    "huber_loss": lambda lib, x: _f(lib).huber_loss(x, x),
    "smooth_l1_loss": lambda lib, x: _f(lib).smooth_l1_loss(x, x),
    "bce_with_logits": lambda lib, x: _f(lib).binary_cross_entropy_with_logits(x, x.sigmoid()),
    "silu": lambda lib, x: _f(lib).silu(x),
    "rms_norm": lambda lib, x: _f(lib).rms_norm(x, (2,)),
    "kl_div_sum": lambda lib, x: _f(lib).kl_div(x, x, reduction="sum"),
    "var": lambda lib, x: x.var(0),
    "std": lambda lib, x: x.std(0),
    "div_then_sin": lambda lib, x: (x.detach() / x.detach().relu()).sin(),
    # fuzz seeds 73292/73520: scans and glu of inf/-inf
    "cumsum": lambda lib, x: x.cumsum(1),
    "cumprod": lambda lib, x: x.cumprod(1),
    "glu": lambda lib, x: _f(lib).glu(x, 1),
    "adaptive_avg_pool2d_windows": lambda lib, x: _f(lib).adaptive_avg_pool2d(x[None], (2, 1)),
}


def _warnings(lib, fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = _x(lib)
        y = fn(lib, x)
        if y.requires_grad:
            y.sum().backward()
    return sorted({w.category.__name__ for w in caught})


@pytest.mark.parametrize("name", sorted(OPS))
def test_nonfinite_values_warn_as_in_torch(torch, name):
    assert _warnings(hookgrad, OPS[name]) == _warnings(torch, OPS[name])
