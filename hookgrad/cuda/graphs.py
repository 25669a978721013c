"""CUDA graphs: the classes exist (libraries annotate with them); using them needs CUDA.

Mirrors: ``torch.cuda.graphs`` as a CPU build of PyTorch has it: `CUDAGraph` is a dummy class
whose construction raises ``RuntimeError("Tried to instantiate dummy base class CUDAGraph")``,
`graph` needs a CUDA stream, and `graph_pool_handle` / `make_graphed_callables` /
`is_current_stream_capturing` raise the same kind of error.
"""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing",
           "make_graphed_callables"]


def _dummy(name: str) -> NoReturn:
    raise RuntimeError(f"Tried to instantiate dummy base class {name}")


class CUDAGraph:
    """A captured CUDA graph (needs CUDA). Mirrors: ``torch.cuda.CUDAGraph``."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        _dummy("CUDAGraph")


class graph:  # noqa: N801 - PyTorch's name
    """Context manager capturing CUDA work into a `CUDAGraph` (needs CUDA).

    Mirrors: ``torch.cuda.graph``.
    """

    def __init__(self, cuda_graph: Any, pool: Any = None, stream: Any = None,
                 capture_error_mode: str = "global", enable_annotations: bool = False,
                 check_input_liveness: bool = False) -> None:
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


def graph_pool_handle() -> NoReturn:
    """Needs CUDA. Mirrors: ``torch.cuda.graph_pool_handle``."""
    _dummy("_graph_pool_handle")


def is_current_stream_capturing() -> NoReturn:
    """Needs CUDA. Mirrors: ``torch.cuda.is_current_stream_capturing``."""
    _dummy("_cuda_isCurrentStreamCapturing")


def make_graphed_callables(callables: Any, sample_args: Any, *args: Any,
                           **kwargs: Any) -> NoReturn:
    """Needs CUDA. Mirrors: ``torch.cuda.make_graphed_callables``."""
    _dummy("CUDAGraph")
