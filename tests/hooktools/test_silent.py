"""Why didn't my hook fire: every reason, produced by a scenario, on hookgrad and on PyTorch.

On torch the scenario's own log proves the hook really stayed silent (hookgrad's log must equal
it), and the trace of the torch run must give the same reason as the trace of the hookgrad run.
"""

from __future__ import annotations

import pytest

import hookgrad
from hookgrad.hooktools import REASONS, HookTrace
from tests.hooktools import _silent_scenarios as sc

SCENARIOS = list(sc.EXPECTED)


def _reasons(trace):
    return {s.hook: s.reason for s in trace.silent()}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_reason_on_hookgrad(scenario):
    log = []
    trace = scenario(hookgrad, log)
    reasons = _reasons(trace)
    for hook, reason in sc.EXPECTED[scenario].items():
        assert hook not in log
        assert reasons.get(hook) == reason, (hook, reasons)
    for s in trace.silent():
        assert s.reason in REASONS and s.detail.startswith(REASONS[s.reason])


@pytest.mark.oracle
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_reason_matches_torch(torch, scenario):
    tlog, hlog = [], []
    ttrace = scenario(torch, tlog)
    scenario(hookgrad, hlog)
    assert hlog == tlog  # the silent hooks are silent in PyTorch too
    if scenario in sc.HOOKGRAD_ONLY:
        return
    reasons = _reasons(ttrace)
    for hook, reason in sc.EXPECTED[scenario].items():
        assert reasons.get(hook) == reason, (hook, reasons)


def test_fired_hooks_are_not_silent():
    model = hookgrad.nn.Linear(3, 2)
    model.register_forward_hook(lambda m, a, o: None)
    with HookTrace(model) as trace:
        model(hookgrad.ones(1, 3)).sum().backward()
    assert trace.silent() == []


def test_silent_row_fields():
    log = []
    trace = sc.module_not_called(hookgrad, log)
    row = next(s for s in trace.silent() if s.hook == "spare.fwd")
    assert (row.kind, row.owner) == ("module.forward", "Linear")
    assert row.registered_at.endswith("(definition)")
    assert "did not run" in row.detail
