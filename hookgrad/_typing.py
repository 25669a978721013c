"""Shared type aliases and hook signatures (architecture.md §2, §8).

Layer 0: imports nothing from hookgrad at run time; the names it refers to are only imported
for type checkers. Modules annotate with these aliases instead of spelling the unions out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, Union

if TYPE_CHECKING:
    import numpy as np

    from hookgrad._backend import device as Device
    from hookgrad._dtypes import dtype as DType
    from hookgrad._tensor import Tensor

# Forward references ("Tensor") cannot be joined with `|` at run time, hence `Union` below.
# ------------------------------------------------------------------------------ data
Number: TypeAlias = Union[int, float, bool]  # noqa: UP007
Shape: TypeAlias = Sequence[int]
"""A size argument: ``(2, 3)``, ``[2, 3]`` or a ``Size``."""
DTypeLike: TypeAlias = Union["DType", str, type, None]  # noqa: UP007
DeviceLike: TypeAlias = Union["Device", str, None]  # noqa: UP007
TensorLike: TypeAlias = Union["Tensor", Number, Sequence[Any], "np.ndarray"]  # noqa: UP007
"""Anything ``hookgrad.tensor`` accepts."""

# ------------------------------------------------------------------------------ hooks
TensorHook: TypeAlias = Callable[["Tensor"], Union["Tensor", None]]  # noqa: UP007
"""``Tensor.register_hook``: ``hook(grad) -> Tensor | None``."""
PostAccumulateGradHook: TypeAlias = Callable[["Tensor"], None]
"""``Tensor.register_post_accumulate_grad_hook``: ``hook(tensor) -> None``."""
NodePreHook: TypeAlias = Callable[[tuple], Union[tuple, None]]  # noqa: UP007
"""``Node.register_prehook``: ``hook(grad_outputs) -> tuple | None``."""
NodeHook: TypeAlias = Callable[[tuple, tuple], Union[tuple, None]]  # noqa: UP007
"""``Node.register_hook``: ``hook(grad_inputs, grad_outputs) -> tuple | None``."""
PackHook: TypeAlias = Callable[["Tensor"], Any]
UnpackHook: TypeAlias = Callable[[Any], "Tensor"]
ModuleForwardPreHook: TypeAlias = Callable[..., Any]
"""``hook(module, args) -> None | args`` (``with_kwargs``: ``(module, args, kwargs)``)."""
ModuleForwardHook: TypeAlias = Callable[..., Any]
"""``hook(module, args, output) -> None | output`` (``with_kwargs``: ``+ kwargs``)."""
ModuleBackwardHook: TypeAlias = Callable[[Any, tuple, tuple], Union[tuple, None]]  # noqa: UP007
"""``hook(module, grad_input, grad_output) -> tuple | None``."""
ModuleBackwardPreHook: TypeAlias = Callable[[Any, tuple], Union[tuple, None]]  # noqa: UP007
"""``hook(module, grad_output) -> tuple | None``."""
OptimizerStepHook: TypeAlias = Callable[[Any, tuple, dict], Any]
"""``hook(optimizer, args, kwargs)``."""


class SupportsArray(Protocol):
    """Objects NumPy can turn into an array (``__array__``)."""

    def __array__(self, dtype: Any = None) -> np.ndarray: ...


__all__ = [
    "Number", "Shape", "DTypeLike", "DeviceLike", "TensorLike", "TensorHook",
    "PostAccumulateGradHook", "NodePreHook", "NodeHook", "PackHook", "UnpackHook",
    "ModuleForwardPreHook", "ModuleForwardHook", "ModuleBackwardHook", "ModuleBackwardPreHook",
    "OptimizerStepHook", "SupportsArray",
]
