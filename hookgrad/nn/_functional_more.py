"""Smaller parts of ``torch.nn.functional``: `pdist`, in-place ``celu_``/``selu_``, the
``__torch_function__`` helpers it re-exports, mode tables and the TorchScript-era helpers
(`boolean_dispatch`, ``BroadcastingList*``) that library code still calls.

Mirrors: the same names in ``torch.nn.functional``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from hookgrad._functional import _pw_activation as _act
from hookgrad._functional._gather import index_select
from hookgrad._functional.creation import tensor as _tensor
from hookgrad._functional.linalg import vector_norm
from hookgrad._tensor import Tensor
from hookgrad._dtypes import int64
from hookgrad.autograd._torch_function import (  # noqa: F401 - F re-exports them
    handle_torch_function,
    has_torch_function,
    has_torch_function_unary,
    has_torch_function_variadic,
)

__all__ = ["pdist", "celu_", "selu_", "boolean_dispatch", "assert_int_or_pair",
           "GRID_SAMPLE_INTERPOLATION_MODES", "GRID_SAMPLE_PADDING_MODES", "BroadcastingList1",
           "BroadcastingList2", "BroadcastingList3", "ScalingType", "SwizzleType",
           "reproducibility_notes", "tf32_notes", "sparse_support_notes",
           "handle_torch_function", "has_torch_function", "has_torch_function_unary",
           "has_torch_function_variadic"]

GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}

reproducibility_notes = {
    "forward_reproducibility_note": "This operation may behave nondeterministically when given "
    "tensors on a CUDA device. See :doc:`/notes/randomness` for more information.",
    "backward_reproducibility_note": "This operation may produce nondeterministic gradients when "
    "given tensors on a CUDA device. See :doc:`/notes/randomness` for more information.",
    "cudnn_reproducibility_note": "In some circumstances when given tensors on a CUDA device and "
    "using CuDNN, this operator may select a nondeterministic algorithm to increase performance. "
    "If this is undesirable, you can try to make the operation deterministic (potentially at a "
    "performance cost) by setting ``torch.backends.cudnn.deterministic = True``. See "
    ":doc:`/notes/randomness` for more information.",
}
tf32_notes = {"tf32_note": "This operator supports :ref:`TensorFloat32<tf32_on_ampere>`."}
sparse_support_notes = {
    "sparse_beta_warning": "\n.. warning:: Sparse support is a beta feature and some "
    "layout(s)/dtype/device combinations may not be supported,\n    or may not have autograd "
    "support. If you notice missing functionality please\n    open a feature request.",
}


class ScalingType(enum.IntEnum):
    """Scale layouts of the scaled matmuls (names only: no float8 kernels here).

    Mirrors: ``torch.nn.functional.ScalingType``.
    """

    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class SwizzleType(enum.IntEnum):
    """Scale swizzles of the scaled matmuls. Mirrors: ``torch.nn.functional.SwizzleType``."""

    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


class _BroadcastingList:
    """``BroadcastingList2[int]`` in annotations: an int or a list of them (subscript: None)."""

    def __getitem__(self, types: Any) -> None:
        return None


BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = _BroadcastingList()


def assert_int_or_pair(arg: Any, arg_name: str, message: str) -> None:
    """Raise ``AssertionError(message.format(arg_name))`` unless `arg` is an int or a pair.

    Mirrors: ``torch.nn.functional.assert_int_or_pair``.
    """
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


boolean_dispatched: dict = {}


def boolean_dispatch(arg_name: str, arg_index: int, default: bool, if_true: Callable[..., Any],
                     if_false: Callable[..., Any], module_name: str | None,
                     func_name: str | None) -> Callable[..., Any]:
    """A function calling `if_true` or `if_false` by a boolean argument (by name or position).

    Mirrors: ``torch.nn.functional.boolean_dispatch``.
    """
    def fn(*args: Any, **kwargs: Any) -> Any:
        flag = default
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        if_true.__doc__ = if_false.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is not None:
        if_false.__doc__ = if_true.__doc__
    elif if_false.__doc__ is not None and if_true.__doc__ is not None:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = if_true.__doc__
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    boolean_dispatched[fn] = {"if_true": if_true, "if_false": if_false, "index": arg_index,
                              "default": default, "arg_name": arg_name}
    return fn


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place `celu`. Mirrors: ``torch.nn.functional.celu_``."""
    return _act.celu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """In-place `selu`. Mirrors: ``torch.nn.functional.selu_``."""
    return _act.selu(input, inplace=True)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """p-norm distances between all pairs of rows of a 2-D input (upper triangle, row order).

    Composed of indexing and `vector_norm`, so it is differentiable to any order (its
    ``grad_fn`` is the norm's, not PyTorch's fused ``PdistBackward0``).

    Example:
        >>> import hookgrad as torch
        >>> torch.nn.functional.pdist(torch.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
        tensor([5.0000, 1.0000, 4.2426])

    Mirrors: ``torch.nn.functional.pdist``.
    """
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    rows = [i for i in range(n) for _ in range(i + 1, n)]
    cols = [j for i in range(n) for j in range(i + 1, n)]
    diff = (index_select(input, 0, _tensor(rows, dtype=int64))
            - index_select(input, 0, _tensor(cols, dtype=int64)))
    return vector_norm(diff, p, dim=1)
