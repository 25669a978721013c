"""``register_multi_grad_hook`` (spec §6.1; scenarios 50-53)."""

from __future__ import annotations

import pytest

from tests.hooks._scenario import L, check

pytestmark = pytest.mark.oracle


def s_all_partial_full(lib, log):
    a = lib.ones(2, requires_grad=True)
    b = lib.ones(2, requires_grad=True)
    h = lib.autograd.graph.register_multi_grad_hook((a, b), lambda gs: log.append(("all", L(gs))))
    (a * 2).sum().backward()
    (a * 2 + b * 3).sum().backward()
    h.remove()
    (a * 2 + b * 3).sum().backward()
    return type(h).__name__, hasattr(h, "id"), len(h.handles), isinstance(
        h, lib.utils.hooks.RemovableHandle)


def test_multi_grad_all_partial_and_full(torch):
    check(s_all_partial_full, torch, log=[("all", [[2.0, 2.0], None]),
                                          ("all", [[2.0, 2.0], [3.0, 3.0]])])


def s_all_position(lib, log):
    a = lib.ones(2, requires_grad=True)
    b = lib.ones(2, requires_grad=True)
    x = a * 2
    y = b * 3
    x.register_hook(lambda g: log.append("x-before"))
    lib.autograd.graph.register_multi_grad_hook((x, y), lambda gs: log.append("MULTI"))
    x.register_hook(lambda g: log.append("x-after"))
    y.register_hook(lambda g: log.append("y-after"))
    (x + y).sum().backward()


def test_multi_grad_all_fn_position_inside_last_tensor_hooks(torch):
    check(s_all_position, torch, log=["y-after", "x-before", "MULTI", "x-after"])


def s_all_sees_transformed_and_inputs(lib, log):
    a = lib.ones(2, requires_grad=True)
    b = lib.ones(2, requires_grad=True)
    c = lib.ones(2, requires_grad=True)
    a.register_hook(lambda g: g * 10)
    with lib.autograd.graph.register_multi_grad_hook(
            (a, b, c), lambda gs: (log.append(("all", L(gs))), 123)[1]):
        y = (a * b).sum()
        y.backward(retain_graph=True)
        y.backward(inputs=[a], retain_graph=True)
    y.backward()
    return a.grad


def test_multi_grad_all_sees_earlier_hooks_ignores_unneeded_and_context_manager(torch):
    check(s_all_sees_transformed_and_inputs, torch)


def s_all_nonleaf_under_grad(lib, log):
    a = lib.ones(2, requires_grad=True)
    x = a * 2
    y = a * 3
    lib.autograd.graph.register_multi_grad_hook((x, y), lambda gs: log.append(("all", L(gs))))
    return lib.autograd.grad((x * y).sum(), [x, y])


def test_multi_grad_all_nonleaves_under_grad(torch):
    check(s_all_nonleaf_under_grad, torch)


def s_any(lib, log):
    a = lib.ones(2, requires_grad=True)
    b = lib.ones(2, requires_grad=True)
    n = lib.ones(2)
    lib.autograd.graph.register_multi_grad_hook(
        (a, b, n), lambda g: log.append(("any", g.tolist())), mode="any")
    (a * 2 + b * 3).sum().backward()
    (a * 2 + b * 3).sum().backward()
    (a * 4).sum().backward()


def test_multi_grad_any_fires_once_per_pass(torch):
    check(s_any, torch, log=[("any", [3.0, 3.0]), ("any", [3.0, 3.0]), ("any", [4.0, 4.0])])


def s_errors(case):
    def scenario(lib, log):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        reg = lib.autograd.graph.register_multi_grad_hook
        if case == "mode":
            reg((a, b), print, mode="some")
        elif case == "nograd":
            reg((a, lib.ones(2)), print)
        else:
            reg((a, b), lambda gs: log.append("fn"))
            lib.autograd.grad((a * b).sum(), [a])

    return scenario


@pytest.mark.parametrize("case,exc", [("mode", "ValueError"), ("nograd", "AssertionError"),
                                      ("leaf-grad", "RuntimeError")])
def test_multi_grad_errors(torch, case, exc):
    check(s_errors(case), torch, exc=exc)


def s_nested_tasks(lib, log):
    a = lib.ones(2, requires_grad=True)
    b = lib.ones(2, requires_grad=True)
    w = lib.ones(2, requires_grad=True)
    x = a * 2
    y = b * 3
    lib.autograd.graph.register_multi_grad_hook((x, y), lambda gs: log.append(("all", L(gs))))

    def inner(g):
        with lib.enable_grad():
            xi = w * 5
            lib.autograd.grad((xi * x).sum(), [x], retain_graph=True)
        log.append("inner-done")

    y.register_hook(inner)
    (x + y).sum().backward()


def test_multi_grad_state_is_per_graph_task(torch):
    check(s_nested_tasks, torch)
