"""Module forward hooks against the oracle: spec §7, scenarios 59-69 of §15."""

from __future__ import annotations

import pytest

import tests.nn._reset  # noqa: F401  (resets global module hooks after each test)
from tests.hooks._scenario import check

pytestmark = pytest.mark.oracle


def _add_module(lib, log):
    class Add(lib.nn.Module):
        def forward(self, x, y=None, *, scale=1.0):
            log.append(("forward", x, y, scale))
            return x * scale if y is None else (x + y) * scale

    return Add()


def _glob(lib):
    return lib.nn.modules.module


# ---------------------------------------------------------------- 59
def sc_pre_hook_single_value_and_list(lib, log):
    m = _add_module(lib, log)
    h = m.register_forward_pre_hook(lambda mod, args: 7)
    log.append(("r1", m(1)))
    h.remove()
    m.register_forward_pre_hook(lambda mod, args: [3, 4])
    try:
        m(1)
    except TypeError as e:  # the list became the single argument: [3, 4] * 1.0 fails
        log.append(("list-arg", type(e).__name__))
    m2 = _add_module(lib, log)
    m2.register_forward_pre_hook(lambda mod, args: ())
    try:
        m2(5)
    except TypeError as e:
        log.append(("empty", type(e).__name__))
    return log


def test_forward_pre_hook_single_value_and_list_are_wrapped(torch):
    check(sc_pre_hook_single_value_and_list, torch)


# ---------------------------------------------------------------- 60
def sc_pre_hook_with_kwargs(lib, log):
    m = _add_module(lib, log)
    m.register_forward_pre_hook(lambda mod, args: (log.append(("pre1", args)), 10)[1])
    m.register_forward_pre_hook(lambda mod, args: (log.append(("pre2", args)), (args[0], 5))[1])
    m.register_forward_pre_hook(
        lambda mod, args, kw: (log.append(("pre3kw", args, kw)), (args, {"scale": 3.0}))[1],
        with_kwargs=True)
    log.append(("result", m(1, scale=2.0)))
    return log


def test_forward_pre_hook_with_kwargs_return(torch):
    check(sc_pre_hook_with_kwargs, torch, log=[
        ("pre1", (1,)), ("pre2", (10,)), ("pre3kw", (10, 5), {"scale": 2.0}),
        ("forward", 10, 5, 3.0), ("result", 45.0)])


@pytest.mark.parametrize("bad", [(1, 2, 3), [(1,), {}], 5])
def test_forward_pre_hook_with_kwargs_bad_return_raises(torch, bad):
    def sc(lib, log):
        m = _add_module(lib, log)
        m.register_forward_pre_hook(lambda mod, a, k: bad, with_kwargs=True)
        return m(1)

    mine = check(sc, torch, exc="RuntimeError")
    assert "forward pre-hook must return None or a tuple" in mine["exc"][1]


def sc_pre_hook_mutates_kwargs(lib, log):
    m = _add_module(lib, log)
    m.register_forward_pre_hook(lambda mod, a, k: k.update(scale=4.0), with_kwargs=True)
    return m(2)


def test_forward_pre_hook_kwargs_live_dict(torch):
    check(sc_pre_hook_mutates_kwargs, torch)


# ---------------------------------------------------------------- 61
def sc_order_global_local_prepend(lib, log):
    m = lib.nn.Identity()
    g1 = _glob(lib).register_module_forward_pre_hook(lambda mod, a: log.append("G-pre"))
    m.register_forward_pre_hook(lambda mod, a: log.append("L-pre-A"))
    m.register_forward_pre_hook(lambda mod, a: log.append("L-pre-B(prepend)"), prepend=True)
    g2 = _glob(lib).register_module_forward_hook(lambda mod, a, o: log.append("G-fwd"))
    m.register_forward_hook(lambda mod, a, o: log.append("L-fwd-A"))
    m.register_forward_hook(lambda mod, a, o: log.append("L-fwd-B(prepend)"), prepend=True)
    m(lib.ones(1))
    g1.remove()
    g2.remove()
    return log


def test_forward_hook_order_global_local_prepend(torch):
    check(sc_order_global_local_prepend, torch, log=[
        "G-pre", "L-pre-B(prepend)", "L-pre-A", "G-fwd", "L-fwd-B(prepend)", "L-fwd-A"])


# ---------------------------------------------------------------- 62
def sc_replacement_chain_and_kwargs(lib, log):
    m = _add_module(lib, log)
    m.register_forward_hook(lambda mod, a, o: (log.append(("f1", a, o)), o + 100)[1])
    m.register_forward_hook(lambda mod, a, kw, o: log.append(("f2", a, kw, o)), with_kwargs=True)
    log.append(("result", m(1, 2, scale=3.0)))
    return log


def test_forward_hook_replacement_chain_and_kwargs(torch):
    check(sc_replacement_chain_and_kwargs, torch, log=[
        ("forward", 1, 2, 3.0), ("f1", (1, 2), 9.0), ("f2", (1, 2), {"scale": 3.0}, 109.0),
        ("result", 109.0)])


def sc_nested_call_order(lib, log):
    class Outer(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = lib.nn.Identity()

        def forward(self, x):
            log.append("outer.forward")
            return self.inner(x)

    o = Outer()
    o.register_forward_pre_hook(lambda m, a: log.append("outer.pre"))
    o.register_forward_hook(lambda m, a, r: log.append("outer.post"))
    o.inner.register_forward_pre_hook(lambda m, a: log.append("inner.pre"))
    o.inner.register_forward_hook(lambda m, a, r: log.append("inner.post"))
    o(lib.ones(1))
    return log


def test_nested_modules_forward_hook_order(torch):
    check(sc_nested_call_order, torch, log=[
        "outer.pre", "outer.forward", "inner.pre", "inner.post", "outer.post"])


# ---------------------------------------------------------------- 63
def sc_forward_direct_and_fast_path(lib, log):
    class M(lib.nn.Module):
        def forward(self, x):
            log.append("forward")
            if not self._forward_hooks:
                self.register_forward_hook(lambda m, a, o: log.append("added-inside"))
            return x

    m = M()
    m(1)          # fast path: the hook added inside forward does not run
    log.append("|")
    m(1)          # now it runs
    log.append("|")
    m.forward(1)  # direct forward: no hooks
    return log


def test_forward_called_directly_runs_no_hooks_and_fast_path(torch):
    check(sc_forward_direct_and_fast_path, torch, log=[
        "forward", "|", "forward", "added-inside", "|", "forward"])


# ---------------------------------------------------------------- 64
def sc_hook_added_in_pre_hook(lib, log):
    m = _add_module(lib, log)

    def pre(mod, args):
        log.append("pre")
        mod.register_forward_hook(lambda mm, a, o: log.append(("late-fwd", o)))
        mod.register_full_backward_hook(lambda mm, gi, go: log.append("late-bwd"))

    m.register_forward_pre_hook(pre)
    x = lib.ones(1, requires_grad=True)
    m(x).sum().backward()
    return log


def test_forward_hook_added_in_pre_hook_fires_same_call(torch):
    check(sc_hook_added_in_pre_hook, torch)


# ---------------------------------------------------------------- 65-67
def _boom(lib, log):
    class Boom(lib.nn.Module):
        def forward(self, x):
            log.append("forward")
            raise ValueError("fwd failed")

    return Boom()


def sc_always_call_on_forward_exception(lib, log):
    m = _boom(lib, log)
    m.register_forward_hook(lambda mod, a, o: log.append("normal"))
    m.register_forward_hook(lambda mod, a, o: (log.append(("always1", a, o)), "R")[1],
                            always_call=True)
    m.register_forward_hook(lambda mod, a, o: log.append(("always2", o)), always_call=True)
    m.register_forward_hook(lambda mod, a, k, o: log.append(("always3kw", k, o)),
                            always_call=True, with_kwargs=True)
    try:
        m(1)
    except ValueError as e:
        log.append(("raised", str(e)))
    return log


def test_always_call_on_forward_exception(torch):
    check(sc_always_call_on_forward_exception, torch, log=[
        "forward", ("always1", (1,), None), ("always2", "R"), ("always3kw", {}, "R"),
        ("raised", "fwd failed")])


def sc_always_call_when_hook_raises(lib, log):
    m = _add_module(lib, log)

    def raiser(mod, a, o):
        log.append("raiser")
        raise KeyError("hook failed")

    m.register_forward_hook(lambda mod, a, o: log.append(("always-before", o)), always_call=True)
    m.register_forward_hook(raiser)
    m.register_forward_hook(lambda mod, a, o: log.append(("always-after", o)), always_call=True)
    m.register_forward_hook(lambda mod, a, o: log.append("normal-after"))
    return m(6)


def test_always_call_when_ordinary_forward_hook_raises(torch):
    check(sc_always_call_when_hook_raises, torch, exc="KeyError")


def sc_always_call_pre_hook_raises(lib, log):
    m = _add_module(lib, log)
    m.register_forward_pre_hook(lambda mod, a: 1 / 0)
    m.register_forward_hook(lambda mod, a, o: log.append(("always", a, o)), always_call=True)
    return m(3)


def test_always_call_when_pre_hook_raises(torch):
    check(sc_always_call_pre_hook_raises, torch, exc="ZeroDivisionError")


def sc_always_call_exception_becomes_warning(lib, log):
    m = _boom(lib, log)
    g = _glob(lib).register_module_forward_hook(
        lambda mod, a, o: (log.append("global-always"), [][1]), always_call=True)
    m.register_forward_hook(lambda mod, a, o: (log.append("local-always"), {}["k"]),
                            always_call=True)
    m.register_forward_hook(lambda mod, a, o: log.append("local-always-2"), always_call=True)
    try:
        m(1)
    finally:
        g.remove()


def test_always_call_hook_exception_becomes_warning(torch):
    mine = check(sc_always_call_exception_becomes_warning, torch, exc="ValueError")
    assert [w[0] for w in mine["warnings"]] == ["UserWarning", "UserWarning"]
    assert mine["warnings"][0][1].startswith("global module forward hook with ``always_call")


# ---------------------------------------------------------------- 68
def sc_global_always_call_with_kwargs(lib, log):
    m = _boom(lib, log)
    g = _glob(lib).register_module_forward_hook(
        lambda mod, a, kw, o: log.append(("gkw", kw, o)), with_kwargs=True, always_call=True)
    try:
        m(1, )
    except ValueError as e:
        log.append(("raised", str(e)))
    log.append("|")
    ok = lib.nn.Identity()
    ok(2)
    g.remove()
    return log


def test_global_always_call_with_kwargs_quirk(torch):
    mine = check(sc_global_always_call_with_kwargs, torch)
    assert len(mine["warnings"]) == 1 and "global module forward hook" in mine["warnings"][0][1]


# ---------------------------------------------------------------- 69
def sc_keyboard_interrupt(lib, log):
    class KI(lib.nn.Module):
        def forward(self, x):
            raise KeyboardInterrupt

    m = KI()
    m.register_forward_hook(lambda mod, a, o: log.append("always"), always_call=True)
    try:
        m(1)
    except KeyboardInterrupt:
        log.append("interrupted")
    return log


def test_keyboard_interrupt_skips_always_call(torch):
    check(sc_keyboard_interrupt, torch, log=["interrupted"])


# ---------------------------------------------------------------- 6 (module variant)
def sc_extra_dict_cleanup(lib, log):
    m = lib.nn.Identity()
    h1 = m.register_forward_hook(lambda *a: None, with_kwargs=True, always_call=True)
    h2 = m.register_forward_pre_hook(lambda *a: None, with_kwargs=True)
    before = (len(m._forward_hooks_with_kwargs), len(m._forward_hooks_always_called),
              len(m._forward_pre_hooks_with_kwargs), h1.id in m._forward_hooks)
    h1.remove()
    h2.remove()
    h1.remove()
    after = (len(m._forward_hooks_with_kwargs), len(m._forward_hooks_always_called),
             len(m._forward_pre_hooks_with_kwargs), len(m._forward_hooks))
    return before, after


def test_extra_dict_cleanup_on_module_forward_hook(torch):
    check(sc_extra_dict_cleanup, torch)


def sc_handle_context_manager(lib, log):
    m = lib.nn.Identity()
    with m.register_forward_hook(lambda mod, a, o: log.append("in")):
        m(1)
    m(1)
    return log


def test_module_handle_context_manager(torch):
    check(sc_handle_context_manager, torch, log=["in"])
