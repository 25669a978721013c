"""Engine scheduling as seen by hooks (spec §1.2, §1.5, §4.5; scenarios 36-39)."""

from __future__ import annotations

import pytest

from tests.hooks._scenario import check

pytestmark = pytest.mark.oracle


def s_branch_order(swap):
    def scenario(lib, log):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([1.0, 2.0], requires_grad=True)
        a.register_hook(lambda g: log.append("hook-a"))
        b.register_hook(lambda g: log.append("hook-b"))
        if swap:
            z = b * 3
            y = a * 2
        else:
            y = a * 2
            z = b * 3
        (y + z).sum().backward()

    return scenario


def test_branch_order_follows_creation_order(torch):
    check(s_branch_order(False), torch, log=["hook-b", "hook-a"])
    check(s_branch_order(True), torch, log=["hook-a", "hook-b"])


def s_full_trace(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([1.0, 2.0], requires_grad=True)
    a.register_hook(lambda g: log.append("hook-a"))
    b.register_hook(lambda g: log.append("hook-b"))
    y = a * 2
    z = b * 3
    s = y + z
    out = s.sum()
    base = y.grad_fn._sequence_nr()
    nodes = [out.grad_fn, s.grad_fn, z.grad_fn, y.grad_fn,
             z.grad_fn.next_functions[0][0], y.grad_fn.next_functions[0][0]]
    for tag, n in zip(["Sum", "Add", "Mul-z", "Mul-y", "Acc(b)", "Acc(a)"], nodes, strict=True):
        rel = n._sequence_nr() - base if n._sequence_nr() < 2**63 else "max"
        n.register_prehook(lambda go, tag=tag, rel=rel: log.append(f"{tag}#{rel}"))
    out.backward()


def test_accumulategrad_runs_as_soon_as_ready(torch):
    check(s_full_trace, torch, log=["Sum#3", "Add#2", "Mul-z#1", "hook-b", "Acc(b)#max",
                                    "Mul-y#0", "hook-a", "Acc(a)#max"])


def s_deep_chain_and_diamond(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    x = a
    for i in range(5):
        x = x * 1.5 if i % 2 else x + 1
        x.register_hook(lambda g, i=i: log.append((i, g.tolist())))
    left, right = x * 2, x.exp()
    left.register_hook(lambda g: log.append("left"))
    right.register_hook(lambda g: log.append("right"))
    (left + right + a).sum().backward()
    return a.grad


def test_diamond_and_chain_order(torch):
    check(s_deep_chain_and_diamond, torch)


def s_multiple_roots(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    y = a * 2
    z = a * 3
    y.register_hook(lambda g: log.append(("y", g.tolist())))
    z.register_hook(lambda g: log.append(("z", g.tolist())))
    lib.autograd.backward([y, z], [lib.ones(2), lib.full((2,), 2.0)])
    log.append(("a", a.grad.tolist()))
    lib.autograd.backward([y, y], [lib.ones(2), lib.full((2,), 5.0)], retain_graph=True)
    log.append(("a", a.grad.tolist()))
    lib.autograd.backward([y.sum(), z.sum()])
    return a.grad


def test_multiple_roots_and_duplicate_roots_sum_seeds(torch):
    check(s_multiple_roots, torch)


def s_second_backward(op):
    def scenario(lib, log):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y = {
            "add": lambda: (a + 1).sum(), "sub": lambda: (a - 1).sum(),
            "mul": lambda: (a * 2).sum(), "div": lambda: (a / 2).sum(),
            "mul1": lambda: (a * 1).sum(), "exp": lambda: a.exp().sum(),
            "neg": lambda: (-a).sum(), "view": lambda: a.view(2, 1).sum(),
        }[op]()
        y.backward()
        log.append("first")
        y.backward()
        log.append("second")
        return a.grad

    return scenario


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "mul1", "exp", "neg", "view"])
def test_second_backward_error_only_when_saved_tensors_needed(torch, op):
    check(s_second_backward(op), torch)


def s_exception_keeps_side_effects(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([1.0, 2.0], requires_grad=True)
    y = a * 2
    z = b * 3
    y.register_hook(lambda g: 1 / 0)
    try:
        (y + z).sum().backward()
    except ZeroDivisionError as e:
        log.append(str(e))
    return a.grad, b.grad


def test_exception_aborts_task_without_rollback(torch):
    check(s_exception_keeps_side_effects, torch)
