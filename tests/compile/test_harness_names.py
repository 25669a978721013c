"""Names PyTorch's own compile tests reach for: config keys, ``_logging.set_logs``,
``AOT_COUNTER``, ``_dynamo.graph_break`` and ``cond``."""

from __future__ import annotations

from typing import Any

import pytest

import hookgrad
from tests.compile._libs import both, dynamo, plain

_KEYS = ("record_runtime_overhead", "capture_scalar_outputs", "capture_dynamic_output_shape_ops",
         "optimize_ddp", "specialize_int", "specialize_float", "verbose",
         "raise_on_ctx_manager_usage", "force_parameter_static_shapes", "trace_numpy",
         "guard_nn_modules", "fail_on_recompile_limit_hit", "do_not_emit_runtime_asserts",
         "dynamic_shapes", "allow_rnn", "enable_compiler_collectives")


def test_config_keys_have_torch_defaults_and_patch(torch):
    def scenario(lib: Any) -> list:
        cfg = dynamo(lib).config
        with cfg.patch(record_runtime_overhead=False):
            patched = cfg.record_runtime_overhead
        return [getattr(cfg, k) for k in _KEYS] + [patched, cfg.record_runtime_overhead]
    ref, got = both(torch, scenario)
    assert got == ref


def test_fail_on_recompile_limit_hit(torch):
    def scenario(lib: Any) -> str:
        cfg = dynamo(lib).config
        opt = lib.compile(lambda x, n: x * n, backend="eager", dynamic=False)
        with cfg.patch(fail_on_recompile_limit_hit=True, recompile_limit=2):
            opt(lib.ones(1), 1)
            opt(lib.ones(1), 2)
            with pytest.raises(dynamo(lib).exc.FailOnRecompileLimitHit):
                opt(lib.ones(1), 3)
        return "raised"
    ref, got = both(torch, scenario)
    assert got == ref


def test_set_logs_accepts_compile_channels_and_rejects_unknown(torch):
    def scenario(lib: Any) -> str:
        lib._logging.set_logs(compiled_autograd_verbose=True, recompiles=True,
                              graph_breaks=True)
        lib._logging.set_logs()
        with pytest.raises(TypeError):
            lib._logging.set_logs(no_such_channel=True)
        return "ok"
    ref, got = both(torch, scenario)
    assert got == ref


def test_aot_counter_is_a_counter(torch):
    def scenario(lib: Any) -> bool:
        if lib is hookgrad:
            from hookgrad._functorch.aot_autograd import AOT_COUNTER
        else:
            from torch._functorch.aot_autograd import AOT_COUNTER
        first = next(AOT_COUNTER)
        return next(AOT_COUNTER) == first + 1
    ref, got = both(torch, scenario)
    assert got == ref is True


def test_graph_break_splits_the_region(torch):
    def scenario(lib: Any) -> tuple:
        def fn(x: Any) -> Any:
            y = x * 2
            dynamo(lib).graph_break()
            return y + 1
        cnt = dynamo(lib).testing.CompileCounter()
        out = lib.compile(fn, backend=cnt)(lib.ones(2))
        dynamo(lib).graph_break()  # outside a region: nothing
        return plain(out), cnt.frame_count > 0
    ref, got = both(torch, scenario)
    # values agree; PyTorch compiles both halves, hookgrad runs the broken call eagerly
    assert got[0] == ref[0] == [3.0, 3.0]


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_eager_and_compiled(torch, sign):
    def scenario(lib: Any) -> tuple:
        def fn(p: Any, x: Any) -> Any:
            return lib.cond(p.sum() > 0, lambda t: t + 1, lambda t: t - 1, (x,))
        eager = fn(lib.ones(1) * sign, lib.ones(2))
        compiled = lib.compile(fn, backend="eager")(lib.ones(1) * sign, lib.ones(2))
        with pytest.raises(RuntimeError, match="single-element"):
            lib.cond(lib.tensor([True, False]), lambda t: t, lambda t: t, (lib.ones(1),))
        return plain(eager), plain(compiled)
    ref, got = both(torch, scenario)
    assert got == ref


def test_higher_order_ops_cond_is_torch_cond_and_while_loop_runs(torch):
    def scenario(lib: Any) -> tuple:
        import importlib  # noqa: PLC0415 - the submodule of the library under test
        hop = importlib.import_module(lib.__name__ + "._higher_order_ops")
        loop = hop.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2),
                              (lib.tensor(0), lib.ones(2)))
        never = hop.while_loop(lambda i: i < 0, lambda i: (i + 1,), [lib.tensor(5.0)])
        single = hop.while_loop(lambda i: i < 2, lambda i: i + 1, (lib.tensor(0.0),))
        return (hop.cond is lib.cond, [plain(t) for t in loop], type(never).__name__,
                plain(never[0]), plain(single))
    ref, got = both(torch, scenario)
    assert got == ref


def test_normalize_gm_and_same(torch):
    text = "def forward(self, x):\n    # File: a.py:3\n    y = x + 1   \n\n\n\n    return (y,)\n"

    def scenario(lib: Any) -> tuple:
        t = dynamo(lib).testing
        a = lib.arange(4.0)
        return (t.normalize_gm(text),
                t.same([a, {"k": 1.0}], [a + 1e-6, {"k": 1.00001}]),
                t.same(a, a.double()), t.same(a, a + 1), t.same((a,), (a, a)),
                t.same(lib.tensor([float("nan")]), lib.tensor([float("nan")]), equal_nan=True))
    ref, got = both(torch, scenario)
    assert got == ref
