"""`Optimizer` base: param groups, state, zero_grad, state_dict / load_state_dict, repr."""

from __future__ import annotations

import copy
import importlib
import warnings

import numpy as np
import pytest

import hookgrad
from tests.optim._oracle import same_as_torch


def _optimizer_module(lib):
    return importlib.import_module(lib.__name__ + ".optim.optimizer")


def _p(lib, n=2, value=1.0, dtype=None):
    return lib.full((n,), value, dtype=dtype or lib.float32).requires_grad_()


def _groups_scenario(lib, log):
    a, b, c = _p(lib), _p(lib, 3), _p(lib, 1)
    opt = lib.optim.SGD([{"params": [a]}, {"params": (x for x in [b]), "lr": 0.5}], lr=0.1,
                        momentum=0.9)
    opt.add_param_group({"params": c, "weight_decay": 0.2})
    log.append([sorted(g) for g in opt.param_groups])
    log.append([(g["lr"], g["momentum"], g["weight_decay"]) for g in opt.param_groups])
    log.append([len(g["params"]) for g in opt.param_groups])
    named = lib.optim.Adam([("w", a), ("v", b)])
    log.append(named.param_groups[0]["param_names"])
    return repr(opt)


@pytest.mark.oracle
def test_param_groups_fill_defaults_like_torch(torch):
    same_as_torch(_groups_scenario, torch)


@pytest.mark.oracle
@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.optim.SGD([], lr=0.1),
        lambda lib: lib.optim.SGD(_p(lib), lr=0.1),
        lambda lib: lib.optim.SGD([{"params": {_p(lib)}}], lr=0.1),
        lambda lib: lib.optim.SGD([_p(lib), 3], lr=0.1),
        lambda lib: lib.optim.SGD([_p(lib) * 2], lr=0.1),
        lambda lib: lib.optim.SGD([{"params": [_p(lib)]}, 5], lr=0.1),
        lambda lib: lib.optim.SGD([("a", _p(lib)), _p(lib)], lr=0.1),
        lambda lib: (lambda p: lib.optim.SGD([{"params": [p]}, {"params": [p]}]))(_p(lib)),
        lambda lib: lib.optim.Optimizer([_p(lib)], {"lr": _optimizer_module(lib).required}),
    ],
    ids=["empty", "tensor", "set", "non-tensor", "non-leaf", "non-dict-group", "some-names",
         "two-groups", "required"],
)
def test_invalid_params_raise_like_torch(torch, make):
    _, result = same_as_torch(lambda lib, log: make(lib), torch)
    assert result[0] == "E"


@pytest.mark.oracle
def test_duplicate_parameters_in_a_group_warn_like_torch(torch):
    messages = []
    for lib in (hookgrad, torch):
        p = _p(lib)
        with pytest.warns(UserWarning) as rec:
            lib.optim.SGD([p, p], lr=0.1)
        messages.append([str(w.message) for w in rec])
    assert messages[0] == messages[1]


def _state_dict_scenario(lib, log):
    a, b, c = _p(lib), _p(lib, 3), _p(lib, 1)
    opt = lib.optim.Adam([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1)
    for p in (a, c):
        p.grad = lib.ones_like(p)
    opt.step()
    sd = opt.state_dict()
    log.append(sorted(sd["state"]))
    log.append(sd["param_groups"])
    log.append(sd["state"][0]["exp_avg"] is opt.state[a]["exp_avg"])  # shared, not copied
    return {k: {kk: vv for kk, vv in v.items()} for k, v in sd["state"].items()}


@pytest.mark.oracle
def test_state_dict_packs_params_as_ids_like_torch(torch):
    same_as_torch(_state_dict_scenario, torch)


def _load_scenario(lib, log):
    src = [_p(lib, 2, 1.0, lib.float64), _p(lib, 1, 2.0, lib.float64)]
    opt = lib.optim.Adam(src, lr=0.1, amsgrad=True)
    for p in src:
        p.grad = lib.ones_like(p)
    opt.step()
    sd = copy.deepcopy(opt.state_dict())
    sd["param_groups"][0]["lr"] = 0.25
    dst = [_p(lib, 2), _p(lib, 1)]
    opt2 = lib.optim.Adam(dst, lr=0.1, amsgrad=True)
    opt2.load_state_dict(sd)
    log.append([(k, str(v.dtype)) for k, v in opt2.state[dst[0]].items()])
    log.append(opt2.param_groups[0]["lr"])
    log.append(opt2.param_groups[0]["params"][0] is dst[0])
    for p in dst:
        p.grad = lib.ones_like(p)
    opt2.step()
    return [p.detach() for p in dst]


@pytest.mark.oracle
def test_load_state_dict_casts_state_to_param_dtype_like_torch(torch):
    log, _ = same_as_torch(_load_scenario, torch)
    assert log[0][0] == ("step", "torch.float32")


@pytest.mark.oracle
@pytest.mark.parametrize(
    "edit",
    [
        lambda sd: sd["param_groups"].append(dict(sd["param_groups"][0])),
        lambda sd: sd["param_groups"][0]["params"].append(99),
        lambda sd: sd.pop("param_groups"),
    ],
    ids=["group-count", "group-size", "missing-key"],
)
def test_load_state_dict_validation_errors_like_torch(torch, edit):
    def scenario(lib, log):
        opt = lib.optim.SGD([_p(lib)], lr=0.1)
        sd = copy.deepcopy(opt.state_dict())
        edit(sd)
        opt.load_state_dict(sd)

    _, result = same_as_torch(scenario, torch)
    assert result[0] == "E"


def _zero_grad_scenario(lib, log):
    a, b = _p(lib), _p(lib)
    opt = lib.optim.SGD([a, b], lr=0.1)
    a.grad = lib.full((2,), 3.0)
    g = a.grad
    opt.zero_grad(set_to_none=False)
    log.append((a.grad is g, a.grad.tolist(), b.grad))
    opt.zero_grad()
    log.append(a.grad)


@pytest.mark.oracle
def test_zero_grad_like_torch(torch):
    same_as_torch(_zero_grad_scenario, torch)


def test_state_is_a_defaultdict_keyed_by_parameter():
    p = _p(hookgrad)
    opt = hookgrad.optim.SGD([p], lr=0.1, momentum=0.5)
    assert opt.state[p] == {}
    p.grad = hookgrad.ones(2)
    opt.step()
    assert list(opt.state) == [p]
    assert isinstance(opt.state[p]["momentum_buffer"], hookgrad.Tensor)


def test_optimizer_state_survives_deepcopy():
    p = _p(hookgrad)
    opt = hookgrad.optim.Adam([p], lr=0.1)
    p.grad = hookgrad.ones(2)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clone = copy.deepcopy(opt)
    assert clone.param_groups[0]["lr"] == 0.1
    assert clone._optimizer_step_pre_hooks == {}
    (state,) = clone.state.values()
    np.testing.assert_array_equal(state["exp_avg"].numpy(), opt.state[p]["exp_avg"].numpy())
