"""Tensor methods and argument spellings real libraries use that hookgrad lacked (issue 21).

Mirrors: ``torch.Tensor.fill_diagonal_`` (pytorch-metric-learning masks self-pairs with it), and
PyTorch's NumPy-style keyword aliases: every function with a ``dim``/``keepdim`` argument also
takes ``axis``/``keepdims`` (torchcde calls ``torch.cat(..., axis=-2)``). Most hookgrad
reductions already accept them; `install` adds them to the functions that did not, in the
``hookgrad`` and ``nn.functional`` namespaces and as Tensor methods (the hot shape methods
``squeeze``/``unsqueeze``/``select``/``narrow``/``gather``/``index_select``/``chunk``/``unbind``
keep their direct path and do not take the aliases).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._functional import creation as _creation
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import is_grad_enabled

__all__ = ["fill_diagonal_", "install"]

# functions of the hookgrad namespace that took ``dim`` but not PyTorch's ``axis`` alias
_NAMESPACE_AXIS = (
    "aminmax cat chunk concat concatenate cosine_similarity count_nonzero cross cummax cummin "
    "cumulative_trapezoid diff gather index_select kthvalue logcumsumexp median narrow "
    "norm_except_dim quantile repeat_interleave select split_with_sizes squeeze stack "
    "take_along_dim tensor_split trapezoid trapz unbind unflatten unsafe_chunk unsafe_split "
    "unsqueeze").split()
_FUNCTIONAL_AXIS = ("cosine_similarity",)
_METHOD_AXIS = ("aminmax count_nonzero cummax cummin diff kthvalue logcumsumexp median quantile "
                "repeat_interleave take_along_dim tensor_split nanmedian mode").split()
_ALIASES = (("axis", "dim"), ("keepdims", "keepdim"))


def _numpy_keywords(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` also taking ``axis=``/``keepdims=`` for ``dim=``/``keepdim=``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if kwargs:
            for alias, name in _ALIASES:
                if alias in kwargs and name not in kwargs:
                    kwargs[name] = kwargs.pop(alias)
        return fn(*args, **kwargs)

    wrapper._numpy_keywords = True  # type: ignore[attr-defined]
    return wrapper


def _alias_all(owner: Any, names: Any) -> None:
    for name in names:
        fn = getattr(owner, name, None)
        if fn is not None and not getattr(fn, "_numpy_keywords", False):
            setattr(owner, name, _numpy_keywords(fn))


def fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Write `fill_value` on the main diagonal in place (for a tall matrix, `wrap` restarts
    the diagonal below every block of ``cols + 1`` rows, as PyTorch's storage-stride walk does).

    Example:
        >>> import hookgrad as torch
        >>> torch.zeros(2, 2).fill_diagonal_(5.0)
        tensor([[5., 0.],
                [0., 5.]])

    Mirrors: ``torch.Tensor.fill_diagonal_``.
    """
    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if self.is_leaf and self.requires_grad and is_grad_enabled():
        # PyTorch fills through a strided view of self, so its error names a view of a leaf
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    n = min(self.shape)
    index = (np.arange(n),) * self.dim()
    self[tuple(_creation.tensor(i) for i in index)] = fill_value
    if self.dim() == 2 and wrap and self.shape[0] > self.shape[1] + 1:
        # PyTorch fills the wrapped part in a second write (a second version bump), walking
        # the rows below the square block in steps of cols + 1 elements
        rows, cols = self.shape
        flat = np.arange((cols + 1) * cols, rows * cols, cols + 1)
        self[_creation.tensor(flat // cols), _creation.tensor(flat % cols)] = fill_value
    return self


def install() -> None:
    """Attach the methods to `Tensor` where it has none of that name, and the keyword aliases."""
    if not hasattr(Tensor, "fill_diagonal_"):
        Tensor.fill_diagonal_ = fill_diagonal_  # type: ignore[attr-defined]
    _alias_all(sys.modules["hookgrad"], _NAMESPACE_AXIS)
    _alias_all(sys.modules["hookgrad.nn.functional"], _FUNCTIONAL_AXIS)
    _alias_all(Tensor, _METHOD_AXIS)
