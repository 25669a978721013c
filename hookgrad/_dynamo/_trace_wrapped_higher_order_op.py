"""`TransformGetItemToIndex`: tensor indexing as an index op, so that it works under vmap.

Mirrors: ``torch._dynamo._trace_wrapped_higher_order_op.TransformGetItemToIndex`` (transformers
builds attention masks with ``vmap`` inside it). In this mode ``x[i]`` with tensor indices only
is computed as advanced indexing: a 0-dim index tensor does not become a Python int, so the call
stays traceable under ``vmap``. Other indexing is left alone.

Example:
    >>> import hookgrad as torch
    >>> x = torch.arange(5.0)
    >>> with TransformGetItemToIndex():
    ...     torch.func.vmap(lambda i: x[i])(torch.tensor([1, 3]))
    tensor([1., 3.])
"""

from __future__ import annotations

from typing import Any

from hookgrad._function_mode import TorchFunctionMode
from hookgrad._tensor import Tensor
from hookgrad.utils._pytree import tree_leaves

__all__ = ["TransformGetItemToIndex"]


def _index(x: Tensor, indices: list) -> Tensor:
    """``aten.index`` for tensors indexing the leading dims: one flat ``index_select``."""
    if any(i.dtype.name == "bool" for i in indices) or len(indices) > x.dim():
        return x[tuple(indices)]
    lead = tuple(x.shape[:len(indices)])
    rest = tuple(x.shape[len(indices):])
    flat = indices[0] % lead[0]  # negative indices count from the end, as in PyTorch
    for i, n in zip(indices[1:], lead[1:]):
        flat = flat * n + i % n
    out = x.reshape((-1,) + rest).index_select(0, flat.reshape(-1))
    return out.reshape(tuple(flat.shape) + rest)


class TransformGetItemToIndex(TorchFunctionMode):
    """Rewrite ``Tensor.__getitem__`` with tensor-only indices as an index op (see module).

    Mirrors: ``torch._dynamo._trace_wrapped_higher_order_op.TransformGetItemToIndex``.
    """

    def __torch_function__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        if func is Tensor.__getitem__ and len(args) == 2:
            leaves = tree_leaves(args[1])
            if leaves and all(isinstance(i, Tensor) for i in leaves):
                return _index(args[0], leaves)
        return func(*args, **(kwargs or {}))
