"""``hookgrad.hooktools.HookTrace``: the recorded firing order equals PyTorch's hook order.

The scenario registers named hooks on every surface; on torch each hook appends its name to a
log, on hookgrad the same hooks run under a `HookTrace`, and the trace's event names must equal
the torch log (and hookgrad's own log: tracing changes nothing).
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import hookgrad
from hookgrad.hooktools import HookTrace, TrainingMonitor
from tests.hooktools._models import pair


def named(log, name, ret=None):
    def hook(*args, **kwargs):
        log.append(name)
        return ret

    hook.__name__ = name
    return hook


def build(lib, log, weights=None):
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))
    if weights is not None:
        model.load_state_dict({k: lib.tensor(v) for k, v in weights.items()})
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    model.register_forward_pre_hook(named(log, "seq.fwd_pre"))
    model.register_forward_hook(named(log, "seq.fwd"))
    model[0].register_forward_hook(named(log, "lin0.fwd"))
    model[1].register_forward_pre_hook(named(log, "relu.fwd_pre"))
    model[2].register_full_backward_pre_hook(named(log, "lin2.bwd_pre"))
    model[2].register_full_backward_hook(named(log, "lin2.bwd"))
    model[0].register_full_backward_hook(named(log, "lin0.bwd"))
    model[0].weight.register_hook(named(log, "w0.tensor"))
    model[0].weight.register_post_accumulate_grad_hook(named(log, "w0.acc"))
    model[0].bias.register_post_accumulate_grad_hook(named(log, "b0.acc"))
    model[2].bias.register_post_accumulate_grad_hook(named(log, "b2.acc"))
    opt.register_step_pre_hook(named(log, "opt.pre"))
    opt.register_step_post_hook(named(log, "opt.post"))
    return model, opt


def step(lib, model, opt, log):
    x = lib.ones(2, 4, requires_grad=True)
    x.register_hook(named(log, "x.grad"))
    out = model(x)
    out.register_hook(named(log, "out.grad"))
    out.grad_fn.register_prehook(named(log, "out.node_pre"))
    out.grad_fn.register_hook(named(log, "out.node_post"))
    out.sum().backward()
    opt.step()
    return x.grad


@pytest.mark.oracle
def test_trace_order_matches_torch_log(torch):
    tlog = []
    tm, to = build(torch, tlog)
    weights = {k: v.detach().numpy().copy() for k, v in tm.state_dict().items()}
    tgrad = step(torch, tm, to, tlog)
    hlog = []
    hm, ho = build(hookgrad, hlog, weights)
    with HookTrace(hm, ho) as trace:
        hgrad = step(hookgrad, hm, ho, hlog)
    assert [e.hook for e in trace.events] == hlog == tlog
    assert [e.index for e in trace.events] == list(range(len(tlog)))
    assert np.allclose(hgrad.numpy(), tgrad.numpy())


def test_trace_kinds_and_owners():
    log = []
    model, opt = build(hookgrad, log)
    with HookTrace(model, opt) as trace:
        step(hookgrad, model, opt, log)
    kinds = {e.hook: (e.kind, e.owner) for e in trace.events}
    assert kinds["seq.fwd_pre"] == ("module.forward_pre", "Sequential")
    assert kinds["lin0.fwd"] == ("module.forward", "0")
    assert kinds["lin2.bwd_pre"] == ("module.backward_pre", "2")
    assert kinds["lin0.bwd"] == ("module.backward", "0")
    assert kinds["w0.tensor"] == ("tensor", "0.weight")
    assert kinds["w0.acc"] == ("post_accumulate", "0.weight")
    assert kinds["opt.pre"] == ("optimizer.step_pre", "SGD")
    assert kinds["opt.post"] == ("optimizer.step_post", "SGD")
    # hooks registered inside the trace name their object too
    assert kinds["x.grad"] == ("tensor", "tensor[2, 4]")
    assert kinds["out.grad"] == ("tensor", "tensor[2, 3] (BackwardHookFunctionBackward)")
    assert kinds["out.node_pre"] == ("node.pre", "BackwardHookFunctionBackward")
    assert kinds["out.node_post"] == ("node.post", "BackwardHookFunctionBackward")
    by_hook = {e.hook: e for e in trace.events}
    assert by_hook["x.grad"].registered_during_trace
    assert not by_hook["lin0.fwd"].registered_during_trace
    assert by_hook["x.grad"].registered_at.endswith(f"test_trace.py:{_line_of('x.register_hook')}")
    assert by_hook["lin0.fwd"].registered_at.endswith("(definition)")
    table = trace.format().splitlines()
    assert len(table) == len(trace.events) + 1 and "lin0.fwd" in table[2]


def _line_of(text):
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if text in line)


def test_trace_skips_full_backward_hook_plumbing():
    """The node hooks that drive module full-backward hooks are not user hooks."""
    model = hookgrad.nn.Linear(3, 2)
    model.register_full_backward_hook(lambda m, gi, go: None)
    with HookTrace(model) as trace:
        model(hookgrad.ones(1, 3, requires_grad=True)).sum().backward()
    assert [(e.kind, e.hook) for e in trace.events] == [("module.backward", "<lambda>")]


@pytest.mark.oracle
def test_trace_global_hooks_match_torch(torch):
    def run(lib, trace_cls=None):
        log = []
        mod = importlib.import_module(f"{lib.__name__}.nn.modules.module")
        optmod = importlib.import_module(f"{lib.__name__}.optim.optimizer")
        handles = [mod.register_module_forward_pre_hook(named(log, "g.fwd_pre")),
                   mod.register_module_forward_hook(named(log, "g.fwd")),
                   mod.register_module_full_backward_hook(named(log, "g.bwd")),
                   optmod.register_optimizer_step_pre_hook(named(log, "g.opt_pre")),
                   optmod.register_optimizer_step_post_hook(named(log, "g.opt_post"))]
        lin = lib.nn.Linear(3, 2)
        lin.register_forward_hook(named(log, "m.fwd"))
        opt = lib.optim.SGD(lin.parameters(), lr=0.1)
        try:
            trace = trace_cls(lin, opt) if trace_cls else None
            if trace:
                trace.__enter__()
            lin(lib.ones(1, 3, requires_grad=True)).sum().backward()
            opt.step()
            if trace:
                trace.__exit__(None, None, None)
        finally:
            for h in handles:
                h.remove()
        return log, trace

    tlog, _ = run(torch)
    hlog, trace = run(hookgrad, HookTrace)
    assert [e.hook for e in trace.events] == hlog == tlog
    assert [e.kind for e in trace.events][:2] == ["global.module.forward_pre",
                                                 "global.module.forward"]


@pytest.mark.oracle
def test_trace_preserves_hook_results_and_errors(torch):
    """Wrapped hooks return what the hook returns, and error texts still name the hook."""

    def run(lib, traced):
        lin = lib.nn.Linear(2, 2)
        x = lib.ones(1, 2, requires_grad=True)
        lin.register_forward_hook(lambda m, a, out: out * 0 + 1)
        ctx = HookTrace(lin) if traced else None
        if ctx:
            ctx.__enter__()
        try:
            out = lin(x)
            out.register_hook(lambda g: g * 3)
            out.sum().backward()

            def bad(g):
                return lib.ones(5)

            y = (x * 2).sum()
            x.register_hook(bad)
            with pytest.raises(RuntimeError) as err:
                y.backward()
        finally:
            if ctx:
                ctx.__exit__(None, None, None)
        return out.tolist(), str(err.value)

    expected = run(torch, traced=False)
    assert run(hookgrad, traced=False) == expected
    assert run(hookgrad, traced=True) == expected


def test_trace_restores_registries_on_exit_and_error():
    lin = hookgrad.nn.Linear(3, 2)
    fn = lambda m, a, o: None  # noqa: E731
    handle = lin.register_forward_hook(fn)
    with pytest.raises(ValueError), HookTrace(lin):
        assert lin._forward_hooks[handle.id] is not fn
        raise ValueError
    assert lin._forward_hooks[handle.id] is fn
    assert hookgrad.utils.hooks._REGISTRATION_OBSERVERS == []


def test_trace_hooks_registered_inside_keep_working_after_exit():
    lin = hookgrad.nn.Linear(3, 2)
    log = []
    with HookTrace(lin) as trace:
        handle = lin.register_forward_hook(named(log, "late"))
        lin(hookgrad.ones(1, 3))
    lin(hookgrad.ones(1, 3))
    assert log == ["late", "late"] and [e.hook for e in trace.events] == ["late"]
    handle.remove()
    assert len(lin._forward_hooks) == 0


def test_trace_handle_removed_during_trace():
    lin = hookgrad.nn.Linear(3, 2)
    handle = lin.register_forward_pre_hook(lambda m, a: None)
    lin.register_forward_hook(lambda m, a, o: None)
    with HookTrace(lin) as trace:
        handle.remove()
        lin(hookgrad.ones(1, 3))
    assert [e.kind for e in trace.events] == ["module.forward"]
    assert handle.id not in lin._forward_pre_hooks


def test_trace_nested_traces_both_record():
    lin = hookgrad.nn.Linear(3, 2)
    log = []
    lin.register_forward_hook(named(log, "h"))
    with HookTrace(lin) as outer:
        with HookTrace(lin) as inner:
            lin(hookgrad.ones(1, 3))
        lin(hookgrad.ones(1, 3))
    assert [e.hook for e in outer.events] == ["h", "h"]
    assert [e.hook for e in inner.events] == ["h"]
    assert list(lin._forward_hooks.values())[0].__name__ == "h"
    assert not hasattr(list(lin._forward_hooks.values())[0], "__hookgrad_traced__")


def test_trace_with_kwargs_and_always_call_flags_survive():
    lin = hookgrad.nn.Linear(3, 2)
    log = []

    def with_kwargs(m, args, kwargs, out):
        log.append(sorted(kwargs))

    def always(m, args, out):
        log.append("always")

    lin.register_forward_hook(with_kwargs, with_kwargs=True)
    lin.register_forward_hook(always, always_call=True)
    with HookTrace(lin) as trace:
        lin(input=hookgrad.ones(1, 3))
    assert log == [["input"], "always"] and len(trace.events) == 2


def test_trace_firing_indices_for_repeated_hooks():
    lin = hookgrad.nn.Linear(3, 2)
    lin.register_forward_hook(lambda m, a, o: None)
    with HookTrace(lin) as trace:
        wrapper = next(iter(lin._forward_hooks.values()))
        for _ in range(3):
            lin(hookgrad.ones(1, 3))
        assert trace.firing_indices(wrapper) == [0, 1, 2]
    assert trace.firing_indices(lambda: None) == []


@pytest.mark.oracle
def test_trace_of_monitor_hooks_matches_torch_order(torch):
    """TrainingMonitor's hooks, traced on hookgrad, fire in the order torch fires them."""
    tm, hm = pair(torch, lambda lib: lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.ReLU(),
                                                        lib.nn.Linear(3, 2)))
    torch_order = []
    with TrainingMonitor(tm) as tmon:
        for reg in _monitor_registries(tmon, tm):
            for hid, fn in list(reg.items()):
                reg[hid] = _logged(fn, torch_order)
        _registering_logged(torch, torch_order)
        try:
            tm(torch.ones(2, 4)).sum().backward()
        finally:
            _registering_logged(torch, None)
    with TrainingMonitor(hm), HookTrace(hm) as trace:
        hm(hookgrad.ones(2, 4)).sum().backward()
    assert [e.hook for e in trace.events] == torch_order


def _monitor_registries(mon, model):
    regs = [m._forward_hooks for m in model]
    regs += [p._post_accumulate_grad_hooks for p in model.parameters()]
    return [r for r in regs if r]


def _logged(fn, order):
    def wrapper(*args):
        order.append(fn.__name__)
        return fn(*args)

    return wrapper


_ORIGINAL_REGISTER = {}


def _registering_logged(torch, order):
    """Log torch tensor hooks registered by the monitor's forward hooks (torch has no observer)."""
    cls = torch.Tensor
    if order is None:
        cls.register_hook = _ORIGINAL_REGISTER.pop("register_hook")
        return
    original = _ORIGINAL_REGISTER.setdefault("register_hook", cls.register_hook)

    def register_hook(self, hook):
        return original(self, _logged(hook, order))

    cls.register_hook = register_hook
