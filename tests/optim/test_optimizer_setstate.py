"""``Optimizer.__setstate__``: groups from older checkpoints get each optimizer's defaults and
numeric steps become tensors, as in PyTorch."""

from __future__ import annotations

import pytest

import hookgrad

NAMES = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"]


def _restored(lib, name: str) -> tuple:
    p = lib.nn.Parameter(lib.ones(2))
    opt = getattr(lib.optim, name)([p], lr=0.1)
    p.grad = lib.ones(2)
    opt.step()
    state = dict(opt.__dict__)
    state["param_groups"] = [{"params": g["params"], "lr": g["lr"]} for g in opt.param_groups]
    for s in opt.state.values():
        if "step" in s:
            s["step"] = float(s["step"])
        if "mu_product" in s:
            s["mu_product"] = float(s["mu_product"])
    fresh = object.__new__(type(opt))
    fresh.__setstate__(state)
    group = fresh.param_groups[0]
    steps = [type(s.get("step")).__name__ for s in fresh.state.values()]
    return sorted(k for k in group if k != "params"), steps


@pytest.mark.oracle
@pytest.mark.parametrize("name", NAMES)
def test_setstate_fills_group_defaults_like_pytorch(torch, name):
    mine_keys, mine_steps = _restored(hookgrad, name)
    theirs_keys, theirs_steps = _restored(torch, name)
    assert mine_keys == theirs_keys
    assert [s.replace("NoneType", "-") for s in mine_steps] == \
        [s.replace("NoneType", "-") for s in theirs_steps]
