"""``linear`` and ``dropout``: the two functional layers other functional families build on.

They sit below `hookgrad.nn.functional` (which re-exports them) so that attention can use them
without importing the facade that imports attention.
"""

from __future__ import annotations

from hookgrad._dispatch import autocast_lower
from hookgrad._functional import creation as _creation
from hookgrad._functional import linalg as _linalg
from hookgrad._functional import random as _random
from hookgrad._ops._checks import not_tensor
from hookgrad._tensor import Tensor

__all__ = ["linear", "dropout", "keep_noise"]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias`` with PyTorch's graph (``AddmmBackward0`` for 2-D input with
    bias, ``MmBackward0`` without, views around ``addmm`` for other contiguous input, ``matmul``
    then ``add`` for non-contiguous input).

    Mirrors: ``torch.nn.functional.linear``.
    """
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor)):
        bad = (input, "input", 1) if not isinstance(input, Tensor) else (weight, "weight", 2)
        raise not_tensor("linear", *bad)
    if not input._data.ndim or not weight._data.ndim:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are "
                           f"{input._data.ndim}D and {weight._data.ndim}D")
    wt = weight.t()  # type: ignore[attr-defined]
    if bias is None:
        return _linalg.matmul(input, wt)
    if input.dim() == 2:
        return _linalg.addmm(bias, input, wt)
    if not input._data.flags.c_contiguous:  # ATen flattens contiguous input only
        # (under CPU autocast linear is one narrow op in PyTorch: the bias joins narrow too)
        return _linalg.matmul(input, wt) + autocast_lower(bias)
    out = _linalg.addmm(bias, input.reshape(-1, input.size(-1)), wt)  # type: ignore[attr-defined]
    return out.view(*input.shape[:-1], weight.size(0))  # type: ignore[attr-defined]


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero elements with probability `p` and scale the rest by ``1/(1-p)`` (training only).

    The mask is drawn from hookgrad's generator, so it differs from PyTorch's for the same
    seed (statistics match). Evaluation mode (and ``p=0``) returns `input` itself.

    Mirrors: ``torch.nn.functional.dropout``.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"dropout(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input  # PyTorch returns the input object itself here
    if p == 1.0:
        mask = input.new_zeros(*input.shape)  # type: ignore[attr-defined]
    else:
        mask = keep_noise(tuple(input.shape), 1.0 - p, input)
        mask = mask.div_(1.0 - p)  # type: ignore[attr-defined]
    return input.mul_(mask) if inplace else input * mask  # type: ignore[attr-defined]


def keep_noise(shape: tuple, keep: float, like: Tensor) -> Tensor:
    """0/1 noise of `shape` in `like`'s dtype, 1 with probability `keep`, drawn as PyTorch's
    dropout draws it: ``empty_like(input).bernoulli_(keep)`` (the values fill the input's
    memory order) or, for the channel noise, ``new_empty(shape).bernoulli_(keep)``, so the
    mask equals PyTorch's for the same seed. Under vmap the noise is one sampler with the
    factories' randomness rule (`_random.bernoulli_noise`): ``"same"`` draws the logical shape
    once, ``"different"`` draws it with the batch size in front, as functorch's dropout does."""
    if _random.VMAP_RANDOM[0] is not None:
        return _random.bernoulli_noise(*shape, p=keep, dtype=like.dtype, device=like.device)
    if shape == tuple(like.shape):
        noise = _creation.empty_like(like)
    else:
        noise = _creation.empty(shape, dtype=like.dtype, device=like.device)
    return _random.bernoulli_(noise, keep)
