"""Final callbacks and re-entrant backward (spec §5.4-5.5; scenarios 47-49)."""

from __future__ import annotations

import pytest

from tests.hooks._scenario import check

pytestmark = pytest.mark.oracle


def s_fifo_nested(lib, log):
    eng = lib.autograd.Variable._execution_engine
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2

    def hb(g):
        log.append("hook-b")
        eng.queue_callback(lambda: (log.append("cb1"),
                                    eng.queue_callback(lambda: log.append("cb3"))))
        eng.queue_callback(lambda: log.append(("cb2", a.grad.tolist())))

    b.register_hook(hb)
    a.register_post_accumulate_grad_hook(lambda p: log.append("post-acc"))
    b.sum().backward()


def test_queue_callback_fifo_and_nested_callbacks(torch):
    check(s_fifo_nested, torch, log=["hook-b", "post-acc", "cb1", ("cb2", [2.0, 2.0]), "cb3"])


def s_outside(lib, log):
    lib.autograd.Variable._execution_engine.queue_callback(lambda: None)


def test_queue_callback_outside_backward_raises(torch):
    check(s_outside, torch, exc="RuntimeError")


def s_callback_grad_mode_and_grad(lib, log):
    eng = lib.autograd.Variable._execution_engine
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2

    def hb(g):
        eng.queue_callback(lambda: log.append(("cb", lib.is_grad_enabled())))

    b.register_hook(hb)
    lib.autograd.grad(b.sum(), a, retain_graph=True)
    lib.autograd.grad(b.sum(), a, create_graph=True)


def test_queue_callback_under_grad_and_grad_mode(torch):
    check(s_callback_grad_mode_and_grad, torch, log=[("cb", False), ("cb", True)])


def s_raising_callback(lib, log):
    eng = lib.autograd.Variable._execution_engine
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2

    def boom():
        raise ValueError("callback failed")

    b.register_hook(lambda g: eng.queue_callback(boom))
    try:
        b.sum().backward()
    except ValueError as e:
        log.append(str(e))
    return a.grad


def test_raising_callback_propagates_and_keeps_grads(torch):
    check(s_raising_callback, torch, log=["callback failed"])


def s_reentrant(lib, log):
    eng = lib.autograd.Variable._execution_engine
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([3.0, 4.0], requires_grad=True)

    def w_hook(g):
        log.append("inner-w-hook")
        eng.queue_callback(lambda: log.append("inner-cb"))

    w.register_hook(w_hook)

    def outer(g):
        log.append("outer-hook")
        eng.queue_callback(lambda: log.append("outer-cb"))
        with lib.enable_grad():
            (w * 2).sum().backward()
        log.append("outer-hook-end")

    b = a * 2
    b.register_hook(outer)
    b.sum().backward()
    return a.grad, w.grad


def test_reentrant_backward_inside_hook_callback_scoping(torch):
    check(s_reentrant, torch, log=["outer-hook", "inner-w-hook", "inner-cb", "outer-hook-end",
                                   "outer-cb"])


def s_reentrant_same_graph(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    c = b * 3

    def hc(g):
        with lib.enable_grad():
            (gb,) = lib.autograd.grad((b * b).sum(), b, retain_graph=True)
        log.append(("inner", gb.tolist()))

    c.register_hook(hc)
    c.sum().backward()
    return a.grad


def test_reentrant_grad_on_shared_graph(torch):
    check(s_reentrant_same_graph, torch)


def s_failed_pass_drops_callbacks(lib, log):
    eng = lib.autograd.Variable._execution_engine
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    c = b * 3
    c.register_hook(lambda g: eng.queue_callback(lambda: log.append("cb")))

    def boom(g):
        raise ValueError("x")

    b.register_hook(boom)
    try:
        c.sum().backward()
    except ValueError:
        log.append("caught")
    (a * 2).sum().backward()
    return a.grad


def test_failed_pass_does_not_run_or_leak_callbacks(torch):
    check(s_failed_pass_drops_callbacks, torch, log=["caught"])


def s_inner_failure_and_backward_in_callback(lib, log):
    eng = lib.autograd.Variable._execution_engine
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    v = lib.tensor([1.0, 2.0], requires_grad=True)

    def boom(g):
        raise KeyError("inner")

    w.register_hook(boom)
    v.register_hook(lambda g: log.append("v-hook"))

    def cb():
        log.append("cb-start")
        with lib.enable_grad():
            (v * 3).sum().backward()
        log.append(("cb-end", v.grad.tolist()))

    def outer(g):
        with lib.enable_grad():
            try:
                (w * 2).sum().backward()
            except KeyError:
                log.append("inner-caught")
        log.append(("grad-mode", lib.is_grad_enabled()))
        eng.queue_callback(cb)

    b = a * 2
    b.register_hook(outer)
    b.sum().backward()
    return a.grad, w.grad


def test_reentrant_failure_and_backward_inside_callback(torch):
    check(s_inner_failure_and_backward_in_callback, torch)
