"""Run the same scenario on PyTorch (the oracle) and on hookgrad, and compare what they observed.

A *scenario* is a function ``f(lib, log) -> result`` that runs unchanged with ``lib = torch``
and ``lib = hookgrad`` (architecture.md §7, the one-lambda trick). It may append events to ``log``
(hook calls, values...). `run_scenario` records the log, the return value, the exception (type
and text) and the warnings, converted by `plain` into plain data; `assert_same` runs both
libraries and fails with a readable list of differences. Floats are compared with a tolerance
(NumPy and PyTorch kernels round differently); everything else must be equal.

The second half holds the helpers the generic OpSpec tests share (``tests/ops``): building a
sample's inputs for either library, flattening outputs, cotangents and graph signatures.

Nothing here imports torch: tests pass the oracle module in (the ``torch`` fixture).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "TensorValue", "NodeValue", "Outcome", "plain", "run_scenario", "compare", "assert_same",
    "spec_cases", "build_inputs", "call_spec", "flat_tensors", "diff_inputs", "cotangents",
    "graph_signature", "to_numpy", "gradcheck_function",
]

_SKIP_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, ResourceWarning)
# Both libraries warn this once per process, so whether it shows depends on test order.
_ONCE_PER_PROCESS = ("Using backward() with create_graph=True",)
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_TRIGGERED = re.compile(r" \(Triggered internally at .*\)$", re.S)
_HOOKGRAD_TENSOR = re.compile(r"\bhookgrad(?:\.\w+)*\.Tensor\b")


class TensorValue(NamedTuple):
    """A tensor as plain data: nested lists of values, dtype name, requires_grad."""

    values: Any
    dtype: str
    requires_grad: bool


class NodeValue(NamedTuple):
    """A graph node as plain data: its ``name()``."""

    name: str


@dataclass
class Outcome:
    """What one run of a scenario observed, as plain data (see `plain`)."""

    log: Any = None
    result: Any = None
    exc: tuple[str, str] | None = None
    warnings: list = field(default_factory=list)


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "tolist") and hasattr(x, "grad_fn") and hasattr(x, "requires_grad")


def _is_node(x: Any) -> bool:
    return hasattr(x, "next_functions") and callable(getattr(x, "name", None))


def normalize_text(text: str) -> str:
    """Message text without memory addresses or PyTorch's C++ "Triggered internally" suffix,
    and with hookgrad's tensor class named as PyTorch's (``<class 'torch.Tensor'>``)."""
    text = _HOOKGRAD_TENSOR.sub("torch.Tensor", text)
    return _ADDRESS.sub("0x?", _TRIGGERED.sub("", text))


def plain(x: Any) -> Any:
    """Plain-data view of tensors, nodes, dtypes, sizes, exceptions and (nested) containers."""
    if _is_tensor(x):
        return TensorValue(x.detach().tolist(), str(x.dtype), bool(x.requires_grad))
    if _is_node(x):
        return NodeValue(x.name())
    if isinstance(x, BaseException):
        return ("E", type(x).__name__, normalize_text(str(x)))
    name = type(x).__name__
    if name in ("dtype", "device"):
        return str(x)
    if name == "Size":
        return tuple(x)
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, list):
        return [plain(v) for v in x]
    if isinstance(x, tuple):  # namedtuples / return types compare as their fields
        return tuple(plain(v) for v in x)
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    return x


def run_scenario(scenario: Callable[[Any, list], Any], lib: Any) -> Outcome:
    """Run ``scenario(lib, log)`` capturing the log, result, exception and warnings."""
    log: list = []
    out = Outcome()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out.result = plain(scenario(lib, log))
        except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
            out.exc = (type(e).__name__, normalize_text(str(e)))
    out.log = plain(log)
    out.warnings = [
        (w.category.__name__, normalize_text(str(w.message)))
        for w in caught
        if not issubclass(w.category, _SKIP_WARNINGS)
        and not str(w.message).startswith(_ONCE_PER_PROCESS)
    ]
    return out


def compare(mine: Any, theirs: Any, *, rtol: float = 1.3e-6, atol: float = 1e-5,
            path: str = "") -> list[str]:
    """Differences between two plain values, one line each (empty when they agree)."""
    if isinstance(mine, TensorValue) and isinstance(theirs, TensorValue):
        return _compare_tensor_values(mine, theirs, rtol, atol, path)
    if isinstance(mine, float) and isinstance(theirs, float):
        if _close(mine, theirs, rtol, atol):
            return []
        return [f"{path or 'value'}: hookgrad={mine!r} torch={theirs!r}"]
    if type(mine) is not type(theirs) and not _both_ints(mine, theirs):
        return [f"{path or 'value'}: hookgrad={mine!r} torch={theirs!r} (types differ)"]
    if isinstance(mine, (list, tuple)):
        if len(mine) != len(theirs):
            return [f"{path or 'value'}: length {len(mine)} != {len(theirs)}: "
                    f"hookgrad={mine!r} torch={theirs!r}"]
        diffs: list[str] = []
        for i, (a, b) in enumerate(zip(mine, theirs)):
            diffs += compare(a, b, rtol=rtol, atol=atol, path=f"{path}[{i}]")
        return diffs
    if isinstance(mine, dict):
        if mine.keys() != theirs.keys():
            return [f"{path or 'value'}: keys {list(mine)} != {list(theirs)}"]
        diffs = []
        for k in mine:
            diffs += compare(mine[k], theirs[k], rtol=rtol, atol=atol, path=f"{path}[{k!r}]")
        return diffs
    if mine != theirs:
        return [f"{path or 'value'}: hookgrad={mine!r} torch={theirs!r}"]
    return []


def _both_ints(a: Any, b: Any) -> bool:
    return isinstance(a, int) and isinstance(b, int)


def _close(a: float, b: float, rtol: float, atol: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= atol + rtol * abs(b)


def _compare_tensor_values(mine: TensorValue, theirs: TensorValue, rtol: float, atol: float,
                           path: str) -> list[str]:
    where = path or "tensor"
    if mine.dtype != theirs.dtype or mine.requires_grad != theirs.requires_grad:
        return [f"{where}: hookgrad={mine.dtype}, requires_grad={mine.requires_grad} "
                f"torch={theirs.dtype}, requires_grad={theirs.requires_grad}"]
    a, b = np.asarray(mine.values), np.asarray(theirs.values)
    if a.shape != b.shape:
        return [f"{where}: shape {a.shape} != {b.shape}"]
    if a.dtype.kind in "fcV" or b.dtype.kind in "fcV":
        with np.errstate(invalid="ignore"):
            ok = np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    else:
        ok = np.array_equal(a, b)
    return [] if ok else [f"{where}: values differ\n hookgrad={mine.values}\n torch   ="
                          f"{theirs.values}"]


def assert_same(scenario: Callable[[Any, list], Any], torch: Any, *, rtol: float = 1.3e-6,
                atol: float = 1e-5, check_warnings: bool = True,
                check_message: bool = True) -> Outcome:
    """Run `scenario` on `torch` and on hookgrad; fail listing every difference.

    Returns hookgrad's `Outcome` for further assertions.
    """
    import hookgrad

    theirs = run_scenario(scenario, torch)
    mine = run_scenario(scenario, hookgrad)
    diffs: list[str] = []
    if mine.exc != theirs.exc:
        if not check_message and mine.exc and theirs.exc and mine.exc[0] == theirs.exc[0]:
            pass
        else:
            diffs.append(f"exception: hookgrad={mine.exc!r}\n           torch   ={theirs.exc!r}")
    diffs += compare(mine.log, theirs.log, rtol=rtol, atol=atol, path="log")
    diffs += compare(mine.result, theirs.result, rtol=rtol, atol=atol, path="result")
    if check_warnings and mine.warnings != theirs.warnings:
        diffs.append(f"warnings: hookgrad={mine.warnings!r}\n"
                     f"          torch   ={theirs.warnings!r}")
    if diffs:
        raise AssertionError("hookgrad differs from torch:\n" + "\n".join(diffs))
    return mine


# ---------------------------------------------------------------------------------- OpSpec helpers
def spec_cases(specs: Iterable[Any], where: Callable[[Any], bool] | None = None) -> tuple:
    """``(cases, ids)`` for ``pytest.mark.parametrize("spec,sample", cases, ids=ids)``."""
    cases, ids = [], []
    for spec in specs:
        if where is not None and not where(spec):
            continue
        for i, sample in enumerate(spec.samples):
            cases.append((spec, sample))
            ids.append(f"{spec.name}-{sample.name or i}")
    return cases, ids


def build_inputs(lib: Any, sample: Any, arrays: list, *, requires_grad: bool = True,
                 float64: bool = False) -> list:
    """The sample's arguments as `lib` tensors (float args optionally cast to float64)."""
    from hookgrad.testing._opspec import to_lib

    if float64:
        arrays = [a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
                  else a for a in arrays]
    return to_lib(lib, sample, arrays, requires_grad)


def call_spec(lib: Any, spec: Any, sample: Any, inputs: list) -> Any:
    """``spec.fn(lib, *inputs, **sample.kwargs)``."""
    return spec.fn(lib, *inputs, **sample.kwargs)


def flat_tensors(out: Any) -> list:
    """Every tensor in an op's result (a tensor, or nested tuples/lists/return types)."""
    if _is_tensor(out):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat_tensors(o)]
    return []


def diff_inputs(inputs: list) -> list:
    """The inputs that require grad (the ones gradients are compared for)."""
    return [x for x in inputs if _is_tensor(x) and x.requires_grad]


def cotangents(outputs: list, seed: int = 1) -> list[np.ndarray]:
    """Random cotangents shaped and typed like `outputs` (same values for both libraries)."""
    rng = np.random.default_rng(seed)
    result = []
    for o in outputs:
        arr = to_numpy(o)
        result.append(rng.uniform(-1.0, 1.0, size=arr.shape).astype(arr.dtype))
    return result


def to_numpy(t: Any) -> np.ndarray:
    """A tensor of either library as a NumPy array (detached, on the CPU)."""
    return np.asarray(t.detach().cpu().numpy())


def graph_signature(node: Any) -> list:
    """The graph below `node` as plain data: per node (in BFS order) its name and edges.

    Edges refer to nodes by BFS position, so two graphs with the same shape and node names
    give equal signatures whatever their objects are.
    """
    if node is None:
        return []
    order = {node: 0}
    queue = [node]
    result = []
    i = 0
    while i < len(queue):
        current = queue[i]
        i += 1
        edges = []
        for nxt, nr in current.next_functions:
            if nxt is None:
                edges.append((None, nr))
                continue
            if nxt not in order:
                order[nxt] = len(queue)
                queue.append(nxt)
            edges.append((order[nxt], nr))
        result.append((current.name(), tuple(edges)))
    return result


def gradcheck_function(spec: Any, sample: Any) -> tuple:
    """``(f, inputs)`` for `gradcheck`: `f` maps the float64 inputs that require grad to the
    sample's tensor outputs, holding every other argument constant."""
    import hookgrad
    from hookgrad.testing._opspec import make_arrays

    args = build_inputs(hookgrad, sample, make_arrays(sample), float64=True)
    positions = [i for i, x in enumerate(args)
                 if isinstance(x, hookgrad.Tensor) and x.requires_grad]

    def f(*diff: Any) -> tuple:
        full = list(args)
        for p, d in zip(positions, diff):
            full[p] = d
        return tuple(flat_tensors(call_spec(hookgrad, spec, sample, full)))

    return f, tuple(args[p] for p in positions)
