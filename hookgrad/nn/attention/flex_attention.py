"""Flexible attention. Mirrors: ``torch.nn.attention.flex_attention``.

The mask combinators (`noop_mask`, `and_masks`, `or_masks`), `create_mask` and the auxiliary
types work as PyTorch's (`create_mask` calls the mask function once on broadcast index tensors
where PyTorch vmaps it, which gives the same mask for the element-wise mask functions vmap
accepts). `flex_attention`, `create_block_mask` and `BlockMask` need PyTorch's block-sparse
kernels and raise NotImplementedError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from hookgrad._dtypes import bool_
from hookgrad._functional import creation as _creation
from hookgrad._tensor import Tensor

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions",
           "create_block_mask", "create_mask", "or_masks", "and_masks", "noop_mask"]

# PyTorch's block sizes (the block mask granularity); libraries read them as defaults
_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30

_UNSUPPORTED = ("hookgrad has no flex attention kernel (PyTorch's block-sparse attention); use "
                "scaled_dot_product_attention with a mask from create_mask instead")


class AuxRequest(NamedTuple):
    """Which auxiliary outputs to compute. Mirrors: ``flex_attention.AuxRequest``."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """Auxiliary outputs. Mirrors: ``flex_attention.AuxOutput``."""

    lse: Tensor | None = None
    max_scores: Tensor | None = None


class FlexKernelOptions(dict):
    """Kernel tuning options (a TypedDict in PyTorch). Mirrors:
    ``flex_attention.FlexKernelOptions``."""


class BlockMask:
    """Block-sparse mask. Mirrors: ``flex_attention.BlockMask`` (not constructible here)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(_UNSUPPORTED)


def flex_attention(query: Tensor, key: Tensor, value: Tensor, score_mod: Any = None,
                   block_mask: Any = None, scale: float | None = None, enable_gqa: bool = False,
                   return_lse: bool = False, kernel_options: Any = None, *,
                   return_aux: Any = None) -> Any:
    """Mirrors: ``flex_attention.flex_attention`` (raises NotImplementedError)."""
    raise NotImplementedError(_UNSUPPORTED)


def create_block_mask(mask_mod: Callable, B: int | None, H: int | None, Q_LEN: int,
                      KV_LEN: int, device: Any = None, BLOCK_SIZE: Any = 128, _compile: bool = False,
                      separate_full_blocks: bool = True, compute_dq_write_order: bool = False,
                      dq_kv_order: bool = True) -> BlockMask:
    """Mirrors: ``flex_attention.create_block_mask`` (raises NotImplementedError)."""
    raise NotImplementedError(_UNSUPPORTED)


def noop_mask(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor) -> Tensor:
    """Every position may attend. Mirrors: ``flex_attention.noop_mask``."""
    return batch.new_ones((), dtype=bool_)  # type: ignore[attr-defined]


def _combine(mask_mods: tuple, start: bool, op: Callable) -> Callable:
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def combined(b: Tensor, h: Tensor, q_idx: Tensor, kv_idx: Tensor) -> Tensor:
        result = (b.new_ones if start else b.new_zeros)((), dtype=bool_)  # type: ignore
        for mask in mask_mods:
            result = op(result, mask(b, h, q_idx, kv_idx))
        return result

    return combined


def or_masks(*mask_mods: Callable) -> Callable:
    """The union of `mask_mods`. Mirrors: ``flex_attention.or_masks``."""
    return _combine(mask_mods, False, lambda a, b: a | b)


def and_masks(*mask_mods: Callable) -> Callable:
    """The intersection of `mask_mods`. Mirrors: ``flex_attention.and_masks``."""
    return _combine(mask_mods, True, lambda a, b: a & b)


def create_mask(mod_fn: Callable, B: int | None, H: int | None, Q_LEN: int, KV_LEN: int,
                device: Any = None) -> Tensor:
    """The ``(B, H, Q_LEN, KV_LEN)`` boolean mask of a mask function (or of a score function:
    True where it does not give ``-inf``). Mirrors: ``flex_attention.create_mask``."""
    import inspect

    B, H = B or 1, H or 1
    b = _creation.arange(B).reshape(B, 1, 1, 1)  # type: ignore[attr-defined]
    h = _creation.arange(H).reshape(1, H, 1, 1)  # type: ignore[attr-defined]
    m = _creation.arange(Q_LEN).reshape(1, 1, Q_LEN, 1)  # type: ignore[attr-defined]
    n = _creation.arange(KV_LEN).reshape(1, 1, 1, KV_LEN)  # type: ignore[attr-defined]
    shape = (B, H, Q_LEN, KV_LEN)
    if len(inspect.signature(mod_fn).parameters) == 5:  # a score_mod
        out = mod_fn(_creation.zeros(*shape), b, h, m, n)
        return out.isneginf().logical_not().expand(*shape).contiguous()  # type: ignore
    return mod_fn(b, h, m, n).expand(*shape).contiguous()  # type: ignore[attr-defined]
