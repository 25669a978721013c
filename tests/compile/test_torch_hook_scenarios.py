"""Scenarios of PyTorch's own compile tests (``test/dynamo/test_hooks.py``,
``test/dynamo/test_compiled_autograd.py``), rewritten in the oracle style: each scenario runs
compiled on hookgrad and eagerly on PyTorch (the reference where ``torch.compile`` itself is
known to be wrong) and the observations (values, gradients, hook calls, state) must match.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

import hookgrad
from tests.compile._libs import compiled_autograd, plain

BACKENDS = ("eager", "aot_eager", "inductor")


def _grad(t: Any) -> Any:
    return None if t.grad is None else [round(v, 4) for v in t.grad.reshape(-1).tolist()]


def _same(scenario: Any, torch: Any, **kw: Any) -> None:
    want = scenario(torch, None, **kw)
    assert scenario(hookgrad, None, **kw) == want, "eager"
    for backend in BACKENDS:
        hookgrad._dynamo.reset()
        assert scenario(hookgrad, backend, **kw) == want, backend


def _compile(lib: Any, fn: Any, backend: str | None, **kw: Any) -> Any:
    return fn if backend is None else lib.compile(fn, backend=backend, **kw)


class _WithVal:
    def __init__(self, val: Any) -> None:
        self.val = val


def hook_used_before_and_after(lib: Any, backend: str | None) -> list:
    def fn(x: Any) -> Any:
        y = x * 2
        z = y + 1
        y.register_hook(lambda g: g * 2)
        return (z + y * 3).sum()
    f = _compile(lib, fn, backend, fullgraph=True)
    out = []
    for i in range(3):
        x = (lib.arange(2.0) + i).requires_grad_()
        r = f(x)
        r.backward()
        out.append((round(float(r.detach()), 4), _grad(x)))
    return out


def hook_with_cond(lib: Any, backend: str | None) -> list:
    def fn(x: Any) -> Any:
        y = x * 2
        y.register_hook(lambda g: g * 2)
        return lib.cond(x.sum() > 0, lambda t: t + 1, lambda t: t - 1, (y,)).sum()
    f = _compile(lib, fn, backend)
    out = []
    for sign in (1.0, -1.0, 1.0):
        x = (lib.ones(3) * sign).requires_grad_()
        r = f(x)
        r.backward()
        out.append((round(float(r.detach()), 4), _grad(x)))
    return out


def hook_returns_none_and_handles(lib: Any, backend: str | None) -> list:
    def fn(x: Any, y: Any) -> Any:
        h = x.register_hook(lambda g: g * 2)
        z = y * y
        h.remove()
        h.remove()
        h0 = x.register_hook(lambda g: None)
        h1 = x.register_hook(lambda g: g / 2)
        return x, z, h0, h1
    f = _compile(lib, fn, backend)
    out = []
    for i in range(2):
        v = lib.zeros(3, requires_grad=True)
        v2, z, h0, h1 = f(v, lib.ones(2) * i)
        v2.backward(lib.tensor([1.0, 2.0, 3.0]))
        first = _grad(v)
        h0.remove()
        h1.remove()
        v2.backward(lib.tensor([1.0, 2.0, 3.0]))
        out.append((first, _grad(v), plain(z), type(h0).__name__))
    return out


def hook_closure_over_object(lib: Any, backend: str | None) -> list:
    def fn(x: Any, obj: Any) -> Any:
        y = x.sin()
        y.register_hook(lambda g: g + obj.val)
        x.register_hook(lambda g: g * obj.val)
        return y.sin()
    f = _compile(lib, fn, backend, fullgraph=True)
    out = []
    for val in (lib.tensor(2.0), lib.tensor(3.0), 5):
        x = lib.ones(4, requires_grad=True)
        f(x, _WithVal(val)).sum().backward()
        out.append(_grad(x))
    return out


def hook_identity_changes_between_calls(lib: Any, backend: str | None) -> list:
    hooks = {"h": lambda g: g + 1}

    def fn(x: Any) -> Any:
        y = x.mul(2)
        y.register_hook(hooks["h"])
        y.register_hook(functools.partial(lambda g, k: g * k, k=len(hooks)))
        return y.mul(3)
    f = _compile(lib, fn, backend)
    out = []
    for i in range(3):
        x = lib.ones(2, requires_grad=True)
        f(x).sum().backward()
        out.append(_grad(x))
        hooks["h"] = lambda g, i=i: g * (i + 2)
        hooks[i] = None
    return out


def module_hooks_kwargs_always_call(lib: Any, backend: str | None) -> list:
    log: list = []
    m = lib.nn.Linear(3, 3)
    with lib.no_grad():
        m.weight.copy_(lib.arange(9.0).reshape(3, 3) / 10)
        m.bias.zero_()
    m.register_forward_pre_hook(lambda mod, a, kw: (log.append(("pre", sorted(kw))),
                                                     (a, kw))[1], with_kwargs=True)
    m.register_forward_hook(lambda mod, a, kw, o: o * 2, with_kwargs=True)
    m.register_forward_hook(lambda mod, a, o: log.append("always"), always_call=True)
    m.register_full_backward_pre_hook(lambda mod, go: log.append(("bpre", len(go))))
    m.register_full_backward_hook(lambda mod, gi, go: log.append(("bpost", len(gi))))
    f = _compile(lib, lambda x: m(input=x).relu(), backend)
    out = []
    for i in range(3):
        x = (lib.arange(6.0).reshape(2, 3) - i).requires_grad_()
        r = f(x)
        r.sum().backward()
        out.append((plain(r.detach()), _grad(x), list(log)))
        log.clear()
    return out


def global_module_hooks(lib: Any, backend: str | None) -> list:
    log: list = []
    mm = lib.nn.modules.module
    seq = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Tanh())
    with lib.no_grad():
        seq[0].weight.copy_(lib.tensor([[1.0, -1.0], [0.5, 2.0]]))
        seq[0].bias.zero_()
    handles = [mm.register_module_forward_pre_hook(lambda mod, a: log.append(
                   ("pre", type(mod).__name__))),
               mm.register_module_forward_hook(lambda mod, a, o: log.append(
                   ("fwd", type(mod).__name__))),
               mm.register_module_full_backward_hook(lambda mod, gi, go: log.append(
                   ("bwd", type(mod).__name__)))]
    try:
        f = _compile(lib, lambda x: seq(x * 2).sum(), backend)
        out = []
        for i in range(3):
            x = (lib.arange(4.0).reshape(2, 2) + i).requires_grad_()
            f(x).backward()
            out.append((_grad(x), list(log)))
            log.clear()
            if i == 1:
                handles.pop().remove()
    finally:
        for h in handles:
            h.remove()
    return out


SCENARIOS = [hook_used_before_and_after, hook_with_cond, hook_returns_none_and_handles,
             hook_closure_over_object, hook_identity_changes_between_calls,
             module_hooks_kwargs_always_call, global_module_hooks]


@pytest.mark.filterwarnings("ignore")  # (torch.cond's eager path warns; backward hooks warn)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
def test_scenario_matches_torch_eager(scenario: Any, torch: Any) -> None:
    _same(scenario, torch)
