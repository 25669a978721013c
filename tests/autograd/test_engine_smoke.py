"""Smoke tests of the engine core against the oracle (the full suites live beside this file)."""

from __future__ import annotations

import pytest

import hookgrad


def _order_scenario(lib, log):
    a = lib.ones(2, requires_grad=True)
    b = lib.ones(2, requires_grad=True)
    c = lib.ones(2, requires_grad=True)
    for name, t in (("a", a), ("b", b), ("c", c)):
        t.register_hook(lambda g, name=name: log.append(name))
    (a * b * c).sum().backward()
    log.append("|")
    (a + b).sum().backward()
    return [a.grad.tolist(), b.grad.tolist(), c.grad.tolist()]


@pytest.mark.oracle
def test_equal_priority_leaves_follow_pytorch_heap_order(torch):
    mine, theirs = [], []
    assert _order_scenario(hookgrad, mine) == _order_scenario(torch, theirs)
    assert mine == theirs


def test_second_backward_raises_freed_error():
    x = hookgrad.ones(2, requires_grad=True)
    z = (x * 2).sum()
    z.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        z.backward()


def test_add_gradients_do_not_share_memory_between_leaves():
    a = hookgrad.ones(2, requires_grad=True)
    b = hookgrad.ones(2, requires_grad=True)
    (a + b).sum().backward()
    (a + b).sum().backward()
    assert a.grad.tolist() == [2.0, 2.0] and b.grad.tolist() == [2.0, 2.0]
