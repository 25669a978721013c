"""``torch.fft`` on hookgrad: sample frequencies and shifts; the transforms need complex tensors.

Mirrors ``torch.fft``. `fftfreq`, `rfftfreq`, `fftshift` and `ifftshift` are real-valued and
behave as PyTorch's (shifts are `roll`, so they record ``RollBackward0``). Every transform
(`fft`, `rfft`, `irfft`, `hfft`, ...) produces or consumes complex tensors, which hookgrad does
not have (its derivative rules are written for real dtypes): each exists, so libraries that
import them at load time work, and raises ``RuntimeError`` naming the reason when called.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hookgrad._dtypes import get_default_dtype, to_dtype
from hookgrad._functional.creation import arange
from hookgrad._tensor import Tensor

__all__ = ["fftfreq", "rfftfreq", "fftshift", "ifftshift", "fft", "ifft", "fft2", "ifft2",
           "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn", "hfft",
           "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn"]

_REASON = ("torch.fft.{name} works on complex tensors, which hookgrad does not support "
           "(its dtypes and derivative rules are real)")


def _frequencies(count: int, n: int, d: float, dtype: Any, device: Any,
                 requires_grad: bool, negative: bool) -> Tensor:
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt = get_default_dtype() if dtype is None else to_dtype(dtype)
    if not dt.is_floating_point:
        name = "fftfreq" if negative else "rfftfreq"
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    k = arange(count, dtype=dt, device=device)
    if negative:
        k = k - n * (k >= (n + 1) // 2).to(dt)
    out = k / (d * n)  # n == 0: rfftfreq gives [nan] (0/0), as PyTorch
    return out.requires_grad_(requires_grad) if requires_grad else out


def fftfreq(n: int, d: float = 1.0, *, out: Any = None, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """Sample frequencies of a length-`n` DFT with spacing `d` (positive ones first).

    Mirrors: ``torch.fft.fftfreq``.
    """
    return _frequencies(n, n, d, dtype, device, requires_grad, negative=True)


def rfftfreq(n: int, d: float = 1.0, *, out: Any = None, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """The non-negative sample frequencies of a length-`n` real DFT.

    Mirrors: ``torch.fft.rfftfreq``.
    """
    return _frequencies(n // 2 + 1 if n >= 0 else n, n, d, dtype, device, requires_grad,
                        negative=False)


def _dims(input: Tensor, dim: int | Sequence[int] | None) -> tuple[int, ...]:
    if dim is None:
        return tuple(range(input.dim()))
    return (dim,) if isinstance(dim, int) else tuple(dim)


def fftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """Moves the zero-frequency term to the centre: a `roll` by half of each dimension.

    Mirrors: ``torch.fft.fftshift``.
    """
    dims = _dims(input, dim)
    return input.roll([input.shape[d] // 2 for d in dims], dims)


def ifftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """The inverse of `fftshift`.

    Mirrors: ``torch.fft.ifftshift``.
    """
    dims = _dims(input, dim)
    return input.roll([-(input.shape[d] // 2) for d in dims], dims)


def _complex_transform(name: str) -> Any:
    def transform(input: Any, *args: Any, **kwargs: Any) -> Tensor:
        raise RuntimeError(_REASON.format(name=name))

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = (f"Raises RuntimeError: {_REASON.format(name=name)}.\n\n"
                         f"Mirrors: ``torch.fft.{name}``.")
    transform.__hookgrad_unsupported__ = _REASON.format(name=name)  # type: ignore[attr-defined]
    return transform


for _name in __all__[4:]:
    globals()[_name] = _complex_transform(_name)
del _name
