"""Discrete Fourier transform primitives, as PyTorch's ``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r``.

NumPy's pocketfft computes in double precision; results are cast to the input's precision
(PyTorch computes complex64 transforms in single precision: values agree to float32 rounding).

Gradients (NOTE [Complex gradients] in complex_ops.py): a transform is linear, so its
real-convention rule is its transpose, and the DFT matrix is symmetric: the c2c rule is the
same transform of the gradient; r2c's is the full forward transform of the gradient zero-padded
back to the input's length (the engine keeps the real part for the real input). c2r maps a
half spectrum to a real signal, so its rule is written in PyTorch's convention: the one-sided
transform of the real gradient with the bins that stand for two conjugate bins doubled.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._ops._batching import batches, dim_params
from hookgrad._ops.registry import defop

__all__ = ["INVERSE_NORM"]

# the forward-transform norm with the same scale factor as an inverse transform's norm
INVERSE_NORM = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _complex_of(real: np.dtype) -> Any:
    return np.complex64 if real == np.float32 else np.complex128


def _c2c(self: Any, dim: tuple, norm: str, forward: bool) -> Any:
    fn = np.fft.fftn if forward else np.fft.ifftn
    return fn(self, axes=dim, norm=norm).astype(self.dtype, copy=False)


def _r2c(self: Any, dim: tuple, norm: str, onesided: bool) -> Any:
    out = np.fft.rfftn(self, axes=dim, norm=norm) if onesided else \
        np.fft.fftn(self, axes=dim, norm=norm)
    return out.astype(_complex_of(self.dtype), copy=False)


def _c2r(self: Any, dim: tuple, norm: str, last_dim_size: int) -> Any:
    sizes = [self.shape[d] for d in dim[:-1]] + [last_dim_size]
    out = np.fft.irfftn(self, s=sizes, axes=dim, norm=norm)
    return out.astype(np.float32 if self.dtype == np.complex64 else np.float64, copy=False)


def _r2c_vjp(grad: Any, self: Any, dim: tuple, norm: str, onesided: bool) -> Any:
    if onesided:  # zero-pad the half spectrum back to the signal's length
        last = dim[-1]
        if self.shape[last] != grad.shape[last]:
            full = list(grad.shape)
            full[last] = self.shape[last]
            grad = grad.new_zeros(full).slice_scatter(grad, last, 0, grad.shape[last])
    return grad._fft_c2c(dim, norm, True)


def _c2r_vjp(grad: Any, dim: tuple, norm: str, last_dim_size: int) -> Any:
    half = grad._fft_r2c(dim, INVERSE_NORM[norm], True)
    doubled = last_dim_size - half.shape[dim[-1]]  # bins standing for two conjugate bins
    if doubled > 0:
        weight = np.ones(half.shape[dim[-1]], dtype=np.float32)
        weight[1:1 + doubled] = 2
        shape = [1] * half.dim()
        shape[dim[-1]] = -1
        half = half * half.new_tensor(weight.reshape(shape), dtype=half.real.dtype)
    return half


defop("_fft_c2c", impl=_c2c, params=("dim", "norm", "forward"), node_name="FftC2CBackward0",
      vjp={"self": lambda grad, dim, norm, forward: grad._fft_c2c(dim, norm, forward)},
      jvp="linear")
defop("_fft_r2c", impl=_r2c, params=("dim", "norm", "onesided"), saves=("self",),
      node_name="FftR2CBackward0", vjp={"self": _r2c_vjp}, jvp="linear")
defop("_fft_c2r", impl=_c2r, params=("dim", "norm", "last_dim_size"),
      node_name="FftC2RBackward0", vjp={"self": _c2r_vjp}, jvp="linear")

# vmap: `dim` holds logical dimensions, shifted past the batch dimension
batches(["_fft_c2c", "_fft_r2c", "_fft_c2r"], dim_params("dim", none_all=False))
