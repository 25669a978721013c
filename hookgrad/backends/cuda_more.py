"""The rest of ``torch.backends.cuda`` a CPU build answers: SDPA kernel checks, cuFFT plan
caches and the cuBLAS settings object.

Mirrors: ``torch.backends.cuda.SDPAParams``, ``can_use_flash_attention``,
``can_use_efficient_attention``, ``can_use_cudnn_attention`` (always False: no CUDA kernel can
run), ``cuFFTPlanCache``, ``cuFFTPlanCacheManager``, ``cuFFTPlanCacheAttrContextProp``,
``cufft_plan_cache`` (no CUDA device: indexing raises PyTorch's RuntimeError, reading a setting
of the current device its AssertionError, a cache's settings its RuntimeError) and
``cuBLASModule`` (reads and writes the flags of ``backends.cuda.matmul``).
"""

from __future__ import annotations

from typing import Any

from hookgrad.backends import cuda as _cuda

__all__ = ["SDPAParams", "can_use_flash_attention", "can_use_efficient_attention",
           "can_use_cudnn_attention", "cuFFTPlanCacheAttrContextProp", "cuFFTPlanCache",
           "cuFFTPlanCacheManager", "cufft_plan_cache", "cuBLASModule", "install"]

_NO_CUDA = "Torch not compiled with CUDA enabled"


class SDPAParams:
    """The inputs of a scaled-dot-product-attention call, as the kernel checks receive them.

    Mirrors: ``torch.backends.cuda.SDPAParams``.
    """

    def __init__(self, query: Any, key: Any, value: Any, attn_mask: Any, dropout: float,
                 is_causal: bool, enable_gqa: bool = False) -> None:
        self.query, self.key, self.value, self.attn_mask = query, key, value, attn_mask
        self.dropout, self.is_causal, self.enable_gqa = dropout, is_causal, enable_gqa


def _can_use(name: str) -> Any:
    def check(params: SDPAParams, debug: bool = False) -> bool:
        if not isinstance(params, SDPAParams):
            raise TypeError(f"_{name}(): incompatible function arguments: expected SDPAParams")
        return False

    check.__name__ = name
    check.__doc__ = f"False: no CUDA kernel runs on a CPU build. Mirrors: ``{name}``."
    return check


can_use_flash_attention = _can_use("can_use_flash_attention")
can_use_efficient_attention = _can_use("can_use_efficient_attention")
can_use_cudnn_attention = _can_use("can_use_cudnn_attention")


class cuFFTPlanCacheAttrContextProp:  # noqa: N801 - torch's name
    """A plan-cache setting read through the owning cache's device.

    Mirrors: ``torch.backends.cuda.cuFFTPlanCacheAttrContextProp``.
    """

    def __init__(self, getter: Any, setter: Any) -> None:
        self.getter, self.setter = getter, setter

    def __get__(self, obj: Any, objtype: Any) -> Any:
        return self.getter(obj.device_index)

    def __set__(self, obj: Any, val: Any) -> None:
        if isinstance(self.setter, str):
            raise RuntimeError(self.setter)
        self.setter(obj.device_index, val)


def _no_cuda(*args: Any) -> Any:
    raise RuntimeError("Cannot access cuFFT plan cache without ATen_cuda library (hookgrad, like "
                       "PyTorch's CPU build, has no CUDA library).")


class cuFFTPlanCache:  # noqa: N801 - torch's name
    """The cuFFT plan cache of one device. Mirrors: ``torch.backends.cuda.cuFFTPlanCache``."""

    size = cuFFTPlanCacheAttrContextProp(_no_cuda, ".size is a read-only property showing the "
                                         "number of plans currently in the cache. To change the "
                                         "cache capacity, set cufft_plan_cache.max_size.")
    max_size = cuFFTPlanCacheAttrContextProp(_no_cuda, _no_cuda)

    def __init__(self, device_index: int) -> None:
        self.device_index = device_index

    def clear(self) -> None:
        """Raises: no CUDA device."""
        _no_cuda()


class cuFFTPlanCacheManager:  # noqa: N801 - torch's name
    """Per-device plan caches; a CPU build has no device to index.

    Mirrors: ``torch.backends.cuda.cuFFTPlanCacheManager``.
    """

    def __getitem__(self, device: Any) -> cuFFTPlanCache:
        index = device if isinstance(device, int) else getattr(device, "index", None)
        if isinstance(device, str):
            index = int(device.split(":")[1]) if ":" in device else -1
        index = -1 if index is None else index
        raise RuntimeError(f"cufft_plan_cache: expected 0 <= device index < 0, but got device "
                           f"with index {index}")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise AssertionError(_NO_CUDA)  # PyTorch asks for the current CUDA device first


cufft_plan_cache = cuFFTPlanCacheManager()

_CUBLAS = {"allow_tf32": "allow_tf32",
           "allow_fp16_reduced_precision_reduction": "allow_fp16_reduced_precision_reduction",
           "allow_bf16_reduced_precision_reduction": "allow_bf16_reduced_precision_reduction"}


class cuBLASModule:  # noqa: N801 - torch's name
    """The ``backends.cuda.matmul`` settings object.

    Mirrors: ``torch.backends.cuda.cuBLASModule``.
    """

    def __getattr__(self, name: str) -> Any:
        if name in _CUBLAS:
            return getattr(_cuda.matmul, _CUBLAS[name])
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _CUBLAS:
            raise AttributeError("Unknown attribute " + name)
        setattr(_cuda.matmul, _CUBLAS[name], value)


def install() -> None:
    """Add these names to ``hookgrad.backends.cuda`` where it has none of its own."""
    for name in __all__[:-1]:
        if not hasattr(_cuda, name):
            setattr(_cuda, name, globals()[name])
