"""Leaf hooks keep eager's order under ``aot_eager``/``inductor`` (NOTE [Leaves in the compiled
backward] in hookgrad/compile/codegen/leaves.py).

The fuzzer's last failure class (seeds 460, ...): a parameter's post-accumulate hook ran after
an input's tensor hook or a module's full backward hook because the compiled graph's single
backward node handed every leaf gradient over at its end. Eager's engine runs a leaf's
accumulator as soon as its last gradient arrives. PyTorch's ``torch.compile(aot_eager)`` has the
same departure (checked: seed 460 logs ``tv2`` before ``acc3`` there); the contract (§0.1) asks
for eager's order, so each case is compared with PyTorch's *eager* run and with hookgrad eager.
"""

from __future__ import annotations

from typing import Any

import pytest

import hookgrad
from tests.compile.test_soundness import BACKENDS, _backward, _calls, _check


def _drain(log: list, run: Any = _backward) -> Any:
    """``after``: run backward, then hand the call's log over and empty it (a log that grows
    would fail the trace's guard on its length and recompile every call; a compiled
    function's first call runs eagerly)."""
    def after(r: Any, x: Any) -> list:
        run(r, x)
        out = list(log)
        log.clear()
        return out
    return after


def _linear(lib: Any, n: int = 3, shift: float = 0.0) -> Any:
    """A Linear with the same values in both libraries."""
    m = lib.nn.Linear(n, n)
    with lib.no_grad():
        m.weight.copy_((lib.arange(n * n, dtype=lib.float32).reshape(n, n) - 4 + shift) / 7)
        m.bias.copy_(lib.arange(n, dtype=lib.float32) / 5 - shift)
    return m


class TestLeafHooksKeepEagerOrder:
    """Minimised shapes of the fuzzer's hook-order failures, and their neighbours (hooks on
    parameters are registered once: a new one each call would recompile, and a compiled
    function's first call runs eagerly)."""

    def test_input_tensor_hook_and_parameter_post_accumulate_hook(self, torch: Any) -> None:
        # seed 460: the weight's accumulator runs inside the graph's backward, before the
        # input's hook (the input's gradient is complete only at the graph's first op)
        def make(lib: Any) -> tuple:
            m, log = _linear(lib), []
            m.weight.register_post_accumulate_grad_hook(lambda p: log.append("w"))

            def fn(x: Any) -> Any:
                x.register_hook(lambda g: log.append("x"))
                return m((x * 1.0).sin().view(1, 3))
            return fn, None, _drain(log)
        _check(make, torch)

    def test_module_full_backward_hook_and_parameter_post_accumulate_hook(self,
                                                                         torch: Any) -> None:
        def make(lib: Any) -> tuple:
            m, log = _linear(lib), []
            m.register_full_backward_hook(lambda mod, gi, go: log.append("module"))
            m.weight.register_post_accumulate_grad_hook(lambda p: log.append("w"))
            m.bias.register_post_accumulate_grad_hook(lambda p: log.append("b"))
            return (lambda x: m(x.tanh().view(1, 3)).sin()), None, _drain(log)
        _check(make, torch)

    def test_linear_of_a_leaf_input_bias_input_then_weight(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            m, log = _linear(lib), []
            m.weight.register_post_accumulate_grad_hook(lambda p: log.append("w"))
            m.bias.register_post_accumulate_grad_hook(lambda p: log.append("b"))

            def fn(x: Any) -> Any:
                x.register_post_accumulate_grad_hook(lambda p: log.append("x"))
                return m(x.view(1, 3)).exp()
            return fn, None, _drain(log)
        _check(make, torch)

    def test_two_leaves_of_one_op(self, torch: Any) -> None:
        def make(lib: Any) -> tuple:
            log: list = []
            p = lib.nn.Parameter(lib.ones(3))
            p.register_post_accumulate_grad_hook(lambda t: log.append(("p", t.grad.tolist())))

            def fn(x: Any) -> Any:
                x.register_hook(lambda g: log.append("x"))
                return (p * x).tanh() * 2  # edges (p, x): p's runs first
            return fn, None, _drain(log)
        _check(make, torch)

    def test_hook_reading_another_parameters_grad(self, torch: Any) -> None:
        # a module backward hook sees the weight's ``.grad`` written, as in eager
        def make(lib: Any) -> tuple:
            m, log = _linear(lib), []
            m.register_full_backward_pre_hook(
                lambda mod, go: log.append(m.weight.grad is not None))
            inner = _linear(lib, shift=1.0)
            inner.register_full_backward_hook(
                lambda mod, gi, go: log.append(round(float(m.weight.grad.sum()), 4)))
            return (lambda x: m(inner(x.view(1, 3)))), None, _drain(log)
        _check(make, torch)

    def test_leaf_also_used_after_the_region(self, torch: Any) -> None:
        # the input's accumulator waits for the outside consumer: not run inside the graph
        def make(lib: Any) -> tuple:
            m, log = _linear(lib), []
            m.weight.register_post_accumulate_grad_hook(lambda p: log.append("w"))

            def run(r: Any, x: Any) -> None:
                x.register_hook(lambda g: log.append("x"))
                (r.sum() + (x * 3).sum()).backward()
            return (lambda x: m(x.view(1, 3)).cos()), None, _drain(log, run)
        _check(make, torch)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_and_inputs_keep_values(backend: str) -> None:
    """``autograd.grad`` and ``backward(inputs=...)`` prune the pass: leaves are not run
    inside the graph, and values equal eager's."""
    def make(lib: Any) -> tuple:
        m, log = _linear(lib), []
        m.weight.register_post_accumulate_grad_hook(lambda p: log.append("w"))

        def after(r: Any, x: Any) -> Any:
            (gx,) = lib.autograd.grad(r.sum(), [x], retain_graph=True)
            r.sum().backward(inputs=[m.bias])
            out = (gx, list(log))
            log.clear()
            return out
        return (lambda x: m(x.view(1, 3)).tanh()), None, after
    assert _calls(hookgrad, make, backend) == _calls(hookgrad, make, None)
