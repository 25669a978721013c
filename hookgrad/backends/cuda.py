"""Mirrors: ``torch.backends.cuda`` on a CPU build: settable matmul and attention switches.

``matmul.allow_tf32`` and friends are recorded (no effect: NumPy never uses TF32); the
scaled-dot-product-attention backend switches are recorded too, hookgrad having one math kernel.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hookgrad.nn.attention import SDP_ENABLED, SDPBackend


__all__ = ["matmul", "is_built", "is_flash_attention_available", "is_ck_sdpa_available",
           "SDPBackend", "flash_sdp_enabled", "enable_flash_sdp",
           "mem_efficient_sdp_enabled", "enable_mem_efficient_sdp", "math_sdp_enabled",
           "enable_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp", "sdp_kernel",
           "fp16_bf16_reduction_math_sdp_allowed", "allow_fp16_bf16_reduction_math_sdp",
           "preferred_linalg_library", "preferred_blas_library"]

matmul = SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                         allow_bf16_reduced_precision_reduction=True)
# the switches torch.nn.attention.sdpa_kernel sets (one global context in PyTorch)
_sdp = SDP_ENABLED


def is_built() -> bool:
    """Mirrors: ``torch.backends.cuda.is_built``."""
    return False


def _pair(key: str) -> tuple:
    def enabled() -> bool:
        return _sdp[key]

    def enable(flag: bool) -> None:
        _sdp[key] = bool(flag)
    return enabled, enable


flash_sdp_enabled, enable_flash_sdp = _pair("flash")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _pair("mem_efficient")
math_sdp_enabled, enable_math_sdp = _pair("math")
cudnn_sdp_enabled, enable_cudnn_sdp = _pair("cudnn")
fp16_bf16_reduction_math_sdp_allowed, allow_fp16_bf16_reduction_math_sdp = _pair("fp16_math")


def sdp_kernel(enable_flash: bool = True, enable_math: bool = True,
               enable_mem_efficient: bool = True, enable_cudnn: bool = True) -> Any:
    """Set the attention switches for a block. Mirrors: ``torch.backends.cuda.sdp_kernel``."""
    holder = SimpleNamespace(**_sdp)
    return _SdpContext(holder, dict(flash=enable_flash, math=enable_math,
                                    mem_efficient=enable_mem_efficient, cudnn=enable_cudnn))


class _SdpContext:
    def __init__(self, holder: Any, values: dict) -> None:
        self.values, self.old = values, {}

    def __enter__(self) -> None:
        self.old = dict(_sdp)
        _sdp.update(self.values)

    def __exit__(self, *exc: Any) -> bool:
        _sdp.update(self.old)
        return False


def preferred_linalg_library(backend: Any = None) -> str:
    """Mirrors: ``torch.backends.cuda.preferred_linalg_library`` (always the default)."""
    return "default"


def preferred_blas_library(backend: Any = None) -> str:
    """Mirrors: ``torch.backends.cuda.preferred_blas_library``."""
    return "cublas"




def is_flash_attention_available() -> bool:
    """False: no CUDA flash-attention kernels. Mirrors: ``is_flash_attention_available``."""
    return False


def is_ck_sdpa_available() -> bool:
    """False: no ROCm CK attention kernels. Mirrors: ``is_ck_sdpa_available``."""
    return False

# The cuBLAS workspace sizes and the ROCm flash-attention preference (issue 21's census).
from hookgrad.backends.cuda_workspace import (  # noqa: E402
    blas_workspace_size,
    cublas_workspace_size,
    cublaslt_workspace_size,
    preferred_rocm_fa_library,
)

__all__ += ["blas_workspace_size", "cublas_workspace_size", "cublaslt_workspace_size",
            "preferred_rocm_fa_library"]
