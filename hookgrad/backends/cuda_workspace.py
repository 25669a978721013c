"""The cuBLAS/cuBLASLt workspace sizes and the ROCm flash-attention backend of
``torch.backends.cuda``, as a CPU-only build of PyTorch answers them.

A CPU build has no cuBLAS: querying a workspace size fails with the ``AttributeError`` PyTorch
raises there (its Python wrapper reaches for a ``torch._C`` binding that only CUDA builds have),
after the same argument checks. The ROCm flash-attention preference is a plain setting PyTorch
keeps even without ROCm, so it is kept here too.

Mirrors: ``torch.backends.cuda.blas_workspace_size``, ``cublas_workspace_size``,
``cublaslt_workspace_size``, ``preferred_rocm_fa_library``.
"""

from __future__ import annotations

import enum
from typing import Any

__all__ = ["blas_workspace_size", "cublas_workspace_size", "cublaslt_workspace_size",
           "preferred_rocm_fa_library", "_ROCmFABackend"]


class _ROCmFABackend(enum.Enum):
    """Flash-attention libraries of ROCm builds. Mirrors: ``torch._C._ROCmFABackend``."""

    Default = 0
    AOTriton = 1
    Ck = 2

    def __repr__(self) -> str:
        return f"<_ROCmFABackend.{self.name}: {self.value}>"


_ROCM_FA = {"default": _ROCmFABackend.Default, "aotriton": _ROCmFABackend.AOTriton,
            "ck": _ROCmFABackend.Ck}
# torch.backends.cuda._BlasBackends: the hip spellings name the same libraries.
_BLAS = {"default": "cublas", "cublas": "cublas", "hipblas": "cublas", "cublaslt": "cublaslt",
         "hipblaslt": "cublaslt", "ck": "ck"}
_preferred_fa = [_ROCmFABackend.Default]


def _no_binding(name: str) -> AttributeError:
    return AttributeError(f"module 'torch._C' has no attribute '{name}'")


def cublas_workspace_size(size: int | None = None) -> int:
    """Query or set the cuBLAS workspace size: raises, as a build without CUDA does.

    Mirrors: ``torch.backends.cuda.cublas_workspace_size``.
    """
    raise _no_binding("_cuda_setCublasWorkspaceSize" if size is not None
                      else "_cuda_getCublasWorkspaceSize")


def cublaslt_workspace_size(size: int | None = None) -> int:
    """Query or set the cuBLASLt workspace size: raises, as a build without CUDA does.

    Mirrors: ``torch.backends.cuda.cublaslt_workspace_size``.
    """
    raise _no_binding("_cuda_setCublasLtWorkspaceSize" if size is not None
                      else "_cuda_getCublasLtWorkspaceSize")


def blas_workspace_size(size: int | None = None, backend: Any = None) -> int:
    """The workspace size of `backend` (default: the preferred BLAS library).

    Raises:
        RuntimeError: an unknown backend, or CK (which has no workspace).
        AttributeError: the cuBLAS query itself, as on PyTorch's CPU build.

    Mirrors: ``torch.backends.cuda.blas_workspace_size``.
    """
    if backend is None:
        resolved = "cublas"
    elif isinstance(backend, str):
        if backend not in _BLAS:
            raise RuntimeError("Unknown backend string. Choose from: "
                               + ", ".join(_BLAS) + ".")
        resolved = _BLAS[backend]
    else:
        raise RuntimeError("Unknown backend type.")
    if resolved == "ck":
        raise RuntimeError("CK backend does not use a workspace.")
    if resolved == "cublaslt":
        return cublaslt_workspace_size(size)
    return cublas_workspace_size(size)


def preferred_rocm_fa_library(backend: Any = None) -> _ROCmFABackend:
    """Read, or set and read, the preferred ROCm flash-attention library.

    Mirrors: ``torch.backends.cuda.preferred_rocm_fa_library`` (members of
    ``torch._C._ROCmFABackend``; the setting has no effect without ROCm, as in PyTorch).
    """
    if isinstance(backend, str):
        if backend not in _ROCM_FA:
            raise RuntimeError("Unknown input value. Choose from: " + ", ".join(_ROCM_FA) + ".")
        _preferred_fa[0] = _ROCM_FA[backend]
    elif isinstance(backend, _ROCmFABackend):
        _preferred_fa[0] = backend
    elif backend is not None:
        raise ValueError("Unknown input value. Choose from: " + ", ".join(_ROCM_FA) + ".")
    return _preferred_fa[0]
