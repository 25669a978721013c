"""Minimised programs the widened differential fuzzer found (`fuzz_programs`), one class per
soundness rule (docs/compile.md): each compiled call must equal the eager call under every
backend, and the eager sequence PyTorch's eager run.
"""

from __future__ import annotations

from typing import Any

import pytest

import hookgrad
from tests.compile.test_soundness import _backward, _check


class TestAutogradStateSetInsideTheRegion:
    """Grad mode and ``requires_grad`` set inside the compiled function are per-call actions on
    autograd state: the graph must not replay its ops in the caller's mode (graph break)."""

    @pytest.mark.parametrize("ctx", ["no_grad", "set_grad_enabled", "inference_mode"])
    def test_ops_under_a_grad_mode_entered_inside(self, ctx: str, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            def fn(x: Any) -> Any:
                h = x * 1.0
                mode = (getattr(lib, ctx)() if ctx != "set_grad_enabled"
                        else lib.set_grad_enabled(False))
                with mode:
                    h2 = h * 2 + x
                return h + h2
            return fn, None, _backward
        _check(make, torch)

    def test_enable_grad_nested_in_no_grad(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            def fn(x: Any) -> Any:
                with lib.no_grad():
                    a = x * 2.0
                    with lib.enable_grad():
                        h = x * 3.0
                return h.tanh() + a

            def after(r: Any, x: Any) -> Any:
                return r.requires_grad
            return fn, None, after
        _check(make, torch)

    @pytest.mark.parametrize("body", [
        lambda x: (x * 1.0).detach().requires_grad_(),
        lambda x: (x * 2).detach().requires_grad_(True) * x,
    ], ids=["returned_leaf", "leaf_times_input"])
    def test_requires_grad_set_on_a_graph_value(self, body: Any, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            def after(r: Any, x: Any) -> Any:
                _backward(r, x)
                return (r.is_leaf, r.requires_grad)
            return body, None, after
        _check(make, torch)

    def test_requires_grad_flag_set_on_an_input(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            def fn(x: Any) -> Any:
                w = x.detach() * 0 + 1
                w.requires_grad = True
                return w * x, w
            return fn, None, lambda r, x: (_backward(r, x), r[1].grad)[1]
        _check(make, torch)


class TestHookBodiesRunAsFunctions:
    """A traced tensor-hook body is a graph; it runs as a function, so global module hooks
    (which fire on module calls) never see it."""

    def test_global_forward_pre_hook_after_a_size_became_dynamic(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            log: list = []

            def fn(x: Any) -> Any:
                h = x * 2.0
                h.register_hook(lambda g: g * 0.5)
                return h.sin()

            def after(r: Any, x: Any) -> Any:
                handle = lib.nn.modules.module.register_module_forward_pre_hook(
                    lambda mod, a: log.append(type(mod).__name__))
                try:
                    _backward(r, x)
                finally:
                    handle.remove()
                return list(log)
            return fn, log, after
        _check(make, torch, shapes=(3, 4, 5, 6))


def test_repeat_interleave_saves_no_index(torch: Any) -> None:
    """``repeat_interleave`` with an int count saves nothing for backward (PyTorch's
    unsqueeze/expand/clone/view), so saved-tensor hooks see no extra pack."""
    def packs(lib: Any) -> list:
        log: list = []
        x = lib.arange(6.0).reshape(3, 2).requires_grad_()
        with lib.autograd.graph.saved_tensors_hooks(lambda t: (log.append(t.shape), t)[1],
                                                    lambda t: t):
            y = (x * 1.0).repeat_interleave(2, dim=-1) * x.repeat_interleave(2, dim=1)
        y.sum().backward()
        return [tuple(s) for s in log], type(y.grad_fn).__name__, x.grad.tolist(), y.tolist()
    assert packs(hookgrad) == packs(torch)


class TestMissingAttributeReads:
    """``getattr(obj, name, default)`` on an object without `name` reads the *absence*: it is
    guarded (``not hasattr``), so a later call after the region created the attribute retraces
    instead of replaying the first call's write."""

    @pytest.mark.parametrize("kind", ["module", "object"])
    def test_counter_created_by_the_region(self, kind: str, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            obj = lib.nn.Linear(2, 2) if kind == "module" else type("O", (), {})()
            seen: list = []

            def fn(x: Any) -> Any:
                obj.calls = getattr(obj, "calls", 0) + 1
                return x * obj.calls

            def after(r: Any, x: Any) -> Any:
                _backward(r, x)
                seen.append(obj.calls)
                return obj.calls
            return fn, seen, after
        _check(make, torch, shapes=(3, 3, 3, 3))


class TestOuterSavedTensorHooks:
    """A ``saved_tensors_hooks`` context entered around the compiled call belongs to the caller:
    its pack hook's side effects happen once per call, never replayed as the region's."""

    @pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
    def test_pack_hook_logging_to_a_list_the_region_reaches(self, backend: str,
                                                           torch: Any) -> None:
        def run(lib: Any, compiled: bool) -> list:
            lib._dynamo.reset()
            log: list = []
            m = lib.nn.Linear(2, 2)

            def fn(x: Any) -> Any:
                m.weight.register_post_accumulate_grad_hook(lambda p: log.append("acc"))
                return x.sin()
            f = lib.compile(fn, backend=backend) if compiled else fn
            out = []
            for i in range(3):
                x = (lib.arange(2.0) + i).requires_grad_()
                with lib.autograd.graph.saved_tensors_hooks(
                        lambda t: (log.append("pack"), t)[1],
                        lambda t: (log.append("unpack"), t)[1]):
                    r = f(x)
                r.sum().backward()
                out.append((list(log), [round(v, 5) for v in x.grad.tolist()]))
                log.clear()
            return out
        want = run(hookgrad, False)
        assert run(torch, False) == want
        assert run(hookgrad, True) == want


class TestArgumentStateIsGuarded:
    """Values reached through the arguments are guarded as they were before the trace: a
    mutable default the region appends to, Python attributes set on a tensor argument."""

    def test_mutable_default_argument(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            def fn(x: Any, acc: list = []) -> Any:  # noqa: B006 - the scenario
                acc.append(1)
                return x * len(acc)
            return fn, None, _backward
        _check(make, torch, shapes=(3, 3, 3, 3))

    def test_python_attribute_of_a_tensor_argument(self, torch: Any) -> None:
        def run(lib: Any, backend: str | None) -> list:
            lib._dynamo.reset()

            def fn(x: Any) -> Any:
                return x * getattr(x, "tag", 1)
            f = fn if backend is None else lib.compile(fn, backend=backend)
            out = []
            for tag in (None, 4, 4, 5, None):
                x = lib.ones(2)
                if tag is not None:
                    x.tag = tag
                out.append(f(x).tolist())
            return out
        want = run(torch, None)
        for backend in (None, "eager", "aot_eager", "inductor"):
            assert run(hookgrad, backend) == want, backend

    def test_parameter_grad_read_inside_the_region(self, torch: Any) -> None:
        """``p.grad`` is None on the first call and a tensor after a backward: the trace's
        read is guarded on its None-ness (a tensor grad is a graph input)."""
        def make(lib: Any) -> tuple:
            lin = lib.nn.Linear(3, 1)
            with lib.no_grad():
                lin.weight.copy_(lib.tensor([[0.5, -0.25, 1.0]]))
                lin.bias.zero_()

            def fn(x: Any) -> Any:
                g = lin.weight.grad
                out = lin(x).sum()
                return out if g is None else out + g.sum() * 10
            return fn, None, _backward
        _check(make, torch, shapes=(3, 3, 3, 3))


def test_module_hook_registered_inside_the_region(torch: Any) -> None:
    """A forward pre-hook the region registers on a module it then calls: each call fires one
    more hook (seed 3380); the module's hook dict is guarded as it was before the trace."""
    def run(lib: Any, backend: str | None) -> list:
        lib._dynamo.reset()
        log: list = []
        ln = lib.nn.LayerNorm(4)
        ln.register_full_backward_hook(lambda mod, gi, go: None)

        def fn(x: Any) -> Any:
            ln.register_forward_pre_hook(lambda mod, a: log.append("pre"))
            return ln(x * 1.0)
        f = fn if backend is None else lib.compile(fn, backend=backend)
        out = []
        for _ in range(4):
            f(lib.ones(2, 4, requires_grad=True)).sum().backward()
            out.append(len(log))
            log.clear()
        return out
    want = run(torch, None)
    for backend in (None, "eager", "aot_eager", "inductor"):
        assert run(hookgrad, backend) == want, backend
