"""``hookgrad.hooktools.TrainingMonitor`` on hookgrad models and, unchanged, on torch models."""

from __future__ import annotations

import math

import numpy as np
import pytest

import hookgrad
from hookgrad.hooktools import TrainingMonitor
from tests.hooktools._models import batch, close, cnn, mlp, pair


def _train(lib, model, x, y, steps=2, lr=0.1):
    opt = lib.optim.SGD(model.parameters(), lr=lr)
    with TrainingMonitor(model) as mon:
        for _ in range(steps):
            loss = lib.nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y))
            opt.zero_grad()
            loss.backward()
            opt.step()
            mon.end_step()
    return mon


def _assert_same_history(h, t):
    assert len(h) == len(t)
    for hs, ts in zip(h, t, strict=True):
        assert hs.keys() == ts.keys()
        for layer in hs:
            assert hs[layer].keys() == ts[layer].keys(), layer
            for key in hs[layer]:
                assert close(hs[layer][key], ts[layer][key], 1e-4), (layer, key)


@pytest.mark.oracle
@pytest.mark.parametrize(("build", "shape"), [(mlp, (6, 4)), (cnn, (4, 1, 6, 6))],
                         ids=["mlp", "cnn"])
def test_monitor_statistics_match_torch(torch, build, shape):
    tm, hm = pair(torch, build)
    x, y = batch(shape)
    t = _train(torch, tm, x, y)
    h = _train(hookgrad, hm, x, y)
    _assert_same_history(h.history, t.history)
    assert h.layers() == t.layers() and h.nonfinite is t.nonfinite is None
    assert h.step == 2


def test_monitor_grad_norm_is_norm_of_layer_grads():
    model = mlp(hookgrad)
    x, y = batch((5, 4))
    with TrainingMonitor(model) as mon:
        hookgrad.nn.functional.cross_entropy(model(hookgrad.tensor(x)),
                                             hookgrad.tensor(y)).backward()
        summary = mon.end_step()
    for name in ("0", "2", "4"):
        layer = model.get_submodule(name)
        expected = math.sqrt(sum(float((p.grad.double() ** 2).sum()) for p in layer.parameters()))
        assert summary[name]["grad_norm"] == pytest.approx(expected, rel=1e-9)
    assert "grad_norm" not in summary["1"]  # ReLU has no parameters
    assert set(summary["1"]) == {"act_mean", "act_std", "dead_frac"}
    assert "dead_frac" not in summary["3"]  # only ReLU-like layers
    assert mon.series("0", "grad_norm") == [summary["0"]["grad_norm"]]


def test_monitor_dead_relu_fraction_counts_units_dead_for_whole_batch():
    relu = hookgrad.nn.ReLU()
    model = hookgrad.nn.Sequential(relu)
    x = hookgrad.tensor([[1.0, -1.0, -2.0, 0.0], [-1.0, -1.0, 3.0, 0.0]])
    with TrainingMonitor(model) as mon:
        model(x)
        summary = mon.end_step()
    assert summary["0"]["dead_frac"] == 0.5  # units 1 and 3 never fire


def test_monitor_frozen_parameters_are_not_hooked():
    model = mlp(hookgrad)
    model[0].requires_grad_(False)
    x, y = batch((3, 4))
    with TrainingMonitor(model) as mon:
        assert len(model[0].weight._post_accumulate_grad_hooks or {}) == 0
        hookgrad.nn.functional.cross_entropy(model(hookgrad.tensor(x)),
                                             hookgrad.tensor(y)).backward()
        summary = mon.end_step()
    assert "grad_norm" not in summary["0"] and summary["2"]["grad_norm"] > 0


def test_monitor_close_removes_every_hook():
    model = mlp(hookgrad)
    mon = TrainingMonitor(model)
    assert all(len(m._forward_hooks) == 1 for m in model)
    mon.close()
    mon.close()  # idempotent
    assert all(len(m._forward_hooks) == 0 for m in model)
    assert all(not p._post_accumulate_grad_hooks for p in model.parameters())
    model(hookgrad.ones(1, 4)).sum().backward()
    assert mon.history == [] and mon._current == {}


def test_monitor_series_is_nan_for_missing_steps():
    model = mlp(hookgrad)
    with TrainingMonitor(model) as mon:
        mon.end_step()  # nothing ran
        model(hookgrad.ones(1, 4))
        mon.end_step()
    values = mon.series("0", "act_mean")
    assert math.isnan(values[0]) and not math.isnan(values[1])


def _nan_forward(lib, model):
    x = np.ones((2, 4), dtype=np.float32)
    x[0, 1] = np.nan
    with TrainingMonitor(model) as mon:
        model(lib.tensor(x))
        mon.end_step()
        model(lib.tensor(x))
    return mon.nonfinite


class _SqrtAbs:
    """A leaf module whose forward is finite but whose gradient is infinite at zero."""

    @staticmethod
    def build(lib):
        class SqrtAbs(lib.nn.Module):
            def forward(self, x):
                return x.abs().sqrt()

        lin = lib.nn.Linear(2, 2)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor([[1.0, -1.0], [0.5, 0.5]]))
            lin.bias.zero_()
        return lib.nn.Sequential(lin, SqrtAbs(), lib.nn.Linear(2, 1))


def _inf_backward(lib):
    model = _SqrtAbs.build(lib)
    with TrainingMonitor(model) as mon:
        model(lib.tensor([[1.0, 1.0]])).sum().backward()  # lin output [0, 1]: d sqrt at 0 = inf
    return mon.nonfinite


@pytest.mark.oracle
def test_monitor_first_nonfinite_location_matches_torch(torch):
    tm, hm = pair(torch, mlp)
    assert _nan_forward(hookgrad, hm) == _nan_forward(torch, tm) == {
        "module": "0", "phase": "forward", "step": 0}
    assert _inf_backward(hookgrad) == _inf_backward(torch) == {
        "module": "0", "phase": "backward", "step": 0}


def test_monitor_nonfinite_gradient_of_parameter_reported_as_grad():
    lin = hookgrad.nn.Linear(1, 1)
    model = hookgrad.nn.Sequential(lin)
    with TrainingMonitor(model) as mon:
        out = model(hookgrad.ones(1, 1))
        out.register_hook(lambda g: g * float("inf"))  # registered after the monitor's hook
        out.sum().backward()
    assert mon.nonfinite == {"module": "0", "phase": "grad", "step": 0}


def test_monitor_ignores_integer_outputs():
    class ArgMax(hookgrad.nn.Module):
        def forward(self, x):
            return x.argmax(1)

    model = hookgrad.nn.Sequential(ArgMax())
    with TrainingMonitor(model) as mon:
        model(hookgrad.ones(2, 3))
        assert mon.end_step() == {}


def _accumulated(lib, model, x, y):
    with TrainingMonitor(model) as mon:
        for part in (slice(0, 3), slice(3, 6)):  # two micro-batches, one optimiser step
            loss = lib.nn.functional.cross_entropy(model(lib.tensor(x[part])),
                                                   lib.tensor(y[part]))
            loss.backward()
        summary = mon.end_step()
    final = {name: math.sqrt(sum(float((p.grad.double() ** 2).sum())
                                 for p in model.get_submodule(name).parameters()))
             for name in ("0", "2", "4")}
    return {name: summary[name]["grad_norm"] for name in final}, final


@pytest.mark.oracle
def test_monitor_grad_norm_with_gradient_accumulation_is_final_grad_norm(torch):
    tm, hm = pair(torch, mlp)
    x, y = batch((6, 4))
    h_norms, h_final = _accumulated(hookgrad, hm, x, y)
    t_norms, t_final = _accumulated(torch, tm, x, y)
    for name in h_norms:
        assert h_norms[name] == pytest.approx(h_final[name], rel=1e-9)
        assert h_norms[name] == pytest.approx(t_norms[name], rel=1e-4)
