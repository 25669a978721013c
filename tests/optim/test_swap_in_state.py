"""``optim.swap_in_optimizer_params_and_state`` against PyTorch: a step inside the block moves
the swapped-in parameters and state (in place), the live optimizer is restored, and the
argument checks raise PyTorch's errors."""

from __future__ import annotations

import copy

import numpy as np

import hookgrad
from tests._errors import err
from tests.nn._compare import to_lib


def _setup(lib):
    w = to_lib(lib, np.arange(6.0).reshape(2, 3), True)
    b = to_lib(lib, np.ones(2), True)
    opt = lib.optim.Adam([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
    w.grad, b.grad = lib.ones_like(w), lib.ones_like(b)
    opt.step()
    return w, b, opt


def test_step_on_swapped_in_values(torch):
    out = []
    for lib in (torch, hookgrad):
        w, b, opt = _setup(lib)
        live = (w.detach().clone(), b.detach().clone(), copy.deepcopy(opt.state_dict()))
        params = {"w": w.detach().clone() * 2, "b": b.detach().clone()}
        for p in params.values():
            p.grad = lib.full_like(p, 0.5)
        osd = copy.deepcopy(opt.state_dict())
        osd["param_groups"][1]["lr"] = 0.01
        with lib.optim.swap_in_optimizer_params_and_state(opt, params, osd):
            assert opt.param_groups[1]["lr"] == 0.01
            opt.step()
        assert opt.param_groups[1]["lr"] == 0.5
        assert lib.equal(w, live[0]) and lib.equal(b, live[1])
        assert opt.state[w]["exp_avg"].equal(live[2]["state"][0]["exp_avg"])
        out.append([params["w"].numpy(), params["b"].numpy(),
                    osd["state"][0]["exp_avg"].numpy(), osd["state"][1]["step"].numpy()])
    for a, h in zip(*out):
        np.testing.assert_allclose(h, a, rtol=1e-12)


def _calls(lib):
    w, b, opt = _setup(lib)
    fresh = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
    good = copy.deepcopy(opt.state_dict())
    params = {"w": w, "b": b}

    def enter(o, p, s):
        return lambda: lib.optim.swap_in_optimizer_params_and_state(o, p, s).__enter__()

    extra = copy.deepcopy(good)
    extra["state"][7] = {}
    keys = copy.deepcopy(good)
    keys["param_groups"][0]["new"] = 1
    return [
        enter(fresh, {}, {"state": {}, "param_groups": []}),
        enter(opt, params, []),
        enter(opt, params, {"state": [], "param_groups": good["param_groups"]}),
        enter(opt, params, {"state": good["state"], "param_groups": {}}),
        enter(opt, params, {"state": good["state"], "param_groups": good["param_groups"][:1]}),
        enter(opt, params, extra),
        enter(opt, params, keys),
        enter(opt, {"w": w}, good),
    ]


def test_errors_match_torch(torch):
    for h, t in zip(_calls(hookgrad), _calls(torch)):
        assert err(h) == err(t)
