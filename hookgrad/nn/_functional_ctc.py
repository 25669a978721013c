"""The CTC loss of `hookgrad.nn.functional` (``ctc_loss``) and ``torch.ctc_loss``.

ATen's composite ``ctc_loss`` around the ``_ctc_loss`` primitive (`hookgrad._ops.ctc`): lengths
as integer tuples, an unbatched ``(T, C)`` input gets a batch of one, ``zero_infinity`` replaces
infinite losses by zero (``WhereBackward0``), ``mean`` divides each loss by its target length
(at least 1) before averaging. The checks are ATen's ``ctc_loss_allocate_outputs`` (same types
and messages).
"""

from __future__ import annotations

from typing import Any

from hookgrad._dispatch import bind
from hookgrad._functional import creation as _creation
from hookgrad._ops import ctc as _C
from hookgrad._tensor import Tensor
from hookgrad.nn._functional_loss import get_enum

__all__ = ["ctc_loss"]

_WHERE = " (while checking arguments for ctc_loss_allocate_outputs)"


def _lengths(value: Any, what: str) -> tuple:
    if isinstance(value, Tensor):
        if value.is_floating_point() or value.dtype.is_complex:  # type: ignore[attr-defined]
            raise RuntimeError(f"{what} must be integral")
        if hasattr(value, "_bt_level"):  # per-sample lengths under vmap: read per sample by
            return value.reshape(-1)  # the kernel (the batching fallback picks each sample's)
        return tuple(int(v) for v in value.reshape(-1).tolist())  # type: ignore[attr-defined]
    if isinstance(value, int):
        return (value,)
    return tuple(int(v) for v in value)


def _count(lengths: Any) -> int:
    return lengths.shape[0] if isinstance(lengths, Tensor) else len(lengths)


def _check(log_probs: Tensor, targets: Tensor, inputs: tuple, lengths: tuple,
           blank: int) -> None:
    t_max, n, c = log_probs.shape
    if not (0 <= blank < c):
        raise RuntimeError("blank must be in label range")
    if _count(inputs) != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if _count(lengths) != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    if not isinstance(lengths, tuple) or not isinstance(inputs, tuple):
        return  # per-sample lengths under vmap: the values are checked by no one, as ATen's
        # batched kernel (an out-of-range length reads padding, like PyTorch's vmap)
    if targets.dim() not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.dim()}-dimensional "
                           f"tensor for argument #2 'targets'{_WHERE}")
    for v in lengths:
        if v < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got "
                               f"value {v}{_WHERE}")
    if targets.dim() == 1 and targets.shape[0] != sum(lengths):
        raise RuntimeError(f"Expected tensor to have size {sum(lengths)} at dimension 0, but got "
                           f"size {targets.shape[0]} for argument #2 'targets'{_WHERE}")
    if targets.dim() == 2 and targets.shape[1] < max(lengths, default=0):
        raise RuntimeError(f"Expected tensor to have size at least {max(lengths)} at dimension "
                           f"1, but got size {targets.shape[1]} for argument #2 "
                           f"'targets'{_WHERE}")
    for v in inputs:
        if v < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value "
                               f"{v}{_WHERE}")
        if v > t_max:
            raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got "
                               f"value {v}{_WHERE}")
    if not log_probs.is_floating_point():
        kind = log_probs.type().split(".")[-1].replace("Tensor", "")  # type: ignore[attr-defined]
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{kind}'")


def _ctc(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
         blank: int, reduction: int, zero_infinity: bool) -> Tensor:
    if isinstance(input_lengths, Tensor) != isinstance(target_lengths, Tensor):
        raise TypeError("ctc_loss() received an invalid combination of arguments: "
                        "input_lengths and target_lengths must both be tensors or both be "
                        "tuples of ints")
    inputs = _lengths(input_lengths, "input_lengths")
    lengths = _lengths(target_lengths, "target_lengths")
    unbatched = log_probs.dim() == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs  # type: ignore[attr-defined]
    tg = targets  # unbatched 1-d targets read as the concatenated layout, as in ATen
    _check(lp, tg, inputs, lengths, blank)
    res = bind(_C.CTC_LOSS, (lp, tg), {"input_lengths": inputs, "target_lengths": lengths,
                                       "blank": int(blank), "zero_infinity": bool(zero_infinity)})[0]
    if zero_infinity:
        res = res.where(res != float("inf"), _creation.zeros((), dtype=res.dtype,
                                                                  device=res.device))  # type: ignore
    if reduction == 1:
        div = (lengths.to(res.dtype) if isinstance(lengths, Tensor) else  # type: ignore
               _creation.tensor(list(lengths), dtype=res.dtype,  # on the loss's device
                                device=res.device)).clamp_min(1)  # type: ignore
        return (res / div).mean()  # type: ignore[attr-defined]
    if reduction == 2:
        return res.sum()  # type: ignore[attr-defined]
    return res.squeeze(0) if unbatched else res  # type: ignore[attr-defined]


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification loss of `log_probs` ``(T, N, C)`` against padded
    ``(N, S)`` or concatenated targets.

    Mirrors: ``torch.nn.functional.ctc_loss``.
    """
    return _ctc(log_probs, targets, input_lengths, target_lengths, blank, get_enum(reduction),
                zero_infinity)


def torch_ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
                   blank: int = 0, reduction: int = 1, zero_infinity: bool = False) -> Tensor:
    """ATen's spelling: integer `reduction` (0 none, 1 mean, 2 sum).

    Mirrors: ``torch.ctc_loss``.
    """
    return _ctc(log_probs, targets, input_lengths, target_lengths, blank, reduction,
                zero_infinity)


torch_ctc_loss.__name__ = torch_ctc_loss.__qualname__ = "ctc_loss"

TORCH_FUNCTIONS = {"ctc_loss": torch_ctc_loss}
