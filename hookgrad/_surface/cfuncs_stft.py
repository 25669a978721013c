"""The short-time Fourier transform and its inverse.

``stft`` frames the (padded) signal with ``unfold``, multiplies by the window and applies the
DFT as two matrix products (cosine and sine tables), all hookgrad ops, so gradients (and double
gradients) come from theirs. ``return_complex=False`` gives PyTorch's real layout
``(..., n_freq, n_frames, 2)`` (with PyTorch's deprecation warning); ``return_complex=True`` the
complex spectrum ``(..., n_freq, n_frames)`` (a ``view_as_complex`` of the same pairs).
``istft`` inverts a complex spectrum: ``irfft`` (or ``ifft``) of every frame, windowed,
overlap-added with ``fold`` and divided by the overlap-added squared window, as PyTorch does.

Mirrors: ``torch.stft``, ``torch.istft``, ``torch.Tensor.stft``, ``torch.Tensor.istft``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from hookgrad import fft as _fft
from hookgrad._functional.complex import view_as_complex
from hookgrad._functional.creation import ones
from hookgrad._functional.shape import stack
from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F

__all__ = ["stft", "istft"]

_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known to "
              "cause spectral leakage. Other windows such as torch.hann_window or "
              "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
              "warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
              "device=<device>)`.")
_REAL_DEPRECATED = ("stft with return_complex=False is deprecated. In a future pytorch release, "
                    "stft will return complex tensors for all inputs, and return_complex=False "
                    "will raise an error.\nNote: you can still call torch.view_as_real on the "
                    "complex output to recover the old return format.")


_WARNED: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    """PyTorch gives both stft warnings once per process (``TORCH_WARN_ONCE``)."""
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


def _center(input: Tensor, n_fft: int, pad_mode: str) -> Tensor:
    """Pad ``n_fft // 2`` on both sides of the last dim, as PyTorch's Python ``stft`` does."""
    dims = input.dim()
    pad = n_fft // 2
    extended = input.reshape([1] * (3 - dims) + list(input.shape)) if dims < 3 else input
    padded = F.pad(extended, [pad, pad], pad_mode)
    return padded.reshape(list(padded.shape[-dims:]))


def _check(input: Tensor, n_fft: int, hop: int, win: int, window: Tensor | None) -> None:
    call = f"stft(n_fft={n_fft}, hop_length={hop}, win_length={win})"
    length = input.shape[-1] if input.dim() else 0
    if input.dim() not in (1, 2):
        raise RuntimeError(f"{call} : expected a 1D or 2D tensor")
    if not input.is_floating_point():
        raise RuntimeError(f"{call} : expected a tensor of floating point or complex values")
    if not 0 < n_fft <= length:
        raise RuntimeError(f"{call} : expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"{call} : expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{call} : expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(f"{call} : expected a 1D window tensor of size equal to "
                           f"win_length={win}, but got window with size {list(window.shape)}")


def _dft_tables(input: Tensor, n_fft: int, offset: int, width: int, n_freq: int) -> tuple:
    """cos and -sin of ``2 pi k n / n_fft`` for samples n = offset .. offset+width-1."""
    n = np.arange(offset, offset + width, dtype=np.float64)[:, None]
    k = np.arange(n_freq, dtype=np.float64)[None, :]
    angle = 2.0 * np.pi * ((n * k) % n_fft) / n_fft
    return input.new_tensor(np.cos(angle)), input.new_tensor(-np.sin(angle))


def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect",
         normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
    """Short-time Fourier transform of a 1D signal or a batch of them (2D).

    Args:
        input: the signal(s), a floating tensor of shape ``(L,)`` or ``(B, L)``.
        n_fft: DFT size. hop_length: frame step (default ``n_fft // 4``). win_length: window
            size (default `n_fft`), the window is centred in the ``n_fft`` frame.
        window: 1D tensor of `win_length` (default: ones, with PyTorch's warning).
        center: pad ``n_fft // 2`` on both sides with `pad_mode` first.
        normalized: multiply by ``n_fft ** -0.5``. onesided: keep ``n_fft // 2 + 1``
            frequencies (default True).
        return_complex: must be given; only False is supported (see the module docstring).
        align_to_window: with ``center=False``, frames start where the window starts.

    Returns:
        ``(B?, n_freq, n_frames, 2)``: real and imaginary parts.

    Mirrors: ``torch.stft`` (``return_complex=False``).
    """
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if return_complex is None:
        raise RuntimeError("stft requires the return_complex parameter be given for real "
                           "inputs, and will further require that return_complex=True in a "
                           "future PyTorch release.")
    if center and input.dim() in (1, 2):
        input = _center(input, n_fft, pad_mode)
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    _check(input, n_fft, hop, win, window)
    if not return_complex:
        _warn_once("real", _REAL_DEPRECATED)
    if window is None:
        _warn_once("window", _NO_WINDOW)
    left = (n_fft - win) // 2
    if align_to_window:
        segments = input.unfold(-1, win, hop)
    else:
        segments = input.unfold(-1, n_fft, hop)[..., left:left + win]
    if window is not None:
        segments = segments * window.to(input.dtype)
    n_freq = n_fft // 2 + 1 if onesided is None or onesided else n_fft
    cos, sin = _dft_tables(input, n_fft, left, win, n_freq)
    spectrum = stack([segments.matmul(cos), segments.matmul(sin)], -1)
    if normalized:
        spectrum = spectrum * (1.0 / math.sqrt(n_fft))
    spectrum = spectrum.transpose(-3, -2)
    return view_as_complex(spectrum.contiguous()) if return_complex else spectrum


def istft(input: Tensor, n_fft: int, hop_length: int | None = None,
          win_length: int | None = None, window: Tensor | None = None, center: bool = True,
          normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """Inverse STFT of the complex spectrum ``stft(..., return_complex=True)`` returns.

    Args:
        input: ``(B?, n_freq, n_frames)`` complex spectrum.
        n_fft, hop_length, win_length, window, center, normalized, onesided: as for `stft`.
        length: trim or zero-pad the signal to this many samples.
        return_complex: keep the complex signal of a two-sided spectrum.

    Mirrors: ``torch.istft``.
    """
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(0)
    n_freq, n_frames = x.shape[-2], x.shape[-1]
    onesided = n_freq != n_fft if onesided is None else onesided
    if onesided and n_freq != n_fft // 2 + 1:
        raise RuntimeError("istft(...): expected the frequency dimension (3rd to the last) of "
                           f"the input tensor to match n_fft / 2 + 1 when onesided=True, but "
                           f"got {n_freq}")
    x = x.transpose(1, 2)
    norm = "ortho" if normalized else "backward"
    if onesided:
        frames = _fft.irfft(x, n=n_fft, dim=-1, norm=norm)
    else:
        frames = _fft.ifft(x, n=n_fft, dim=-1, norm=norm)
        frames = frames if return_complex else frames.real
    real = frames.real.dtype if frames.is_complex() else frames.dtype
    w = ones(win, dtype=real) if window is None else window.to(real)
    left = (n_fft - win) // 2
    w = F.pad(w, [left, n_fft - win - left])
    total = n_fft + hop * (n_frames - 1)
    fold = {"output_size": (1, total), "kernel_size": (1, n_fft), "stride": (1, hop)}
    y = F.fold((frames * w).transpose(1, 2), **fold).reshape(x.shape[0], total)
    envelope = F.fold((w * w).reshape(1, n_fft, 1).expand(1, n_fft, n_frames), **fold)
    envelope = envelope.reshape(total)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (total - n_fft // 2 if center else total)
    y, envelope = y[:, start:end], envelope[start:end]
    if envelope.numel() and float(envelope.abs().min()) < 1e-11:
        raise RuntimeError("istft(...): window overlap add min: " +
                           f"{float(envelope.abs().min()):g}")
    y = y / envelope
    if length is not None and y.shape[-1] < length:
        y = F.pad(y, [0, length - y.shape[-1]])
    return y if batched else y.squeeze(0)


METHODS = {"stft": stft, "istft": istft}
