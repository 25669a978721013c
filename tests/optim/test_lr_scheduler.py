"""Learning-rate schedulers against the oracle: identical lr sequences over 40 steps."""

from __future__ import annotations

import math

import pytest

import hookgrad

SCHEDULERS = [
    ("StepLR", {"step_size": 7, "gamma": 0.5}, "SGD"),
    ("MultiStepLR", {"milestones": [3, 9, 9, 20], "gamma": 0.3}, "SGD"),
    ("ExponentialLR", {"gamma": 0.9}, "SGD"),
    ("CosineAnnealingLR", {"T_max": 12, "eta_min": 0.001}, "SGD"),
    ("LambdaLR", {"lr_lambda": lambda epoch: 0.95**epoch + (epoch % 3)}, "SGD"),
    ("OneCycleLR", {"max_lr": 0.8, "total_steps": 41}, "SGD"),
    ("OneCycleLR", {"max_lr": [0.8, 0.4], "epochs": 5, "steps_per_epoch": 9,
                    "anneal_strategy": "linear", "three_phase": True}, "Adam"),
]
METRICS = [1.0, 0.9, 0.95, 0.96, 0.97, 0.8, 0.81, 0.82, 0.83, 0.84, 0.85, 0.86, 0.7] * 4


def _optimizer(lib, opt_name):
    a = lib.ones(2, requires_grad=True)
    b = lib.ones(1, requires_grad=True)
    kwargs = {"momentum": 0.9} if opt_name == "SGD" else {}
    return getattr(lib.optim, opt_name)([{"params": [a]}, {"params": [b], "lr": 0.05}], lr=0.1,
                                        **kwargs)


def _trace(lib, name, kwargs, opt_name, steps=40):
    opt = _optimizer(lib, opt_name)
    sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
    seen = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        seen.append(sched.get_last_lr())
        seen.append([(g["lr"], g.get("momentum"), g.get("betas")) for g in opt.param_groups])
    state = sched.state_dict()
    state.pop("lr_lambdas", None)
    return seen, state


def _id(case):
    return case[0] + "-" + "-".join(sorted(case[1]))


@pytest.mark.oracle
@pytest.mark.parametrize("case", SCHEDULERS, ids=_id)
def test_scheduler_lr_sequence_matches_torch(torch, case):
    mine, theirs = _trace(hookgrad, *case), _trace(torch, *case)
    assert mine[0] == theirs[0]  # exactly the same floats, not approximately
    assert mine[1] == theirs[1]


@pytest.mark.oracle
@pytest.mark.parametrize(
    "kwargs",
    [{"patience": 2, "factor": 0.5}, {"mode": "max", "threshold_mode": "abs", "cooldown": 2,
                                      "patience": 1, "min_lr": [0.02, 0.01]}],
)
def test_reduce_lr_on_plateau_matches_torch(torch, kwargs):
    def trace(lib):
        opt = _optimizer(lib, "SGD")
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        out = []
        for metric in METRICS:
            opt.step()
            sched.step(metric)
            out.append((sched.get_last_lr(), sched.num_bad_epochs, sched.best))
        return out, sched.state_dict()

    assert trace(hookgrad) == trace(torch)


def _run(opt, sched, steps):
    out = []
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(sched.get_last_lr())
    return out


@pytest.mark.parametrize("case", SCHEDULERS[:4] + SCHEDULERS[5:6], ids=_id)
def test_state_dict_round_trip_resumes_the_same_sequence(case):
    name, kwargs, opt_name = case
    make = getattr(hookgrad.optim.lr_scheduler, name)
    opt = _optimizer(hookgrad, opt_name)
    full = _run(opt, make(opt, **kwargs), 30)
    opt = _optimizer(hookgrad, opt_name)
    sched = make(opt, **kwargs)
    _run(opt, sched, 12)
    opt2 = _optimizer(hookgrad, opt_name)
    sched2 = make(opt2, **kwargs)
    opt2.load_state_dict(opt.state_dict())
    sched2.load_state_dict(sched.state_dict())
    assert _run(opt2, sched2, 18) == full[12:]


def test_step_before_optimizer_step_warns_like_torch():
    opt = _optimizer(hookgrad, "SGD")
    sched = hookgrad.optim.lr_scheduler.StepLR(opt, 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()


def test_get_lr_outside_step_warns_and_closed_form_epoch_warns():
    opt = _optimizer(hookgrad, "SGD")
    sched = hookgrad.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()
    opt.step()
    with pytest.warns(UserWarning, match="epoch parameter"):
        sched.step(5)
    expected = 0.1 * (1 + math.cos(math.pi * 5 / 10)) / 2
    assert sched.get_last_lr()[0] == pytest.approx(expected)


def test_scheduler_rejects_non_optimizers_and_missing_initial_lr():
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        hookgrad.optim.lr_scheduler.StepLR([], 1)
    with pytest.raises(KeyError, match="initial_lr"):
        hookgrad.optim.lr_scheduler.StepLR(_optimizer(hookgrad, "SGD"), 1, last_epoch=3)


def test_one_cycle_raises_past_total_steps():
    opt = _optimizer(hookgrad, "SGD")
    sched = hookgrad.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=2)
    opt.step()
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        sched.step()
