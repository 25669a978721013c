"""Run one hook scenario on PyTorch and on hookgrad and compare everything observable.

A scenario is ``fn(lib, log) -> result``: it must run unchanged with ``lib = torch`` and
``lib = hookgrad``. `outcome` normalises what it observed (the event log, the return value,
the exception type and text, the warnings) into plain Python data so the two runs compare with
``==``: tensors become ``("T", values, dtype, requires_grad)``, nodes ``("N", name)``.
"""

from __future__ import annotations

import warnings
from typing import Any

import hookgrad

_SKIP_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, ResourceWarning)
# Warned once per process by both libraries, so whether it shows depends on test order.
_ONCE_PER_PROCESS = "Using backward() with create_graph=True"


def norm(x: Any) -> Any:
    """Plain-data view of tensors, nodes and containers (see module docstring)."""
    if hasattr(x, "tolist") and hasattr(x, "requires_grad") and hasattr(x, "grad_fn"):
        values = _round(x.tolist())
        return ("T", values, str(x.dtype).replace("torch.", ""), bool(x.requires_grad))
    if hasattr(x, "name") and hasattr(x, "next_functions"):
        return ("N", x.name())
    if type(x) is list:
        return [norm(v) for v in x]
    if isinstance(x, tuple):
        return tuple(norm(v) for v in x)
    if isinstance(x, dict):
        return {k: norm(v) for k, v in x.items()}
    if isinstance(x, BaseException):
        return ("E", type(x).__name__, str(x))
    if isinstance(x, float):
        return _round(x)
    if type(x).__name__ == "Size":
        return tuple(x)
    return x


def _round(v: Any) -> Any:
    """Floats to 6 significant digits: NumPy and PyTorch kernels may differ in the last ulp."""
    if isinstance(v, list):
        return [_round(u) for u in v]
    if isinstance(v, float):
        return float(f"{v:.6g}")
    return v


def outcome(scenario: Any, lib: Any) -> dict:
    """Run `scenario` on `lib`, capturing log, result, exception and warnings."""
    log: list = []
    exc = None
    result = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = scenario(lib, log)
        except Exception as e:  # noqa: BLE001 - the exception itself is compared
            exc = (type(e).__name__, str(e))
    warned = [
        (w.category.__name__, str(w.message).split(" (Triggered internally at")[0])
        for w in caught
        if not issubclass(w.category, _SKIP_WARNINGS)
        and not str(w.message).startswith(_ONCE_PER_PROCESS)
    ]
    return {"log": norm(log), "result": norm(result), "exc": exc, "warnings": warned}


def check(scenario: Any, torch: Any, *, log: Any = None, exc: Any = None,
          same_message: bool = True) -> dict:
    """Assert hookgrad's outcome equals torch's; optionally also the spec's expected log.

    ``same_message=False`` compares only the exception type (for errors whose text comes from
    PyTorch's C++ argument parser). Returns hookgrad's outcome for extra assertions.
    """
    theirs = outcome(scenario, torch)
    mine = outcome(scenario, hookgrad)
    if not same_message and mine["exc"] and theirs["exc"]:
        mine["exc"] = theirs["exc"] = (mine["exc"][0], theirs["exc"][0])
    for key in ("exc", "log", "result", "warnings"):
        assert mine[key] == theirs[key], (
            f"{key} differs:\n hookgrad={mine[key]}\n torch   ={theirs[key]}"
        )
    if log is not None:
        assert theirs["log"] == norm(log)
    if exc is not None:
        assert theirs["exc"] is not None and theirs["exc"][0] == exc
    return mine


def L(values: Any) -> Any:  # noqa: N802 - the spec's name
    """The spec's ``L``: tensors in a tuple to lists, keeping ``None``."""
    return [None if v is None else v.tolist() for v in values]


def has(lib: Any, *names: str) -> bool:
    """True when every dotted name exists on `lib` (ops other helpers may still be adding)."""
    for name in names:
        obj = lib
        for part in name.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                return False
    return True


def needs(*methods: str) -> None:
    """Skip when hookgrad does not have these Tensor methods yet (ops land in parallel)."""
    import pytest

    missing = [m for m in methods if not hasattr(hookgrad.Tensor, m)]
    if missing:
        pytest.skip(f"hookgrad lacks Tensor.{', '.join(missing)}")
