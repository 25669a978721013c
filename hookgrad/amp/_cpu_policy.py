"""CPU autocast: which primitives run in which dtype inside ``autocast("cpu")``, and the
interception in `bind` that casts their inputs.

Mirrors: the ``AutocastCPU`` kernels of PyTorch (``aten/src/ATen/autocast_mode.cpp``). hookgrad
intercepts primitives, the level `bind` sees, so the table names hookgrad primitives; where a
PyTorch op listed there is a composite here (``linear`` is ``addmm`` between views,
``matmul`` is ``mm``/``bmm``), the primitive it reaches carries the policy.

NOTE [CPU autocast policy]
Three policies, read from PyTorch's CPU lists:

* LOWER: matrix products and convolutions (``mm``, ``bmm``, ``addmm``, ``baddbmm``, the
  ``convolution`` behind conv1d/2d/3d and conv_transpose*, ``prelu``'s kernel, the recurrent
  layer kernel): every float32 input is cast to the autocast dtype (bfloat16 unless
  ``dtype=`` chose float16), so the op computes and returns in the narrow type.
* FP32: ops whose results would lose too much in the narrow type (the losses: mse, nll,
  binary cross entropy with and without logits, huber, smooth L1, CTC; ``prod``; FFTs; the
  LAPACK-backed linalg ops; 3-D pooling, padding by reflection/replication, unpooling,
  grid sampling, ``polar``): every narrow floating input is cast to float32.
  Composites of that list call ``_dispatch.autocast_float32`` on their input (``cross_entropy``:
  PyTorch computes its ``log_softmax`` in float32 too); ``linear``'s matmul-then-add form casts
  its bias with ``_dispatch.autocast_lower``.
* PROMOTE: ops joining several tensors (``cat``, ``stack``, ``index_copy``): all floating
  inputs are cast to the widest floating dtype among them.

Everything else runs in its inputs' dtype. As in PyTorch, float64 tensors are never cast, the
casts are ordinary differentiable ``_to_copy`` ops (so float32 parameters get float32
gradients back through ``ToCopyBackward0``), and with ``cache_enabled`` the narrow copy of a
float32 leaf that requires grad is made once per outermost autocast region and reused.
"""

from __future__ import annotations

import weakref
from typing import Any

from hookgrad import _dispatch
from hookgrad._dtypes import float32, float64, promote_types
from hookgrad._tensor import Tensor
from hookgrad.utils import _python_dispatch as _pd

__all__ = ["POLICY", "activate", "clear_cache"]

LOWER, FP32, PROMOTE = "lower", "fp32", "promote"

POLICY: dict[str, str] = {
    **dict.fromkeys(("mm", "bmm", "addmm", "baddbmm", "convolution", "_prelu_kernel",
                     "mkldnn_rnn_layer"), LOWER),
    **dict.fromkeys((
        "mse_loss", "nll_loss", "nll_loss2d", "binary_cross_entropy",
        "binary_cross_entropy_with_logits", "huber_loss", "smooth_l1_loss", "_ctc_loss",
        "prod", "prod_dim_int", "_fft_c2c", "_fft_r2c", "_fft_c2r", "polar",
        "linalg_cholesky_ex", "linalg_eigh", "linalg_qr", "linalg_svd", "linalg_solve_ex",
        "linalg_lu_factor_ex", "linalg_lu_solve", "linalg_solve_triangular", "linalg_lu",
        "avg_pool3d", "max_pool3d_with_indices", "_adaptive_avg_pool3d", "adaptive_max_pool3d",
        "fractional_max_pool2d", "fractional_max_pool3d", "max_unpool2d", "max_unpool3d",
        "reflection_pad1d", "reflection_pad2d", "replication_pad1d", "replication_pad2d",
        "replication_pad3d", "grid_sampler_2d", "grid_sampler_3d"), FP32),
    **dict.fromkeys(("cat", "stack", "index_copy"), PROMOTE),
}

_STATE: dict[str, Any] = {"enabled": False, "dtype": None, "cache": True}
_INSIDE = [False]  # the next `bind` call is the handler's own (its inputs are already cast)
_CACHE: dict[int, tuple] = {}


def _eligible(t: Any) -> bool:
    return (isinstance(t, Tensor) and t.is_floating_point() and t.dtype is not float64
            and t.device.type == "cpu")


def _cast(t: Any, target: Any) -> Any:
    if not _eligible(t) or t.dtype is target:
        return t
    cacheable = (_STATE["cache"] and target is _STATE["dtype"] and t.dtype is float32
                 and t.requires_grad and t.grad_fn is None and t._base is None)
    if not cacheable:
        return t.to(target)
    hit = _CACHE.get(id(t))
    if hit is not None and hit[0]() is t:
        return hit[1]
    out = t.to(target)
    _CACHE[id(t)] = (weakref.ref(t), out)
    return out


def _handle(prim: Any, inputs: tuple, params: dict, cast: Any, target: Any = None) -> Any:
    if _INSIDE[0]:
        _INSIDE[0] = False
        return _pd.MISS
    policy = POLICY.get(prim.name) if _STATE["enabled"] and target is None else None
    if policy is None:
        return _pd.MISS
    if policy is LOWER:
        to = _STATE["dtype"]
    elif policy is FP32:
        to = float32
    else:
        to = _STATE["dtype"]
        for t in inputs:
            if _eligible(t):
                to = promote_types(to, t.dtype)
    new = tuple(_cast(t, to) for t in inputs)
    if all(a is b for a, b in zip(new, inputs)):
        return _pd.MISS
    _INSIDE[0] = True
    try:
        return _dispatch.bind(prim, new, params, None if cast is None or
                              cast.is_floating_point else cast)
    finally:
        _INSIDE[0] = False


def activate(enabled: bool, dtype: Any, cache: bool) -> None:
    """Switch the interception on or off (`bind` consults it through the dispatch-mode gate;
    functionals that check operand dtypes skip the check while ``AUTOCAST[0]`` is set)."""
    was = _STATE["enabled"]
    _STATE.update(enabled=bool(enabled), dtype=dtype, cache=bool(cache))
    if enabled and not was:
        _dispatch.AUTOCAST[:] = [_handle, lambda t: _cast(t, float32),
                                 lambda t: _cast(t, _STATE["dtype"])]
        _pd.ACTIVE[0] += 1
    elif was and not enabled:
        _dispatch.AUTOCAST[:] = [None, None, None]
        _pd.ACTIVE[0] -= 1


def clear_cache() -> None:
    """Drop the cached narrow copies. Mirrors: ``torch.clear_autocast_cache`` (CPU part)."""
    _CACHE.clear()
