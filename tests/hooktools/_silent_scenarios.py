"""One scenario per "why didn't my hook fire" reason, written once for torch and hookgrad.

Each scenario takes the library, runs a small step under a `HookTrace` with hooks that log their
name when they fire, and returns ``(trace, log)``. ``EXPECTED[name]`` is the hook that must stay
silent and the reason the trace must give; ``HOOKGRAD_ONLY`` lists scenarios whose hooks PyTorch
keeps where no public API reaches them (graph-node hooks live in C++).
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import pytest

from hookgrad.hooktools import HookTrace


def logged(log: list, name: str, ret: Any = None) -> Any:
    def hook(*args: Any, **kwargs: Any) -> Any:
        log.append(name)
        return ret

    hook.__name__ = name
    return hook


def _mlp(lib: Any) -> Any:
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


def not_on_path(lib: Any, log: list) -> Any:
    x = lib.ones(2, 3, requires_grad=True)
    with HookTrace(x) as trace:
        side = x * 2
        side.register_hook(logged(log, "side"))
        (x * 3).sum().backward()
    return trace


def excluded_by_inputs(lib: Any, log: list) -> Any:
    w1 = lib.ones(3, requires_grad=True)
    w2 = lib.ones(3, requires_grad=True)
    w2.register_hook(logged(log, "w2"))
    w1.register_hook(logged(log, "w1"))
    with HookTrace(w1, w2) as trace:
        (w1 * 2 + w2 * 3).sum().backward(inputs=[w1])
    return trace


def module_not_called(lib: Any, log: list) -> Any:
    model, spare = _mlp(lib), lib.nn.Linear(3, 3)
    spare.register_forward_hook(logged(log, "spare.fwd"))
    spare.weight.register_post_accumulate_grad_hook(logged(log, "spare.w.acc"))
    with HookTrace(model, spare) as trace:
        model(lib.ones(1, 3)).sum().backward()
    return trace


def registered_after_forward(lib: Any, log: list) -> Any:
    model = _mlp(lib)
    with HookTrace(model) as trace:
        model(lib.ones(1, 3)).sum().backward()
        model[0].register_forward_hook(logged(log, "late.fwd"))
    return trace


def registered_after_node(lib: Any, log: list) -> Any:
    x = lib.ones(2, requires_grad=True)
    with HookTrace() as trace:
        h = x * 2
        out = h * 3

        def register_late(g: Any) -> None:  # h's node runs after out's: too late for out
            out.register_hook(logged(log, "too_late"))

        h.register_hook(register_late)
        out.sum().backward()
    return trace


def handle_removed(lib: Any, log: list) -> Any:
    model = _mlp(lib)
    handle = model[2].register_forward_hook(logged(log, "removed"))
    with HookTrace(model) as trace:
        handle.remove()
        model(lib.ones(1, 3))
    return trace


def graph_freed(lib: Any, log: list) -> Any:
    x = lib.ones(2, requires_grad=True)
    with HookTrace() as trace:
        h = x.exp()
        out = (h * h).sum()
        out.backward()
        h.register_hook(logged(log, "second_pass"))
        with pytest.raises(RuntimeError, match="second time"):
            out.backward()
    return trace


def grad_mode_off(lib: Any, log: list) -> Any:
    model = _mlp(lib)
    model[0].register_full_backward_hook(logged(log, "eval.bwd"))
    model[0].weight.register_hook(logged(log, "eval.w"))
    with HookTrace(model) as trace, lib.no_grad():
        model(lib.ones(1, 3))
    return trace


def no_grad_inputs(lib: Any, log: list) -> Any:
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Linear(3, 2))
    model[0].register_full_backward_hook(logged(log, "relu.bwd"))
    model[1].register_full_backward_hook(logged(log, "lin.bwd"))
    with HookTrace(model) as trace, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Full backward hook is firing ... no inputs require"
        model(lib.ones(1, 3)).sum().backward()
    return trace


def outputs_not_used(lib: Any, log: list) -> Any:
    a, b = lib.nn.Linear(3, 2), lib.nn.Linear(3, 2)
    a.register_full_backward_hook(logged(log, "a.bwd"))
    with HookTrace(a, b) as trace:
        x = lib.ones(1, 3, requires_grad=True)
        a(x)
        b(x).sum().backward()
    return trace


def requires_grad_off(lib: Any, log: list) -> Any:
    model = _mlp(lib)
    model[0].weight.register_post_accumulate_grad_hook(logged(log, "frozen.acc"))
    model[0].weight.requires_grad_(False)
    with HookTrace(model) as trace:
        model(lib.ones(1, 3)).sum().backward()
    return trace


def no_accumulate(lib: Any, log: list) -> Any:
    model = _mlp(lib)
    model[2].bias.register_post_accumulate_grad_hook(logged(log, "bias.acc"))
    model[2].bias.register_hook(logged(log, "bias.grad"))
    with HookTrace(model) as trace:
        lib.autograd.grad(model(lib.ones(1, 3)).sum(), [model[2].bias])
    return trace


def no_backward(lib: Any, log: list) -> Any:
    model = _mlp(lib)
    model[2].weight.register_hook(logged(log, "never"))
    with HookTrace(model) as trace:
        model(lib.ones(1, 3)).sum()
    return trace


def backward_raised(lib: Any, log: list) -> Any:
    model = _mlp(lib)
    model[0].weight.register_hook(logged(log, "after_error"))

    def boom(g: Any) -> None:
        raise ValueError("boom")

    with HookTrace(model) as trace:
        out = model(lib.ones(1, 3))
        out.register_hook(boom)
        with pytest.raises(ValueError):
            out.sum().backward()
    return trace


def forward_raised(lib: Any, log: list) -> Any:
    lin = lib.nn.Linear(3, 2)
    lin.register_forward_hook(logged(log, "skipped.fwd"))
    with HookTrace(lin) as trace, pytest.raises(RuntimeError):
        lin(lib.ones(1, 5))
    return trace


def optimizer_hooks(lib: Any, log: list) -> Any:
    model = _mlp(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    opt.register_step_pre_hook(logged(log, "opt.pre"))
    other = lib.optim.SGD(model.parameters(), lr=0.1)
    other.register_step_post_hook(logged(log, "other.post"))
    with HookTrace(model, opt, other) as trace:
        model(lib.ones(1, 3)).sum().backward()
        opt.step()
        opt.register_step_post_hook(logged(log, "opt.late"))
    return trace


def stopped_at_input(lib: Any, log: list) -> Any:
    x = lib.ones(2, requires_grad=True)
    with HookTrace() as trace:
        h = x * 2
        h.grad_fn.register_prehook(logged(log, "h.node_pre"))
        h.register_hook(logged(log, "h.grad"))
        lib.autograd.grad((h * h).sum(), h)
    return trace


def global_hook_no_module(lib: Any, log: list) -> Any:
    mm = importlib.import_module(f"{lib.__name__}.nn.modules.module")
    handle = mm.register_module_forward_hook(logged(log, "global.fwd"))
    try:
        with HookTrace() as trace:
            (lib.ones(2, requires_grad=True) * 2).sum().backward()
    finally:
        handle.remove()
    return trace


def step_raised(lib: Any, log: list) -> Any:
    model = _mlp(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)

    def refuse(o: Any, args: Any, kwargs: Any) -> None:
        raise ValueError("refused")

    opt.register_step_pre_hook(refuse)
    opt.register_step_post_hook(logged(log, "opt.post"))
    with HookTrace(model, opt) as trace, pytest.raises(ValueError):
        opt.step()
    return trace


def state_dict_not_called(lib: Any, log: list) -> Any:
    model = _mlp(lib)
    model.register_state_dict_pre_hook(logged(log, "sd.pre"))
    model.register_load_state_dict_post_hook(logged(log, "load.post"))
    with HookTrace(model) as trace:
        model(lib.ones(1, 3))
    return trace


EXPECTED = {
    not_on_path: {"side": "not_on_path"},
    excluded_by_inputs: {"w2": "excluded_by_inputs"},
    module_not_called: {"spare.fwd": "module_not_called", "spare.w.acc": "module_not_called"},
    registered_after_forward: {"late.fwd": "registered_after_forward"},
    registered_after_node: {"too_late": "registered_after_node"},
    handle_removed: {"removed": "handle_removed"},
    graph_freed: {"second_pass": "graph_freed"},
    grad_mode_off: {"eval.bwd": "grad_mode_off", "eval.w": "grad_mode_off"},
    no_grad_inputs: {"relu.bwd": "no_grad_inputs"},
    outputs_not_used: {"a.bwd": "outputs_not_used"},
    requires_grad_off: {"frozen.acc": "requires_grad_off"},
    no_accumulate: {"bias.acc": "no_accumulate"},
    no_backward: {"never": "no_backward"},
    backward_raised: {"after_error": "backward_raised"},
    forward_raised: {"skipped.fwd": "forward_raised"},
    optimizer_hooks: {"other.post": "optimizer_not_stepped", "opt.late": "registered_after_step"},
    stopped_at_input: {"h.node_pre": "stopped_at_input"},
    global_hook_no_module: {"global.fwd": "no_module_ran"},
    step_raised: {"opt.post": "step_raised"},
    state_dict_not_called: {"sd.pre": "not_called", "load.post": "not_called"},
}
HOOKGRAD_ONLY = {stopped_at_input}
