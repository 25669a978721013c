"""``torch.fft`` on hookgrad: the discrete Fourier transforms, sample frequencies and shifts.

Mirrors ``torch.fft``. The transforms (`fft`, `ifft`, `rfft`, `irfft`, `hfft`, `ihfft` and the
2-D and n-D forms of the first four) run on the three primitives of ``_ops/spectral.py``
(PyTorch's ``_fft_c2c``/``_fft_r2c``/``_fft_c2r``, with its node names and gradients); `n`/`s`
crop or zero-pad first, integer inputs transform in the default float dtype. `fftfreq`,
`rfftfreq`, `fftshift` and `ifftshift` behave as PyTorch's (shifts are `roll`). The
n-dimensional Hermitian transforms (`hfft2`, `ihfft2`, `hfftn`, `ihfftn`) exist so imports work
and raise ``RuntimeError`` when called.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hookgrad._dispatch import bind as _bind
from hookgrad._dtypes import get_default_dtype as _get_default_dtype, to_dtype as _to_dtype
from hookgrad._functional._out import with_out as _with_out
from hookgrad._functional.creation import arange as _arange
from hookgrad._ops._shapes import normalize_dim as _normalize_dim
from hookgrad._ops.registry import PRIMITIVES as _P
from hookgrad._ops.spectral import INVERSE_NORM as _INVERSE
from hookgrad._tensor import Tensor

__all__ = [
    "fftfreq", "rfftfreq", "fftshift", "ifftshift", "fft", "ifft", "fft2", "ifft2",
    "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn", "hfft",
    "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn"
]

_REASON = ("torch.fft.{name} (the n-dimensional Hermitian transforms) is not implemented by "
           "hookgrad")


def _frequencies(count: int, n: int, d: float, dtype: Any, device: Any,
                 requires_grad: bool, negative: bool) -> Tensor:
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt = _get_default_dtype() if dtype is None else _to_dtype(dtype)
    if not dt.is_floating_point:
        name = "fftfreq" if negative else "rfftfreq"
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    k = _arange(count, dtype=dt, device=device)
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


# ---------------------------------------------------------------- transforms
_NORMS = ("backward", "forward", "ortho")


def _norm(norm: str | None, name: str) -> str:
    if norm is None:
        return "backward"
    if not isinstance(norm, str):  # PyTorch's parser, before the mode is read
        raise TypeError(f"fft_{name}(): argument 'norm' must be str, not {type(norm).__name__}")
    if norm not in _NORMS:
        raise RuntimeError(f"Invalid normalization mode: {norm}")
    return norm


def _as_transformable(input: Any, name: str) -> Tensor:
    if not isinstance(input, Tensor):
        raise TypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input._data.dtype.kind in "iub":  # integers transform in the default float dtype
        return input.to(_get_default_dtype())
    return input


def _resized(input: Tensor, dims: tuple, sizes: Sequence[int | None]) -> Tensor:
    """`input` cropped or zero-padded to `sizes` along `dims` (``n``/``s`` of the transforms)."""
    for d, n in zip(dims, sizes, strict=True):
        if n is None or n == -1:
            continue
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
        have = input.shape[d]
        if n < have:
            input = input.narrow(d, 0, n)
        elif n > have:
            full = list(input.shape)
            full[d] = n
            input = input.new_zeros(full).slice_scatter(input, d, 0, have)
    return input


def _plan(input: Tensor, s: Any, dim: Any, default_all: bool, name: str) -> tuple[tuple, list]:
    """Normalised dims and per-dim sizes of an n-dimensional transform (PyTorch's rules)."""
    ndim = _as_transformable(input, name).dim()
    if s is not None and not isinstance(s, int) and any(
            not isinstance(v, int) or isinstance(v, bool) for v in s):
        raise TypeError(f"fft_{name}(): argument 's' must be tuple of ints, not "
                        f"{type(s).__name__}")
    if dim is None:
        dims = tuple(range(ndim - len(s), ndim)) if s is not None else\
            tuple(range(ndim)) if default_all else (ndim - 1,)
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
    dims = tuple(_normalize_dim(d, ndim) for d in dims)  # PyTorch's IndexError
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    sizes = list(s) if s is not None else [None] * len(dims)
    if len(sizes) != len(dims):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    return dims, sizes


def _c2c_or_r2c(input: Tensor, dims: tuple, sizes: list, norm: str, forward: bool,
                name: str) -> Tensor:
    x = _resized(_as_transformable(input, name), dims, sizes)
    if x.is_complex():
        return x._fft_c2c(dims, norm, forward)  # type: ignore[attr-defined]
    if forward:
        return x._fft_r2c(dims, norm, False)  # type: ignore[attr-defined]
    # PyTorch's inverse of a real signal: conj(forward transform) with the inverse's scale
    return x._fft_r2c(dims, _INVERSE[norm], False).conj()  # type: ignore[attr-defined]


def _r2c(input: Tensor, dims: tuple, sizes: list, norm: str, name: str) -> Tensor:
    x = _resized(_as_transformable(input, name), dims, sizes)
    if x.is_complex():
        raise RuntimeError(f"{name} expects a real input tensor, but got {x.dtype.scalar_type}")
    return x._fft_r2c(dims, norm, True)  # type: ignore[attr-defined]


def _c2r(input: Tensor, dims: tuple, sizes: list, norm: str, name: str) -> Tensor:
    x = _as_transformable(input, name)
    last = sizes[-1] if sizes[-1] not in (None, -1) else 2 * (x.shape[dims[-1]] - 1)
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    x = _resized(x, dims, sizes[:-1] + [last // 2 + 1])
    if not x.is_complex():
        x = x.to(_get_default_dtype().to_complex() if x.dtype.itemsize < 8 else
                 x.dtype.to_complex())
    return x._fft_c2r(dims, norm, last)  # type: ignore[attr-defined]


def _one(kind: str, forward: bool, name: str) -> Any:
    def transform(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None,
                  *, out: Any = None) -> Tensor:
        dims, sizes = _plan(input, None if n is None else [n], dim, False, name)
        result = _dispatch_kind(kind, input, dims, sizes, _norm(norm, name), forward, name)
        return result if out is None else _write_out(name, input, result, out)

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = f"One-dimensional {name} along `dim`.\n\nMirrors: ``torch.fft.{name}``."
    return transform


def _many(kind: str, forward: bool, name: str, two: bool) -> Any:
    def transform(input: Tensor, s: Any = None, dim: Any = (-2, -1) if two else None,
                  norm: str | None = None, *, out: Any = None) -> Tensor:
        dims, sizes = _plan(input, s, dim, True, name)
        result = _dispatch_kind(kind, input, dims, sizes, _norm(norm, name), forward, name)
        return result if out is None else _write_out(name, input, result, out)

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = f"{name} over `dim`.\n\nMirrors: ``torch.fft.{name}``."
    return transform


def _write_out(name: str, input: Tensor, result: Tensor, out: Any) -> Tensor:
    """``out=``: PyTorch's checks (a complex result needs a complex `out`, a real one a real
    `out`), then the shared out-variant write (resize, copy)."""
    if isinstance(out, Tensor) and result.is_complex() != out.is_complex():
        want = "complex" if result.is_complex() else "floating point"
        raise RuntimeError(f"{name} expects a {want} output tensor, but got "
                           f"{out.dtype.scalar_type}")
    return _with_out(name, lambda _input: result)(input, out=out)


def _dispatch_kind(kind: str, input: Tensor, dims: tuple, sizes: list, norm: str,
                   forward: bool, name: str) -> Tensor:
    if kind == "c2c":
        return _c2c_or_r2c(input, dims, sizes, norm, forward, name)
    if kind == "r2c":
        return _r2c(input, dims, sizes, norm, name)
    if kind == "c2r":
        return _c2r(input, dims, sizes, norm, name)
    if kind == "hfft":  # a Hermitian signal's real spectrum: irfft of the conjugate
        return _c2r(input.conj(), dims, sizes, _INVERSE[norm], name)
    # ihfft: the conjugate of rfft, with the inverse's scale
    return _r2c(input, dims, sizes, _INVERSE[norm], name).conj()


fft = _one("c2c", True, "fft")
ifft = _one("c2c", False, "ifft")
rfft = _one("r2c", True, "rfft")
irfft = _one("c2r", False, "irfft")
hfft = _one("hfft", False, "hfft")
ihfft = _one("ihfft", True, "ihfft")
fft2 = _many("c2c", True, "fft2", True)
ifft2 = _many("c2c", False, "ifft2", True)
rfft2 = _many("r2c", True, "rfft2", True)
irfft2 = _many("c2r", False, "irfft2", True)
fftn = _many("c2c", True, "fftn", False)
ifftn = _many("c2c", False, "ifftn", False)
rfftn = _many("r2c", True, "rfftn", False)
irfftn = _many("c2r", False, "irfftn", False)


def _primitive_method(prim_name: str) -> Any:
    def method(self: Tensor, dim: tuple, norm: str, arg: Any) -> Tensor:
        params = dict(zip(_P[prim_name].params, (tuple(dim), norm, arg), strict=True))
        return _bind(_P[prim_name], (self,), params)

    method.__name__ = prim_name
    method.__doc__ = f"PyTorch's ``torch.{prim_name}`` primitive (dims, norm, last argument)."
    return method


for _prim in ("_fft_c2c", "_fft_r2c", "_fft_c2r"):  # used by the primitives' own rules
    setattr(Tensor, _prim, _primitive_method(_prim))


def _complex_transform(name: str) -> Any:
    def transform(input: Any, *args: Any, **kwargs: Any) -> Tensor:
        raise RuntimeError(_REASON.format(name=name))

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = (f"Raises RuntimeError: {_REASON.format(name=name)}.\n\n"
                         f"Mirrors: ``torch.fft.{name}``.")
    transform.__hookgrad_unsupported__ = _REASON.format(name=name)  # type: ignore[attr-defined]
    return transform


for _name in ("hfft2", "ihfft2", "hfftn", "ihfftn"):
    globals()[_name] = _complex_transform(_name)
del _name

# typing helpers are not part of PyTorch's namespace (tools crawl dir() of it)
del Any, Sequence, annotations

# PyTorch's ``__all__`` also lists these
__all__ += ["Tensor"]
