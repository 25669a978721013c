"""The one table of patched callables (hookgrad/compile/trace/patches.py): one install rule."""

from __future__ import annotations

import builtins

import hookgrad
from hookgrad.compile.trace import patches
from hookgrad.compile.trace.patches import PatchGroup


class _Owner:
    def f(self) -> str:
        return "real"


def test_install_restores_own_values_in_reverse_and_nesting_keeps_layering():
    first = PatchGroup("t_first", lambda: [(_Owner, "f", lambda self: "first")])
    second = PatchGroup("t_second", lambda: [(_Owner, "f", lambda self: "second")])
    patches.install([first, second])
    assert _Owner().f() == "second"
    patches.install([first])  # nested: already in place, so the outer layering stays
    assert _Owner().f() == "second"
    patches.uninstall()
    assert _Owner().f() == "second"
    patches.uninstall()
    assert _Owner().f() == "real"
    assert "t_first" not in patches._ACTIVE and "t_second" not in patches._ACTIVE


def test_a_trace_leaves_every_patched_attribute_as_it_was():
    before_t = dict(vars(hookgrad.Tensor))
    before_top = dict(vars(hookgrad))
    before_print = builtins.print

    def fn(x, n):
        y = hookgrad.relu(x) * n
        return y + hookgrad.randn(3)

    out = hookgrad.compile(fn, dynamic=True)(hookgrad.ones(3), 2)
    assert out.shape == (3,)
    assert {k: v for k, v in vars(hookgrad.Tensor).items() if before_t.get(k) is not v} == {}
    changed = {k for k, v in vars(hookgrad).items() if before_top.get(k) is not v}
    assert not changed - {"compile"}  # the package attribute may be rebound by import order
    assert builtins.print is before_print
