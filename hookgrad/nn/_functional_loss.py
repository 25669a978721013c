"""Loss functions of ``hookgrad.nn.functional`` (split out to keep files small).

Fused losses call their primitive (one node, as PyTorch shows); composite losses (``l1_loss``,
``kl_div``, label smoothing, class-probability targets) are written with public ops so their
graphs show PyTorch's nodes.
"""

from __future__ import annotations

import warnings
from typing import Any

from hookgrad._ops._checks import tensor_arguments
from hookgrad._dispatch import autocast_float32, bind
from hookgrad._functional._common import result_type
from hookgrad._functional.nn_ops import log_softmax
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

__all__ = [
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
]


# ---------------------------------------------------------------- reduction arguments
def get_enum(reduction: str) -> int:
    """Mirrors: ``torch.nn._reduction.get_enum``."""
    if reduction == "none":
        return 0
    if reduction == "mean":
        return 1
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", UserWarning, stacklevel=3)
        return 1
    if reduction == "sum":
        return 2
    raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_get_string(size_average: Any, reduce: Any, emit_warning: bool = True) -> str:
    """Mirrors: ``torch.nn._reduction.legacy_get_string``."""
    warning = "size_average and reduce args will be deprecated, please use reduction='{}' instead."
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(warning.format(ret), UserWarning, stacklevel=3)
    return ret


def _reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return legacy_get_string(size_average, reduce)
    return reduction


def _warn_size(input: Tensor, target: Tensor) -> None:
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


def _broadcast(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor]:
    if input.shape == target.shape:
        return input, target
    from hookgrad._ops._shapes import broadcast_shapes

    shape = broadcast_shapes(input.shape, target.shape)
    return input.expand(*shape), target.expand(*shape)  # type: ignore[attr-defined]


def _common_dtype(x: Tensor, t: Tensor) -> Any:
    """The cast `bind` needs when input and target differ in dtype: PyTorch's kernels compute
    in the promoted dtype (float32 input, int64 target -> float32), and the gradient goes back
    to each input in its own dtype. None when they already agree."""
    if x._data.dtype == t._data.dtype:
        return None
    return result_type(x, t)


def _apply_reduction(loss: Tensor, reduction: str) -> Tensor:
    red = get_enum(reduction)
    if red == 1:
        return loss.mean()  # type: ignore[attr-defined]
    if red == 2:
        return loss.sum()  # type: ignore[attr-defined]
    return loss


def _weighted(loss: Tensor, weight: Tensor, input: Tensor, reduction: str) -> Tensor:
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()  # type: ignore[attr-defined]
    if reduction == "mean":
        return loss.sum() / weight.sum()  # type: ignore[attr-defined]
    raise ValueError(
        f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'."
    )


# ---------------------------------------------------------------- regression
def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean squared error (``MseLossBackward0``). Mirrors: ``torch.nn.functional.mse_loss``."""
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    x, t = _broadcast(input, target)
    if weight is not None:
        return _weighted((x - t).pow(2), weight, input, reduction)  # type: ignore[attr-defined]
    if t._data.dtype.kind == "b":  # the backward rule subtracts the target: no bool there
        t = t.to(result_type(x, t))  # type: ignore[attr-defined]
    return bind(P["mse_loss"], (x, t), {"reduction": get_enum(reduction)}, _common_dtype(x, t))


def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean absolute error (composite: ``abs(input - target)`` then the reduction).

    Mirrors: ``torch.nn.functional.l1_loss``.
    """
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    x, t = _broadcast(input, target)
    if weight is not None:
        return _weighted((x - t).abs(), weight, input, reduction)  # type: ignore[attr-defined]
    return _apply_reduction((x - t).abs(), reduction)  # type: ignore[attr-defined]


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """Smooth L1 (``SmoothL1LossBackward0``; ``beta=0`` is ``l1_loss``).

    Mirrors: ``torch.nn.functional.smooth_l1_loss``.
    """
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    x, t = _broadcast(input, target)
    if beta == 0.0:
        return _apply_reduction((x - t).abs(), reduction)  # type: ignore[attr-defined]
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if t._data.dtype.kind == "b":  # the backward rule subtracts the target: no bool there
        t = t.to(result_type(x, t))  # type: ignore[attr-defined]
    return bind(P["smooth_l1_loss"], (x, t), {"reduction": get_enum(reduction), "beta": beta},
                _common_dtype(x, t))


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """Huber loss (``HuberLossBackward0``). Mirrors: ``torch.nn.functional.huber_loss``."""
    if not delta > 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _warn_size(input, target)
    x, t = _broadcast(input, target)
    if weight is None:
        return bind(P["huber_loss"], (x, t), {"reduction": get_enum(reduction), "delta": delta})
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    loss = bind(P["huber_loss"], (x, t), {"reduction": 0, "delta": delta}) * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()  # type: ignore[attr-defined]
    if reduction == "mean":
        return loss.mean()  # type: ignore[attr-defined]
    raise ValueError(
        f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'."
    )


# ---------------------------------------------------------------- classification
def _check_nll(input: Tensor, target: Tensor) -> None:
    # in PyTorch's order: the Python wrapper's shape checks, then the kernel's
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() >= 2 and target.dim() >= 1 and input.size(0) != target.size(0):
        raise ValueError(
            f"Expected input batch_size ({input.size(0)}) to match target batch_size "
            f"({target.size(0)})."
        )
    if target.dtype.is_floating_point:
        raise RuntimeError(
            "expected target dtype to be Long or Byte, but got "
            f"{target.dtype.legacy_name[:-6]}"
        )
    if input.dim() <= 2 and target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")


@tensor_arguments
def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """Negative log likelihood over class indices (``NllLossBackward0``, or
    ``NllLoss2DBackward0`` for inputs with spatial dims).

    Mirrors: ``torch.nn.functional.nll_loss``.
    """
    reduction = _reduction(size_average, reduce, reduction)
    _check_nll(input, target)
    classes = input.size(1) if input.dim() >= 2 else input.size(0)
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or "
                           f"no classes but got weight tensor of shape: {list(weight.shape)}")
    params = {"weight": weight, "reduction": get_enum(reduction), "ignore_index": ignore_index}
    if input.dim() <= 2:
        return bind(P["nll_loss"], (input, target), params)
    n, c = input.size(0), input.size(1)
    if input.dim() == 4:
        return bind(P["nll_loss2d"], (input, target), params)
    # ATen's nll_loss_nd: the spatial dims flattened into the last one, (N, C, 1, -1)
    x = input.reshape(n, c, 1, -1)  # type: ignore[attr-defined]
    t = target.reshape(n, 1, -1)  # type: ignore[attr-defined]
    out = bind(P["nll_loss2d"], (x, t), params)
    return out.reshape(*target.shape) if params["reduction"] == 0 else out  # type: ignore


@tensor_arguments
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """``log_softmax`` then ``nll_loss``; class-probability targets and label smoothing
    follow PyTorch's composite formulas.

    Mirrors: ``torch.nn.functional.cross_entropy``.
    """
    reduction = _reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(
            f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}"
        )
    class_dim = 0 if input.dim() == 1 else 1
    input = autocast_float32(input)  # float32 under CPU autocast, as PyTorch's
    logp = log_softmax(input, class_dim)
    if input.shape == target.shape:
        if not target.dtype.is_floating_point:
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                f"{target.dtype.legacy_name[:-6]}"
            )
        return _ce_probs(logp, target, weight, reduction, label_smoothing, class_dim)
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0.0:
        return nll
    return _ce_smoothing(logp, target, weight, reduction, ignore_index, label_smoothing,
                         class_dim, nll)


def _class_weight(weight: Tensor, logp: Tensor, class_dim: int) -> Tensor:
    shape = [1] * logp.dim()
    shape[class_dim] = weight.size(0)
    return weight.view(*shape)  # type: ignore[attr-defined]


def _ce_probs(logp: Tensor, target: Tensor, weight: Any, reduction: str, smoothing: float,
              class_dim: int) -> Tensor:
    n_classes = logp.size(class_dim)
    if smoothing > 0.0:
        target = bind(P["_nn_add_scalar"], (_mul_scalar(target, 1 - smoothing),),
                      {"other": smoothing / n_classes})
    prod = logp * target
    if weight is not None:
        prod = prod * _class_weight(weight, logp, class_dim)
    red = get_enum(reduction)
    if red == 0:
        return -prod.sum(class_dim)  # type: ignore[attr-defined]
    if red == 2:
        return -prod.sum()  # type: ignore[attr-defined]
    return _div_scalar(-prod.sum(), logp.numel() / n_classes)  # type: ignore[attr-defined]


def _ce_smoothing(logp: Tensor, target: Tensor, weight: Any, reduction: str, ignore_index: int,
                  smoothing: float, class_dim: int, nll: Tensor) -> Tensor:
    n_classes = logp.size(class_dim)
    ignore_mask = target == ignore_index
    if weight is not None:
        smooth = -(logp * _class_weight(weight, logp, class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)  # type: ignore[attr-defined]
    smooth = smooth.masked_fill(ignore_mask, 0.0)  # type: ignore[attr-defined]
    red = get_enum(reduction)
    if red == 1:
        if weight is not None:
            kept = target[~ignore_mask].reshape(-1)  # type: ignore[index]
            ret = smooth.sum() / weight.gather(0, kept).sum()  # type: ignore[attr-defined]
        else:
            ret = smooth.sum() / (~ignore_mask).sum()  # type: ignore[attr-defined]
    elif red == 2:
        ret = smooth.sum()  # type: ignore[attr-defined]
    else:
        ret = smooth
    return _mul_scalar(nll, 1 - smoothing) + _mul_scalar(ret, smoothing / n_classes)


def _mul_scalar(t: Tensor, value: float) -> Tensor:
    """``t * value`` through ATen's ``mul.Scalar`` (node ``MulBackward1``, as C++ composites)."""
    return bind(P["_nn_mul_scalar"], (t,), {"other": value})


def _div_scalar(t: Tensor, value: float) -> Tensor:
    """``t / value`` through ATen's ``div.Scalar`` (node ``DivBackward1``)."""
    return bind(P["_nn_div_scalar"], (t,), {"other": value})


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """Binary cross entropy on probabilities (``BinaryCrossEntropyBackward0``; log clamped at
    -100).

    Mirrors: ``torch.nn.functional.binary_cross_entropy``.
    """
    red = get_enum(_reduction(size_average, reduce, reduction))
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        from hookgrad._ops._shapes import broadcast_shapes

        weight = weight.expand(*broadcast_shapes(target.shape, weight.shape))  # type: ignore
    return bind(P["binary_cross_entropy"], (input, target), {"weight": weight, "reduction": red})


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average: Any = None, reduce: Any = None,
                                     reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """Sigmoid + binary cross entropy, fused and stable
    (``BinaryCrossEntropyWithLogitsBackward0``).

    Mirrors: ``torch.nn.functional.binary_cross_entropy_with_logits``.
    """
    red = get_enum(_reduction(size_average, reduce, reduction))
    if not (target.size() == input.size()):
        raise ValueError(
            f"Target size ({target.size()}) must be the same as input size ({input.size()})"
        )
    if input.is_floating_point() and not target.is_floating_point():
        raise RuntimeError(f"result type {input.dtype.legacy_name[:-6]} can't be cast to the "
                           f"desired output type {target.dtype.legacy_name[:-6]}")
    return bind(P["binary_cross_entropy_with_logits"], (input, target),
                {"weight": weight, "pos_weight": pos_weight, "reduction": red})


@tensor_arguments
def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence with `input` as log-probabilities (composite).

    Mirrors: ``torch.nn.functional.kl_div``.
    """
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
        enum_reduction = reduction
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support "
                "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
                "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
                "major release.",
                UserWarning,
                stacklevel=2,
            )
        enum_reduction = "sum" if reduction == "batchmean" else reduction
        get_enum(enum_reduction)
    if not (input.is_floating_point() and target.is_floating_point()):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        out = target.exp() * (target - input)  # type: ignore[attr-defined]
    else:
        out = _xlogy_self(target) - target * input
    reduced = _apply_reduction(out, enum_reduction)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


def _xlogy_self(target: Tensor) -> Tensor:
    """``xlogy(target, target)`` (0 where target is 0)."""
    if hasattr(target, "xlogy"):
        return target.xlogy(target)  # type: ignore[attr-defined]
    safe = target.masked_fill(target == 0, 1.0)  # type: ignore[attr-defined]
    return target * safe.log()  # type: ignore[attr-defined]
