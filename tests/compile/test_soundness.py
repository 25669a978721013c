"""Soundness rules of ``hookgrad.compile``, one test class per rule (docs/compile.md).

Every scenario calls a compiled function several times with new values and compares each call
with the eager call (outputs, gradients, hook logs, side effects) under every backend; the
eager sequence is checked against PyTorch's eager run where the scenario is torch-portable.
Each class holds the minimised cases the differential fuzzer (`test_fuzz_compile`) and the
issue found.
"""

from __future__ import annotations

import collections
import copy
from typing import Any

import pytest

import hookgrad
from tests.compile._libs import plain

BACKENDS = ("eager", "aot_eager", "inductor")


def _obs(v: Any) -> Any:
    if isinstance(v, (hookgrad.Tensor,)) or type(v).__name__ == "Tensor":
        return (plain(v), tuple(v.shape), v.requires_grad)
    if isinstance(v, (list, tuple, collections.deque)):
        return [_obs(a) for a in v]
    if isinstance(v, dict):
        return {k: _obs(a) for k, a in v.items()}
    return v


def _calls(lib: Any, make: Any, backend: str | None, shapes: tuple = (3, 3, 3)) -> list:
    """``make(lib) -> (fn, state, after)``; `fn` is called once per shape (new values each
    time), ``after(result, x)`` runs after each call (backward, reads), `state` is observed."""
    if backend is not None:
        lib._dynamo.reset()
    fn, state, after = make(lib)
    run = fn if backend is None else lib.compile(fn, backend=backend)
    out = []
    for i, n in enumerate(shapes):
        # new values each call, the same in both libraries
        x = ((lib.arange(n, dtype=lib.float32) - i) / (n + 1) + 0.1 * i).requires_grad_()
        try:
            r = run(x)
            extra = after(r, x) if after else None
            out.append((_obs(r), _obs(x.grad), _obs(extra), _obs(copy.copy(state))))
        except Exception as e:  # noqa: BLE001 - the type is observed
            out.append(("raised", type(e).__name__, _obs(copy.copy(state))))
    return out


def _backward(r: Any, x: Any) -> None:
    if isinstance(r, tuple):
        r = r[0]
    if r.requires_grad:
        r.sum().backward()


def _check(make: Any, torch: Any = None, shapes: tuple = (3, 3, 3)) -> None:
    want = _calls(hookgrad, make, None, shapes)
    if torch is not None:
        assert _calls(torch, make, None, shapes) == want
    for backend in BACKENDS:
        assert _calls(hookgrad, make, backend, shapes) == want, backend


class TestEveryTensorPassesTheDoor:
    """A tensor in a graph comes from an input, an op or a guarded constant; a tensor made
    outside `bind` from an input or a graph value (``detach``, ``.data``, a copy) is a graph
    node or breaks the graph, never a constant holding the first call's values."""

    @pytest.mark.parametrize("body", [
        lambda lib, x: x.detach().tanh(),
        lambda lib, x: x.data.tanh() + x,
        lambda lib, x: (x * 2).detach() * x,
        lambda lib, x: x.detach().clone() * x,
        lambda lib, x: lib.tensor(x.tolist()) * x,
        lambda lib, x: x.new_tensor(x.detach()) * x,
        lambda lib, x: copy.deepcopy(x.detach()) * x,
    ], ids=["detach", "data", "detach_intermediate", "clone", "tensor_list", "new_tensor",
            "deepcopy"])
    def test_values_of_later_calls(self, body: Any, torch: Any) -> None:
        _check(lambda lib: (lambda x: body(lib, x), None, _backward), torch)

    def test_detached_intermediate_into_module_with_full_backward_hook(self) -> None:
        def make(lib: Any) -> tuple:
            lib.manual_seed(0)
            m = lib.nn.Linear(3, 3)
            log: list = []
            m.register_full_backward_hook(lambda mod, gi, go: log.append(len(gi)))
            return (lambda x: m((x * 2).detach()) + x), log, _backward
        _check(make)


G = {"scale": 1.0, "sizes": [1, 2]}
S: list = []
D: dict = {}


class TestEveryReadIsGuarded:
    """Every Python value the trace read is guarded or replayed: containers the region reads
    and writes, containers nested in globals, attributes, an instance ``forward``."""

    def test_append_own_length(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            S.clear()

            def fn(x: Any) -> Any:
                S.append(len(S))
                return x * len(S)
            return fn, S, _backward
        _check(make, torch)
        assert S == [0, 1, 2]

    def test_dict_item_updated_by_the_region(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            D.clear()
            D["n"] = 0

            def fn(x: Any) -> Any:
                D["n"] = D["n"] + 1
                return x * D["n"]
            return fn, D, _backward
        _check(make, torch)

    def test_list_nested_in_a_global_dict(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            G["sizes"] = [1, 2]

            def fn(x: Any) -> Any:
                return x * len(G["sizes"])

            def after(r: Any, x: Any) -> None:
                G["sizes"].append(1)
            return fn, None, after
        _check(make, torch)

    def test_containers_reached_through_attributes(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            holder = type("Holder", (), {})()
            holder.items, holder.counts = [], {"n": 0}

            def fn(x: Any) -> Any:
                holder.items.append(len(holder.items))
                holder.counts["n"] = holder.counts["n"] + 1
                return x * len(holder.items) + holder.counts["n"]
            return fn, holder.items, _backward
        _check(make, torch)

    def test_class_attribute_counter(self, torch: Any) -> None:
        """(fuzzer seeds 1072, 1092) ``Counter.count += 1`` and a read of it."""
        def make(lib: Any) -> tuple:
            counter = type("Counter", (), {"count": 0})

            def fn(x: Any) -> Any:
                counter.count += 1
                return x * counter.count
            return fn, None, _backward
        _check(make, torch, shapes=(4, 6, 2, 8))

    def test_blind_log_append_is_replayed_without_recompiling(self) -> None:
        log: list = []

        def fn(x: Any) -> Any:
            y = x * 2
            log.append(y)
            return y
        cnt = hookgrad._dynamo.testing.CompileCounter()
        opt = hookgrad.compile(fn, backend=cnt)
        for _ in range(3):
            opt(hookgrad.ones(2))
        assert len(log) == 3 and cnt.frame_count == 1

    def test_module_forward_replaced_after_the_first_call(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            m = lib.nn.Linear(3, 3)
            with lib.no_grad():
                m.weight.copy_(lib.linspace(-1, 1, 9).reshape(3, 3))
                m.bias.fill_(0.1)

            def after(r: Any, x: Any) -> None:
                _backward(r, x)
                m.forward = lambda t: lib.nn.Linear.forward(m, t) * 2
            return (lambda x: m(x)), None, after
        _check(make, torch)


class TestEveryPerCallActionIsReplayed:
    """``retain_grad``, node hooks, saved-tensor hook contexts and hooks whose effects the
    tracer cannot see act on every call (or the region runs eagerly)."""

    def test_retain_grad_on_an_intermediate(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            kept: dict = {}

            def fn(x: Any) -> Any:
                y = x * 2
                y.retain_grad()
                kept["y"] = y
                return y.tanh()

            def after(r: Any, x: Any) -> Any:
                _backward(r, x)
                return kept["y"].grad
            return fn, None, after
        _check(make, torch)

    @pytest.mark.parametrize("kind", ["register_prehook", "register_hook"])
    def test_grad_fn_hooks_on_an_intermediate(self, kind: str, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            log: collections.deque = collections.deque()

            def fn(x: Any) -> Any:
                y = x * 2
                getattr(y.grad_fn, kind)(lambda *a: log.append(len(a)))
                return y.tanh()
            return fn, log, _backward
        _check(make, torch)

    def test_saved_tensors_hooks_entered_inside(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            log: collections.deque = collections.deque()

            def fn(x: Any) -> Any:
                with lib.autograd.graph.saved_tensors_hooks(
                        lambda t: (log.append("pack"), t)[1],
                        lambda t: (log.append("unpack"), t)[1]):
                    y = x.tanh() * x
                return y
            return fn, log, _backward
        _check(make, torch)

    def test_intermediate_hook_logging_to_a_deque(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            log: collections.deque = collections.deque()

            def fn(x: Any) -> Any:
                y = x.sin() * 2
                y.register_hook(lambda g: log.append("inside"))
                return y

            def after(r: Any, x: Any) -> None:
                r.register_hook(lambda g: log.append("outside"))
                _backward(r, x)
            return fn, log, after
        _check(make, torch)


class TestGradientFlags:
    """Outputs of no grad-requiring input do not require grad on cache hits."""

    def test_constant_output_of_a_graph_with_gradients(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            held = {"w": lib.ones(3)}  # a graph input that does not require grad

            def after(r: Any, x: Any) -> None:
                _backward(r, x)
                held["w"] = held["w"] + 1
            return (lambda x: (x.sin(), held["w"] * 2, x.detach() * 3)), None, after
        _check(make, torch)


    @pytest.mark.parametrize("backend", BACKENDS)
    def test_output_of_a_plain_argument_on_cache_hits(self, backend: str, torch: Any) -> None:
        """(fuzzer seed 27) ``f(x, w) -> (h(x), w * 2)`` with only `x` requiring grad."""
        def scenario(lib: Any, compiled: bool) -> list:
            fn = lambda x, w: ((x * w).cos(), w * 2)  # noqa: E731
            run = lib.compile(fn, backend=backend) if compiled else fn
            flags = []
            for i in range(3):
                x = (lib.arange(3, dtype=lib.float32) + i).requires_grad_()
                outs = run(x, lib.ones(3) * (i + 1))
                flags.append([o.requires_grad for o in outs])
            return flags
        assert scenario(hookgrad, True) == scenario(hookgrad, False) == scenario(torch, False)


class TestNoCrash:
    """Shapes of programs that used to crash a backend."""

    def test_layer_norm_without_grad(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            return (lambda x: lib.nn.functional.layer_norm(x.detach(), (3,))), None, None
        _check(make, torch)

    def test_compiled_autograd_layer_norm_on_a_1d_input(self) -> None:
        def run(ca: bool) -> Any:
            hookgrad.manual_seed(0)
            ln = hookgrad.nn.LayerNorm(3)
            x = hookgrad.randn(3, requires_grad=True)
            ctx = (hookgrad._dynamo.compiled_autograd._enable(hookgrad.compile(backend="eager"))
                   if ca else hookgrad.autograd.set_grad_enabled(True))
            with ctx:
                ln(x).tanh().sum().backward()
            return plain(x.grad), plain(ln.weight.grad), plain(ln.bias.grad)
        assert run(True) == run(False)

    def test_hook_returning_a_new_tensor_after_a_size_became_dynamic(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            def fn(x: Any) -> Any:
                y = x.relu() + 1
                y.register_hook(lambda g: lib.ones_like(g) * 0.5)
                return y.cos()
            return fn, None, _backward
        _check(make, torch, shapes=(4, 6, 2, 5))

    def test_side_effect_before_a_raise_in_a_dynamic_call(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            seen: dict = {}

            def fn(x: Any) -> Any:
                seen["n"] = x.shape[0]
                if x.shape[0] > 5:
                    raise ValueError("too big")
                return x * 2
            return fn, seen, _backward
        _check(make, torch, shapes=(2, 3, 4, 8, 3))
        for backend in BACKENDS:  # plain ints, never a symbolic size, in user state
            got = _calls(hookgrad, make, backend, (2, 3, 4, 8, 3))
            assert all(type(row[-1]["n"]) is int for row in got)

    def test_hook_on_a_module_output_with_full_backward_hooks(self, torch: Any) -> None:
        """(fuzzer seed 1731) an intermediate hook on the output of a module call that has
        full backward (pre-)hooks, the cached graph run a second time."""
        def make(lib: Any) -> tuple:
            m = lib.nn.Linear(3, 3)
            with lib.no_grad():
                m.weight.copy_(lib.linspace(-1, 1, 9).reshape(3, 3))
                m.bias.fill_(0.1)
            log: list = []
            m.register_full_backward_hook(lambda mod, gi, go: log.append(len(gi)))
            m.register_full_backward_pre_hook(lambda mod, go: log.append("pre"))

            def fn(x: Any) -> Any:
                h = m(x.cos())
                h.register_hook(lambda g: g * 0.5)
                return h.sum(0, keepdim=True) * h
            return fn, log, _backward
        _check(make, torch, shapes=(3, 3, 3, 3))

