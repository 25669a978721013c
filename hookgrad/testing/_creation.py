"""``make_tensor`` and the deprecated ``assert_allclose`` of ``torch.testing``.

Mirrors: ``torch.testing.make_tensor`` (uniform values in ``[low, high)``, PyTorch's default
ranges per dtype: ``[-9, 9)`` for floating point, ``[-9, 10)`` for signed and ``[0, 10)`` for
unsigned integers, random booleans; the values come from hookgrad's generator) and
``torch.testing.assert_allclose``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import hookgrad
from hookgrad.testing._comparison import assert_close

__all__ = ["make_tensor", "assert_allclose"]


def _range(dtype: Any, low: Any, high: Any) -> tuple[float, float]:
    if dtype.is_floating_point:
        lo, hi = -9.0, 9.0
    elif dtype.is_signed:
        lo, hi = -9, 10
    else:
        lo, hi = 0, 10
    lo = lo if low is None else max(low, lo if not dtype.is_floating_point else -math.inf)
    hi = hi if high is None else high
    if lo > hi:
        raise ValueError(f"`low` must be less than or equal to `high`, but got {lo} > {hi}")
    return lo, hi


def make_tensor(*shape: Any, dtype: Any, device: Any, low: Any = None, high: Any = None,
                requires_grad: bool = False, noncontiguous: bool = False,
                exclude_zero: bool = False, memory_format: Any = None) -> Any:
    """A tensor of `shape` filled with random values of `dtype`. Mirrors: ``torch.testing.make_tensor``."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if dtype is hookgrad.bool:
        out = hookgrad.randint(0, 2, shape).to(hookgrad.bool)
    else:
        lo, hi = _range(dtype, low, high)
        if dtype.is_floating_point:
            out = (hookgrad.rand(*shape, dtype=hookgrad.float64) * (hi - lo) + lo).to(dtype)
        else:
            out = hookgrad.randint(int(math.ceil(lo)), int(math.ceil(hi)), shape, dtype=dtype)
        if exclude_zero:
            tiny = hookgrad.finfo(dtype).tiny if dtype.is_floating_point else 1
            out = hookgrad.where(out == 0, hookgrad.full_like(out, tiny), out)
    if noncontiguous and out.numel() > 1:
        out = hookgrad.repeat_interleave(out, 2, dim=-1)[..., ::2]
    if requires_grad:
        out.requires_grad_(True)
    return out


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None,
                    atol: float | None = None, equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated spelling of `assert_close`. Mirrors: ``torch.testing.assert_allclose``."""
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed "
                  "in a future release. Please use `torch.testing.assert_close()` instead.",
                  FutureWarning, stacklevel=2)
    if not isinstance(actual, hookgrad.Tensor):
        actual = hookgrad.tensor(actual)
    if not isinstance(expected, hookgrad.Tensor):
        expected = hookgrad.tensor(expected, dtype=actual.dtype)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_dtype=False, msg=msg or None)
