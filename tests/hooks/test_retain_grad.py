"""``retain_grad`` / ``retains_grad`` / non-leaf ``.grad`` (spec §3.2; scenarios 9, 20, 21)."""

from __future__ import annotations

import pytest

from tests.hooks._scenario import check

pytestmark = pytest.mark.oracle


def s_retain_after_hooks(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.retain_grad()
    b.register_hook(lambda g: (log.append(("hb", g.tolist())), g + 100)[1])
    (b * 3).sum().backward()
    log += [("b.grad", b.grad.tolist()), ("a.grad", a.grad.tolist())]


def test_nonleaf_hook_vs_retain_grad_order(torch):
    check(s_retain_after_hooks, torch, log=[("hb", [3.0, 3.0]), ("b.grad", [103.0, 103.0]),
                                             ("a.grad", [206.0, 206.0])])


def s_retain_not_pre_hook_value(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.register_hook(lambda g: g * 2)
    b.retain_grad()
    b.grad_fn.register_prehook(lambda go: (go[0] * 100,))
    seen = []
    b.register_hook(lambda g: seen.append(g) or None)
    (b * 3).sum().backward()
    return b.grad, a.grad, b.grad is seen[0]


def test_retain_grad_sees_tensor_hooks_but_not_prehooks_and_is_a_new_tensor(torch):
    check(s_retain_not_pre_hook_value, torch)


def s_retain_accumulates(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.retain_grad()
    b.retain_grad()
    leaf = lib.ones(2, requires_grad=True)
    leaf.retain_grad()
    y = (b * 3).sum() + (leaf * 1).sum()
    y.backward(retain_graph=True)
    log.append(b.grad.tolist())
    y.backward()
    return b.grad, b.retains_grad, leaf.retains_grad, leaf.grad, a.is_leaf, b.is_leaf


def test_retain_grad_accumulates_over_passes_and_is_idempotent(torch):
    check(s_retain_accumulates, torch, log=[[3.0, 3.0]])


def s_retain_errors(lib, log):
    lib.ones(2).retain_grad()


def test_retain_grad_without_requires_grad_raises(torch):
    check(s_retain_errors, torch, exc="RuntimeError")


def s_nonleaf_grad_warns(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.sum().backward()
    c = lib.ones(2)
    return b.grad, c.grad, c.is_leaf, a.grad


def test_nonleaf_grad_access_warns_and_returns_none(torch):
    out = check(s_nonleaf_grad_warns, torch)
    assert out["warnings"] and out["warnings"][0][0] == "UserWarning"


def s_retain_under_grad(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.retain_grad()
    b.register_hook(lambda g: g + 1)
    (gb,) = lib.autograd.grad((b * 3).sum(), b)
    return gb, b.grad, a.grad


def test_grad_populates_retained_nonleaf_grad(torch):
    check(s_retain_under_grad, torch)
