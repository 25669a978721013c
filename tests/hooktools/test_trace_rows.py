"""What each `HookTrace` row says: the object a firing was for, argument and result summaries
(None slots, "replaced"), duration; the same rows on a PyTorch model, including hooks registered
while the trace is open (the four complaints of issue 17)."""

from __future__ import annotations

import importlib
import re

import pytest

import hookgrad
from hookgrad.hooktools import HookTrace
from hookgrad.hooktools._summary import describe
from tests.hooktools._models import pair


def _model(lib):
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 3))


def issue_step(lib, model):
    """A global forward pre-hook, a forward hook, a full backward hook, and a tensor hook
    registered during the traced step."""
    mm = importlib.import_module(f"{lib.__name__}.nn.modules.module")
    handle = mm.register_module_forward_pre_hook(lambda m, args: None)
    model[0].register_forward_hook(lambda m, args, out: None)
    model[0].register_full_backward_hook(lambda m, gin, gout: None)
    try:
        with HookTrace(model) as trace:
            out = model(lib.ones(2, 4))
            out.register_hook(lambda g: g * 2)
            out.sum().backward()
    finally:
        handle.remove()
    return trace


def _rows(trace):
    strip = re.compile(r" \|[^|]*\|")  # norms: equal to float32 rounding only
    return [(e.kind, e.target, strip.sub("", e.args), strip.sub("", e.result), e.replaced)
            for e in trace.events]


def test_issue_rows_on_hookgrad():
    with pytest.warns(UserWarning, match="no inputs require gradients"):
        trace = issue_step(hookgrad, _model(hookgrad))
    glob = [e.target for e in trace.events if e.kind == "global.module.forward_pre"]
    assert glob == ["Sequential", "0", "1", "2"]  # not four identical "*" rows
    tensor = next(e for e in trace.events if e.kind == "tensor")
    assert tensor.replaced and tensor.result.startswith("f32[2, 3] |")
    assert tensor.registered_during_trace
    bwd = next(e for e in trace.events if e.kind == "module.backward")
    assert bwd.target == "0" and bwd.args.startswith("(None,), (f32[2, 8] |")  # x: no grad
    assert bwd.result == "None" and not bwd.replaced
    assert all(isinstance(e.seconds, float) and e.seconds >= 0 for e in trace.events)
    text = trace.format()
    assert "(replaced)" in text and "Sequential" in text


@pytest.mark.oracle
def test_issue_rows_match_torch(torch):
    tm, hm = pair(torch, _model)
    with pytest.warns(UserWarning, match="no inputs require gradients"):
        ttrace = issue_step(torch, tm)
    with pytest.warns(UserWarning, match="no inputs require gradients"):
        htrace = issue_step(hookgrad, hm)
    assert _rows(ttrace) == _rows(htrace)
    assert any(e.kind == "tensor" and e.registered_during_trace for e in ttrace.events)


@pytest.mark.oracle
def test_torch_hooks_registered_inside_hooks_during_backward(torch):
    """A tensor hook registered by another hook while backward runs is traced on both."""

    def run(lib):
        x = lib.ones(2, requires_grad=True)
        with HookTrace() as trace:
            h = x * 2
            out = h * 3

            def register_on_x(g):
                x.register_hook(lambda gx: gx + 1)

            out.register_hook(register_on_x)
            out.sum().backward()
        return [(e.kind, e.target, e.replaced) for e in trace.events], x.grad.tolist()

    assert run(torch) == run(hookgrad)
    assert run(hookgrad)[0][-1] == ("tensor", "tensor[2]", True)


@pytest.mark.oracle
def test_post_accumulate_and_optimizer_rows(torch):
    def run(lib, model):
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        with HookTrace(model, opt) as trace:
            model[2].bias.register_post_accumulate_grad_hook(lambda p: None)
            opt.register_step_post_hook(lambda o, a, k: None)
            model(lib.ones(1, 4)).sum().backward()
            opt.step()
        return [(e.kind, e.target, e.args.split(" |")[0]) for e in trace.events]

    tm, hm = pair(torch, _model)
    rows = run(hookgrad, hm)
    assert rows == run(torch, tm)
    assert rows == [("post_accumulate", "2.bias", "grad=f32[3]"),
                    ("optimizer.step_post", "SGD", "(SGD,), {}")]  # step's args hold self


def test_hook_that_raises_is_recorded():
    x = hookgrad.ones(2, requires_grad=True)

    def bad(g):
        raise ValueError("no")

    with HookTrace() as trace:
        y = x * 2
        y.register_hook(bad)
        with pytest.raises(ValueError):
            y.sum().backward()
    assert trace.events[0].result == "raised ValueError: no"


def test_describe_values():
    t = hookgrad.tensor([[3.0, 4.0]])
    assert describe(t) == "f32[1, 2] |5|"
    assert describe((None, t)) == "(None, f32[1, 2] |5|)"
    assert describe(hookgrad.tensor([1, 2])) == "i64[2]"
    assert describe([1] * 9).endswith("... 3 more]")
    assert describe({"a": None}) == "{a: None}"
    assert describe(object()) == "object"


def test_no_trace_no_observers():
    """Tracing costs nothing once closed: observers, global hooks and swaps are all gone."""
    from hookgrad.autograd import _api
    from hookgrad.nn.modules import module as mm

    backward = _api.backward
    with HookTrace(hookgrad.nn.Linear(2, 2)):
        assert len(_api._OBSERVERS) == 1  # a backward observer, nothing patched
        assert len(mm._global_forward_pre_hooks) == 1
    assert _api._OBSERVERS == []
    assert _api.backward is backward and hookgrad.autograd.grad.__module__.endswith("_api")
    assert not mm._global_forward_pre_hooks and not mm._global_forward_hooks
    assert hookgrad.utils.hooks._REGISTRATION_OBSERVERS == []


def test_compiled_extension_point(tmp_path):
    """What hookgrad.compile will call: notes reach open traces and the report, else nothing."""
    from hookgrad.hooktools import note_compiled_hook
    from hookgrad.hooktools.trace_report import write_trace_report

    def hook(g):
        return None

    note_compiled_hook("tensor", hook, "f", "inlined", "no trace open: dropped")
    with HookTrace() as trace:
        note_compiled_hook("tensor", hook, "step", "graph_break", "hook calls print()")
    note_compiled_hook("tensor", hook, "f", "inlined", "closed: dropped")
    assert [(n.hook, n.placement, n.reason) for n in trace.compiled] == [
        ("hook", "graph_break", "hook calls print()")]
    with pytest.raises(ValueError, match="placement"):
        note_compiled_hook("tensor", hook, "f", "somewhere", "")
    write_trace_report(trace, str(tmp_path))
    assert "Hooks in compiled regions" in (tmp_path / "index.html").read_text()


@pytest.mark.oracle
def test_module_hooks_registered_during_trace_on_torch(torch):
    """PyTorch has no registration observer: module hooks added between calls are wrapped at
    the next top-level call, and hooks added after the last call are still listed as silent."""

    def run(lib):
        model = _model(lib)
        with HookTrace(model) as trace:
            model(lib.ones(1, 4))
            model[2].register_forward_pre_hook(lambda m, a: None)
            model[0].register_forward_hook(lambda m, a, o: None)
            model(lib.ones(1, 4))
            model[1].register_forward_hook(lambda m, a, o: None)
        rows = [(e.kind, e.target, e.registered_during_trace) for e in trace.events]
        return rows, [(s.kind, s.owner, s.reason) for s in trace.silent()]

    rows, silent = run(torch)
    assert (rows, silent) == run(hookgrad)
    assert rows == [("module.forward", "0", True), ("module.forward_pre", "2", True)]
    assert silent == [("module.forward", "1", "registered_after_forward")]


@pytest.mark.oracle
def test_hooks_added_after_a_failed_forward_are_traced(torch):
    """A forward that raised must not leave the trace thinking a call is still running."""

    def run(lib):
        lin = lib.nn.Linear(3, 2)
        with HookTrace(lin) as trace:
            with pytest.raises(RuntimeError):
                lin(lib.ones(1, 5))
            lin.register_forward_hook(lambda m, a, o: None)
            lin(lib.ones(1, 3))
        return [(e.kind, e.target) for e in trace.events]

    assert run(torch) == run(hookgrad) == [("module.forward", "Linear")]
