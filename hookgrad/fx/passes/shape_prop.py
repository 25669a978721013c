"""`ShapeProp`: run a GraphModule and record each node's tensor metadata.

After ``ShapeProp(gm).propagate(*inputs)`` every node whose value holds tensors has
``node.meta["tensor_meta"]`` (a `TensorMetadata`, or the same container structure of them) and
every node has ``node.meta["type"]``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from hookgrad._tensor import Tensor
from hookgrad.fx.interpreter import Interpreter
from hookgrad.fx.node import Node, map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    """What a pass may know about a tensor value without holding it.

    Mirrors: ``torch.fx.passes.shape_prop.TensorMetadata``.
    """

    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple[int, ...]
    memory_format: Any
    is_quantized: bool
    qparams: dict[str, Any]


def _extract_tensor_metadata(result: Tensor, include_contiguity: bool = True) -> TensorMetadata:
    from hookgrad._legacy import channels_last, channels_last_3d, contiguous_format  # noqa: PLC0415

    memory_format = None
    if include_contiguity:
        # Plain contiguity first: a tensor contiguous in several formats reports this one.
        for fmt in (contiguous_format, channels_last, channels_last_3d):
            try:
                if result.is_contiguous(memory_format=fmt):
                    memory_format = fmt
                    break
            except RuntimeError:  # a format that does not apply to this rank
                continue
    return TensorMetadata(result.shape, result.dtype, result.requires_grad,
                          tuple(result.stride()), memory_format,
                          bool(getattr(result, "is_quantized", False)), {})


class ShapeProp(Interpreter):
    """An Interpreter that stores each node's tensor metadata in ``node.meta``.

    Example:
        >>> import hookgrad as torch
        >>> gm = torch.fx.symbolic_trace(lambda x: x.sum(0))
        >>> _ = ShapeProp(gm).propagate(torch.ones(2, 3))
        >>> [n.meta["tensor_meta"].shape for n in gm.graph.nodes if n.op != "output"]
        [torch.Size([2, 3]), torch.Size([3])]

    Mirrors: ``torch.fx.passes.shape_prop.ShapeProp``.
    """

    def __init__(self, gm: Any, fake_mode: Any = None) -> None:
        super().__init__(gm)
        self.fake_mode = fake_mode

    def run_node(self, n: Node) -> Any:
        """Run `n` and record its metadata. Mirrors: ``ShapeProp.run_node``."""
        result = super().run_node(n)
        found = False

        def extract(obj: Any) -> Any:
            nonlocal found
            if isinstance(obj, Tensor):
                found = True
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, extract)
        if found:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args: Any) -> Any:
        """Run the module on `args`, recording metadata. Mirrors: ``ShapeProp.propagate``."""
        return super().run(*args)
