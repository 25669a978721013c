"""Front-end details checked against PyTorch 2.13: ``explain`` fields, the accumulated recompile
limit, and explaining leaving the compile caches alone."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

import hookgrad
from tests.compile._libs import both, dynamo, is_torch, plain

pytestmark = pytest.mark.filterwarnings("ignore:The .grad attribute:UserWarning:torch.*")


def _two_ops(x: Any, n: int) -> Any:
    return (x * n).sum()


def test_explain_fields(torch):
    def scenario(lib: Any) -> dict:
        # lib.sum, not x.sum(): PyTorch's explain counts call_function nodes only (a method
        # call is a call_method node there; hookgrad's graphs hold call_function nodes only)
        out = dynamo(lib).explain(lambda x, n: lib.sum(x * n))(lib.ones(3), 2)
        names = [[getattr(op, "__name__", str(op)) for op in ops] for ops in out.ops_per_graph]
        return {"graphs": out.graph_count, "breaks": out.graph_break_count,
                "ops": out.op_count, "per_graph": len(names), "n_ops": [len(n) for n in names],
                "has_guards": len(out.out_guards) > 0, "times": isinstance(out.compile_times,
                                                                           str)}
    ref, got = both(torch, scenario)
    assert got == ref == {"graphs": 1, "breaks": 0, "ops": 2, "per_graph": 1, "n_ops": [2],
                          "has_guards": True, "times": True}


def test_explain_break_reason_object(torch):
    def fn(x: Any) -> Any:
        y = x * 2
        print("side output")
        return y
    for lib in (torch, hookgrad):
        out = dynamo(lib).explain(fn)(lib.ones(2))
        assert len(out.break_reasons) == 1
        assert "Failed to trace builtin operator" in out.break_reasons[0].reason
    assert out.graph_break_count == 1
    # hookgrad runs the whole call eagerly after a break (spec §9.2, D): 0 graphs, PyTorch 2


def test_explain_does_not_count_as_a_compile():
    cnt = hookgrad._dynamo.testing.CompileCounter()
    opt = hookgrad.compile(_two_ops, backend=cnt)
    hookgrad._dynamo.explain(_two_ops)(hookgrad.ones(3), 2)
    for n in (2, 2):
        opt(hookgrad.ones(3), n)
    assert cnt.frame_count == 1  # the explain call's shapes did not make `n` dynamic early
    opt(hookgrad.ones(3), 3)
    assert cnt.frame_count == 2


def test_accumulated_recompile_limit(torch):
    def scenario(lib: Any) -> list:
        cnt = dynamo(lib).testing.CompileCounter()
        counts = []
        with dynamo(lib).config.patch(recompile_limit=100, accumulated_recompile_limit=5):
            f = lib.compile(lambda x, n: x * n, backend=cnt, dynamic=False)
            g = lib.compile(lambda x, n: x + n, backend=cnt, dynamic=False)
            warn = pytest.warns(UserWarning, match="accumulated_recompile_limit") \
                if not is_torch(lib) else contextlib.nullcontext()
            with warn:
                for n in range(8):
                    assert f(lib.ones(1), n).tolist() == [float(n)]
            counts.append(cnt.frame_count)
            for n in range(3):
                g(lib.ones(1), n)
            counts.append(cnt.frame_count)
        return counts
    ref, got = both(torch, scenario)
    assert got == ref == [5, 8]


def test_other_threads_are_not_recorded_into_a_trace():
    """The interceptions of a trace are process-wide, the trace itself is per thread."""
    import threading
    seen: list = []

    def other() -> None:
        seen.append(float((hookgrad.ones(2) * 3).sum()))

    def fn(x: Any, n: int) -> Any:
        worker = threading.Thread(target=other)
        worker.start()
        worker.join()
        return x * n
    cnt = hookgrad._dynamo.testing.CompileCounter()
    opt = hookgrad.compile(fn, backend=cnt)
    for n in (2, 3, 4):  # static, then dynamic traces (every call intercepted)
        assert plain(opt(hookgrad.ones(2), n)) == [float(n)] * 2
    # (`seen`, reachable from `fn` and changed by the worker, is guarded: calls may retrace)
    assert seen and cnt.frame_count >= 2 and cnt.op_count == cnt.frame_count  # `x * n` only


def test_deterministic_flag_is_guarded(torch):
    """Spec §6.1: the deterministic-algorithms flag is global state every entry is keyed on."""
    def scenario(lib: Any) -> int:
        cnt = dynamo(lib).testing.CompileCounter()
        opt = lib.compile(lambda x: x * 2, backend=cnt)
        opt(lib.ones(2))
        lib.use_deterministic_algorithms(True)
        try:
            opt(lib.ones(2))
        finally:
            lib.use_deterministic_algorithms(False)
        opt(lib.ones(2))
        return cnt.frame_count
    ref, got = both(torch, scenario)
    assert got == ref == 2
