"""Why didn't my hook fire? The reasons a traced hook stayed silent.

After a traced step, every hook the trace wrapped that never fired gets one reason, found from
what the trace saw: module calls (with grad mode and whether inputs/outputs required grad),
optimizer steps, and for each backward pass the nodes it could reach from its roots (and, with
``inputs=`` or ``autograd.grad``, the nodes on a path to the inputs). The reason codes:

==========================  ===============================================================
``handle_removed``          its handle was removed before it fired
``module_not_called``       the module (or a parameter's module) never ran
``registered_after_forward``  registered after the module's last call
``forward_raised``          the module's forward raised (forward hooks are skipped)
``grad_mode_off``           the module ran with grad mode off: nothing to backward through
``no_grad_inputs``          neither the module's inputs nor its parameters require grad
``outputs_not_used``        the module's outputs were on no path from a backward root
``no_backward``             no backward pass ran after the hook was registered
``not_on_path``             its tensor/node was on no path from the backward roots
``excluded_by_inputs``      on a path from the roots, but not to ``inputs=``
``no_accumulate``           ``autograd.grad`` does not accumulate: post-accumulate hooks idle
``stopped_at_input``        ``autograd.grad`` stops at its inputs: the input's node never runs
``registered_after_node``   registered during backward after its node had run
``graph_freed``             backward raised: the graph had been freed by an earlier backward
``backward_raised``         backward raised before reaching it
``requires_grad_off``       its tensor no longer requires grad
``optimizer_not_stepped``   ``step()`` was not called / ``registered_after_step`` / ``step_raised``
``not_called``              the operation it hooks (``state_dict()``...) was not called
``unknown``                 none of the above explains it
==========================  ===============================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hookgrad.hooktools._records import ENGINE_KINDS, HookEntry

__all__ = ["SilentHook", "explain", "REASONS"]

REASONS = {
    "handle_removed": "its handle was removed before it fired",
    "module_not_called": "the module's forward did not run while the trace was open (calling "
                         ".forward() directly also skips hooks)",
    "registered_after_forward": "registered after the module's last forward call",
    "forward_raised": "the module's forward raised, so its forward hooks (unless "
                      "always_call=True) were skipped",
    "grad_mode_off": "grad mode was off when the module ran: its outputs do not require grad, "
                     "so no backward pass reaches it",
    "no_grad_inputs": "neither the module's inputs nor its parameters require grad: its outputs "
                      "do not require grad, so no backward pass reaches it",
    "outputs_not_used": "the module's outputs were not on a path from the outputs of any "
                        "backward pass",
    "no_backward": "no backward pass ran after it was registered",
    "not_on_path": "its tensor was not on a path from the outputs of backward()",
    "excluded_by_inputs": "it is on a path from the outputs, but not to the inputs= of "
                          "backward()/autograd.grad(), so the engine skipped it",
    "no_accumulate": "autograd.grad() does not accumulate into .grad: post-accumulate-grad "
                     "hooks only fire in backward()",
    "stopped_at_input": "autograd.grad() stops at its inputs: this input's node never runs",
    "registered_after_node": "registered during backward after its node had already run "
                             "(hooks added then wait for the next pass)",
    "graph_freed": "backward raised because the graph had already been freed by an earlier "
                   "backward (pass retain_graph=True to the first one)",
    "backward_raised": "the backward pass raised before reaching it",
    "requires_grad_off": "its tensor no longer requires grad (requires_grad_(False) after the "
                         "hook was registered)",
    "optimizer_not_stepped": "optimizer.step() was not called while the trace was open",
    "registered_after_step": "registered after the optimizer's last step()",
    "step_raised": "optimizer.step() raised, so the post-step hooks were skipped",
    "not_called": "the operation it hooks was not called while the trace was open",
    "no_module_ran": "no module ran while the trace was open",
    "unknown": "no recorded fact explains it",
}


@dataclass(frozen=True)
class SilentHook:
    """A traced hook that did not fire: what it is, where it was registered, and why.

    Mirrors: no PyTorch counterpart (a row of `HookTrace.silent`).
    """

    kind: str
    owner: str
    hook: str
    registered_at: str
    reason: str  #: a key of `REASONS`
    detail: str  #: the reason in words (with the backward error when one explains it)


def _engine_reason(trace: Any, e: HookEntry) -> tuple[str, str]:
    obj = e.obj
    if e.kind in ("tensor", "post_accumulate") and obj is not None and \
            not getattr(obj, "requires_grad", True):
        return "requires_grad_off", ""
    module = trace.modules.get(trace._param_module.get(id(obj), -1))
    if module is not None and module.started and not module.grad_on:
        return "grad_mode_off", "for its parameter's module"
    statuses = {s for _, s in e.statuses}
    if not statuses:
        return "no_backward", ""
    if "registered_during" in statuses and "reached" not in statuses:
        return "registered_after_node", ""
    for idx, s in e.statuses:
        if s in ("reached", "registered_during") and trace.runs[idx].error:
            err = trace.runs[idx].error
            code = "graph_freed" if "second time" in err or "freed" in err else "backward_raised"
            return code, err
    for code in ("no_accumulate", "stopped_at_input"):
        if code in statuses:
            return code, ""
    if "excluded" in statuses:
        return "excluded_by_inputs", ""
    if "reached" in statuses:
        return "unknown", "its node was reached by a backward pass but the hook did not run"
    if obj is not None and id(obj) in trace._param_module and (module is None or
                                                                not module.started):
        return "module_not_called", "for its parameter's module"
    return "not_on_path", ""


def _module_reason(trace: Any, e: HookEntry) -> tuple[str, str]:
    rec = trace.modules.get(id(e.obj)) if e.obj is not None else None
    if "state_dict" in e.kind:
        return "not_called", f"{e.kind.split('.', 1)[1].replace('_pre', '').replace('_post', '')}"
    if rec is None or not rec.started:
        return "module_not_called", ""
    if e.reg_seq > rec.last_seq:
        return "registered_after_forward", ""
    if e.kind == "module.forward" and not rec.finished:
        return "forward_raised", ""
    if e.kind in ("module.forward", "module.forward_pre"):
        return "unknown", ""
    if not rec.grad_on:
        return "grad_mode_off", ""
    if not rec.outputs_grad:
        return "no_grad_inputs", ""
    runs = [r for r in trace.runs if r.start_seq > rec.last_seq]
    if not runs:
        return "no_backward", "after the module's last call"
    if not rec.reached:
        return "outputs_not_used", ""
    failed = [r.error for r in runs if r.error]
    if failed:
        return ("graph_freed" if "second time" in failed[0] else "backward_raised"), failed[0]
    return "unknown", ""


def _optimizer_reason(trace: Any, e: HookEntry) -> tuple[str, str]:
    if "state_dict" in e.kind:
        return "not_called", e.kind.split(".", 1)[1]
    counts = trace.steps.get(id(e.obj)) if e.obj is not None else None
    if not counts or not counts[0]:
        return "optimizer_not_stepped", ""
    if e.reg_seq > counts[2]:
        return "registered_after_step", ""
    if e.kind.endswith("post") and not counts[1]:
        return "step_raised", ""
    return "unknown", ""


def _global_reason(trace: Any, e: HookEntry) -> tuple[str, str]:
    if e.kind.startswith("global.optimizer"):
        return ("optimizer_not_stepped", "") if not trace.steps else ("unknown", "")
    if not trace.modules:
        return "no_module_ran", ""
    if "backward" in e.kind:
        if not any(r.start_seq > e.reg_seq for r in trace.runs):
            return "no_backward", ""
        if not any(m.reached for m in trace.modules.values()):
            return "outputs_not_used", "for every module that ran"
    return "unknown", ""


def _reason(trace: Any, e: HookEntry) -> tuple[str, str]:
    if e.is_removed():
        return "handle_removed", ""
    if e.kind in ENGINE_KINDS:
        return _engine_reason(trace, e)
    if e.kind.startswith("module."):
        return _module_reason(trace, e)
    if e.kind.startswith("optimizer."):
        return _optimizer_reason(trace, e)
    if e.kind.startswith("global."):
        return _global_reason(trace, e)
    return "unknown", ""


def explain(trace: Any) -> list[SilentHook]:
    """Every hook `trace` wrapped that never fired, each with its reason, in wrapping order.

    Mirrors: no PyTorch counterpart (hookgrad tool).
    """
    out = []
    for e in trace.entries:
        if e.fired:
            continue
        code, extra = _reason(trace, e)
        detail = REASONS[code] + (f" ({extra})" if extra else "")
        out.append(SilentHook(e.kind, trace._label(e), e.hook, e.site, code, detail))
    return out
