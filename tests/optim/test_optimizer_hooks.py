"""Optimizer hooks (spec §11, scenarios 89-92), as event logs compared with the oracle."""

from __future__ import annotations

import importlib
import re

import pytest

import hookgrad
from hookgrad.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)
from tests.optim._oracle import outcome, same_as_torch


def _param(lib):
    return lib.nn.Parameter(lib.ones(2))


def _global(lib):
    return importlib.import_module(lib.__name__ + ".optim.optimizer")


def _order_scenario(lib, log):
    p = _param(lib)
    p.grad = lib.ones(2)
    opt = lib.optim.SGD([p], lr=0.1)
    g1 = _global(lib).register_optimizer_step_pre_hook(
        lambda o, a, k: log.append(("G-pre", len(a), a[0] is o, k)))
    opt.register_step_pre_hook(lambda o, a, k: log.append("L-pre"))
    opt.register_step_post_hook(lambda o, a, k: log.append(("L-post", p.tolist())))
    g2 = _global(lib).register_optimizer_step_post_hook(lambda o, a, k: log.append("G-post"))
    opt.step()
    opt.step(None)
    opt.step(closure=None)
    g1.remove()
    g2.remove()
    opt.step()
    return p


@pytest.mark.oracle
def test_optimizer_step_hook_order_and_args_include_self(torch):
    log, _ = same_as_torch(_order_scenario, torch)
    assert log[:4] == [("G-pre", 1, True, {}), "L-pre", ("L-post", [0.8999999761581421] * 2),
                       "G-post"]


def _replace_kwargs_scenario(lib, log):
    p = _param(lib)
    opt = lib.optim.SGD([p], lr=0.1)

    def closure():
        log.append("closure")
        p.grad = lib.ones(2)
        return 7.0

    opt.register_step_pre_hook(lambda o, a, k: (a, {"closure": closure}))
    opt.register_step_post_hook(lambda o, a, k: log.append(("post-kwargs", sorted(k))))
    log.append(("returned", opt.step()))
    return p


def _bad_return_scenario(lib, log):
    opt = lib.optim.SGD([_param(lib)], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: 5)
    opt.step()


@pytest.mark.oracle
def test_optimizer_step_pre_hook_replaces_kwargs_and_bad_return_message_regex(torch):
    log, _ = same_as_torch(_replace_kwargs_scenario, torch)
    assert log == ["closure", ("post-kwargs", ["closure"]), ("returned", 7.0)]
    mine, theirs = outcome(_bad_return_scenario, hookgrad), outcome(_bad_return_scenario, torch)
    pattern = (r"<function SGD\.step at 0x[0-9a-f]+> must return None or a tuple of "
               r"\(new_args, new_kwargs\), but got 5\.")
    for _, (kind, name, message) in (mine, theirs):
        assert (kind, name) == ("E", "RuntimeError")
        assert re.fullmatch(pattern, message), message


def _state_dict_hooks_scenario(lib, log):
    p = _param(lib)
    opt = lib.optim.SGD([p], lr=0.1)
    opt.register_state_dict_pre_hook(lambda o: log.append("sd-pre"))
    opt.register_state_dict_pre_hook(lambda o: log.append("sd-pre-first"), prepend=True)
    opt.register_state_dict_post_hook(lambda o, sd: (log.append("sd-post"), {**sd, "extra": 1})[1])
    opt.register_state_dict_post_hook(
        lambda o, sd: log.append(("sd-post-first", sorted(sd))), prepend=True)
    opt.register_load_state_dict_pre_hook(
        lambda o, sd: (log.append(("lsd-pre", sorted(sd))),
                       {k: v for k, v in sd.items() if k != "extra"})[1])
    opt.register_load_state_dict_pre_hook(
        lambda o, sd: sd.__setitem__("added", 1), prepend=True)
    opt.register_load_state_dict_post_hook(lambda o: log.append("lsd-post"))
    opt.register_load_state_dict_post_hook(lambda o: (log.append("lsd-post-first"), 9)[1],
                                           prepend=True)
    s = opt.state_dict()
    log.append(("keys", sorted(s)))
    opt.load_state_dict(s)
    log.append(("caller-keys", sorted(s)))
    return s["param_groups"]


@pytest.mark.oracle
def test_optimizer_state_dict_and_load_hooks_with_prepend_and_replacement(torch):
    log, _ = same_as_torch(_state_dict_hooks_scenario, torch)
    assert log == [
        "sd-pre-first", "sd-pre", ("sd-post-first", ["param_groups", "state"]), "sd-post",
        ("keys", ["extra", "param_groups", "state"]),
        ("lsd-pre", ["added", "extra", "param_groups", "state"]),
        "lsd-post-first", "lsd-post", ("caller-keys", ["extra", "param_groups", "state"]),
    ]


def _subclass_scenario(lib, log):
    class MyOpt(lib.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

        def step(self, closure=None):
            log.append(("my-step", closure))
            return "ret"

    opt = MyOpt([_param(lib)])
    handle = _global(lib).register_optimizer_step_pre_hook(lambda o, a, k: log.append("G-pre"))
    opt.register_step_pre_hook(lambda o, a, k: log.append(("L-pre", type(o).__name__)))
    opt.register_step_post_hook(lambda o, a, k: log.append("L-post"))
    try:
        log.append(opt.step())
    finally:  # a global hook must not outlive its test
        handle.remove()
    return MyOpt.step.hooked, MyOpt.step.__wrapped__.__qualname__


@pytest.mark.oracle
def test_optimizer_hooks_work_for_subclass_overriding_step(torch):
    log, result = same_as_torch(_subclass_scenario, torch)
    assert log == ["G-pre", ("L-pre", "MyOpt"), ("my-step", None), "L-post", "ret"]
    assert result == (True, "_subclass_scenario.<locals>.MyOpt.step")


def test_step_is_wrapped_once_when_the_class_is_created():
    class Custom(hookgrad.optim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    assert Custom.step.hooked is True
    assert hookgrad.optim.SGD.step.hooked is True
    assert Custom.__dict__["step"].__wrapped__.__qualname__.endswith("Custom.step")

    class Plain(hookgrad.optim.SGD):
        pass

    assert "step" not in Plain.__dict__  # inherits the already wrapped step


def test_hooks_fire_once_when_a_subclass_calls_super_step():
    class Custom(hookgrad.optim.SGD):
        def step(self, closure=None):
            log.append("custom")
            return super().step(closure)

    log = []
    p = hookgrad.ones(2, requires_grad=True)
    p.grad = hookgrad.ones(2)
    opt = Custom([p], lr=0.5)
    opt.register_step_pre_hook(lambda o, a, k: log.append("pre"))
    handle = register_optimizer_step_post_hook(lambda o, a, k: log.append("G-post"))
    try:
        opt.step()
    finally:  # a global hook must not outlive its test
        handle.remove()
    assert log == ["pre", "custom", "G-post"]
    assert p.tolist() == [0.5, 0.5]


def test_global_hooks_see_every_optimizer_and_handles_remove_them():
    log = []
    h1 = register_optimizer_step_pre_hook(lambda o, a, k: log.append(type(o).__name__))
    for cls in (hookgrad.optim.Adam, hookgrad.optim.RMSprop):
        cls([hookgrad.ones(1, requires_grad=True)]).step()
    h1.remove()
    h1.remove()  # idempotent
    hookgrad.optim.SGD([hookgrad.ones(1, requires_grad=True)], lr=0.1).step()
    assert log == ["Adam", "RMSprop"]


def test_hook_storage_attributes_are_ordered_dicts_keyed_by_handle_id():
    opt = hookgrad.optim.SGD([_param(hookgrad)], lr=0.1)
    handle = opt.register_step_pre_hook(print)
    for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                 "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                 "_optimizer_load_state_dict_pre_hooks", "_optimizer_load_state_dict_post_hooks"):
        assert isinstance(getattr(opt, name), dict)
    assert dict(opt._optimizer_step_pre_hooks) == {handle.id: print}
    assert "register_optimizer_step_pre_hook" not in dir(hookgrad.optim)


def test_a_raising_step_leaves_hooks_usable():
    class Boom(hookgrad.optim.SGD):
        def step(self, closure=None):
            raise KeyError("boom")

    log = []
    opt = Boom([_param(hookgrad)], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: log.append("pre"))
    for _ in range(2):
        with pytest.raises(KeyError):
            opt.step()
    assert log == ["pre", "pre"]
