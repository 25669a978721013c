"""``hookgrad._logging``: the logging switches PyTorch's compile tests set.

`set_logs` accepts PyTorch's keyword names for the compiler's log channels and records them
(`log_settings`); hookgrad's compiler reports through warnings, ``explain()`` and
``_dynamo.utils.counters`` instead of log artifacts, so the settings change no output.
"""

from __future__ import annotations

from typing import Any

__all__ = ["set_logs", "log_settings"]

_NAMES = frozenset({
    "all", "dynamo", "aot", "autograd", "inductor", "dynamic", "torch", "distributed",
    "bytecode", "aot_graphs", "aot_joint_graph", "ddp_graphs", "graph", "graph_code",
    "graph_breaks", "graph_sizes", "guards", "recompiles", "recompiles_verbose",
    "trace_source", "trace_call", "trace_bytecode", "output_code", "kernel_code", "schedule",
    "perf_hints", "post_grad_graphs", "pre_grad_graphs", "onnx_diagnostics", "fusion",
    "overlap", "export", "modules", "cudagraphs", "sym_node", "compiled_autograd",
    "compiled_autograd_verbose", "cudagraph_static_inputs", "benchmarking", "graph_region_expansion",
    "fsdp", "dtensor", "onnx", "loop_ordering", "hierarchical_compile", "side_effects",
})
_SETTINGS: dict[str, Any] = {}


def set_logs(**kwargs: Any) -> None:
    """Set compiler log channels (``set_logs()`` with no argument resets them).

    Raises:
        TypeError: an unknown channel name (as PyTorch's keyword-only signature does).

    Mirrors: ``torch._logging.set_logs``.
    """
    unknown = sorted(set(kwargs) - _NAMES)
    if unknown:
        raise TypeError(f"set_logs() got an unexpected keyword argument '{unknown[0]}'")
    if not kwargs:
        _SETTINGS.clear()
    _SETTINGS.update(kwargs)


def log_settings() -> dict[str, Any]:
    """The channels set by `set_logs` (a copy).

    Mirrors: no public PyTorch function (introspection of ``torch._logging`` state).
    """
    return dict(_SETTINGS)
