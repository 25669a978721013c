"""Constants read from pre-existing objects are guarded (spec compile.md §6.1, §14.2).

The tracer executes the user's code, so ``x * cfg.scale`` bakes the number into the graph; the
guards must then see a change of ``cfg.scale`` (instance or class attribute) and recompile, as
PyTorch 2.13 does (NOTE [Attribute reads] in hookgrad/compile/effects/attr_reads.py).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import hookgrad
from tests.compile._libs import both, dynamo, plain

pytestmark = pytest.mark.filterwarnings("ignore:The .grad attribute:UserWarning:torch.*")


class Cfg:
    scale = 2


GLOBAL_CFG = Cfg()
GLOBAL_CFG.offset = 1


def _uses_attrs(x: Any, c: Any) -> Any:
    return x * c.scale + c.offset + GLOBAL_CFG.offset


def test_attribute_changes_recompile(torch):
    def scenario(lib: Any) -> list:
        cnt = dynamo(lib).testing.CompileCounter()
        opt = lib.compile(_uses_attrs, backend=cnt)
        c = Cfg()
        c.offset = 5
        out = []

        def call() -> None:
            out.append((plain(opt(lib.ones(2), c)), cnt.frame_count))
        try:
            call()
            c.offset = 6  # instance attribute
            call()
            GLOBAL_CFG.offset = 10  # attribute of a global object
            call()
            Cfg.scale = 3  # class attribute read through the instance
            call()
            c.scale = 4  # now shadowed by the instance
            call()
            other = Cfg()
            other.offset, other.scale = 6, 4
            out.append((plain(opt(lib.ones(2), other)), cnt.frame_count))  # same values: hit
        finally:
            Cfg.scale, GLOBAL_CFG.offset = 2, 1
        return out
    ref, got = both(torch, scenario)
    assert got == ref
    assert [fc for _v, fc in got] == [1, 2, 3, 4, 5, 5]


def test_closure_object_attribute(torch):
    def scenario(lib: Any) -> list:
        class Holder:
            pass
        holder = Holder()
        holder.k = 2
        cnt = dynamo(lib).testing.CompileCounter()
        opt = lib.compile(lambda x: x * holder.k, backend=cnt)
        out = [(plain(opt(lib.ones(1))), cnt.frame_count)]
        holder.k = 3
        out.append((plain(opt(lib.ones(1))), cnt.frame_count))
        out.append((plain(opt(lib.ones(1))), cnt.frame_count))
        return out
    ref, got = both(torch, scenario)
    assert got == ref == [([2.0], 1), ([3.0], 2), ([3.0], 2)]


def test_module_constant_attribute(torch):
    def scenario(lib: Any) -> list:
        act = lib.nn.LeakyReLU(0.1)
        cnt = dynamo(lib).testing.CompileCounter()
        opt = lib.compile(act, backend=cnt)
        x = lib.tensor([-1.0, 2.0])
        out = [(plain(opt(x)), cnt.frame_count)]
        act.negative_slope = 0.5
        out.append((plain(opt(x)), cnt.frame_count))
        return out
    ref, got = both(torch, scenario)
    assert got == ref and got[1] == ([-0.5, 2.0], 2)


@dataclasses.dataclass(frozen=True)
class Frozen:
    factor: float


def test_frozen_dataclass_argument(torch):
    def scenario(lib: Any) -> list:
        cnt = dynamo(lib).testing.CompileCounter()
        opt = lib.compile(lambda x, f: x * f.factor, backend=cnt)
        out = [(plain(opt(lib.ones(1), Frozen(f))), cnt.frame_count) for f in (2.0, 2.0, 3.0)]
        return out
    ref, got = both(torch, scenario)
    assert got == ref == [([2.0], 1), ([2.0], 1), ([3.0], 2)]


def test_class_is_restored_after_the_trace():
    c = Cfg()
    c.offset = 1
    opt = hookgrad.compile(_uses_attrs, backend="eager")
    opt(hookgrad.ones(1), c)
    assert type(c) is Cfg and type(GLOBAL_CFG) is Cfg


def test_class_is_restored_after_a_failed_fullgraph_trace():
    c = Cfg()
    c.offset = 1

    def fn(x: Any, c: Any) -> Any:
        return x * c.scale if (x.sum() > 0) else x
    opt = hookgrad.compile(fn, backend="eager", fullgraph=True)
    with pytest.raises(hookgrad._dynamo.exc.Unsupported):
        opt(hookgrad.ones(1), c)
    assert type(c) is Cfg


CONFIG = {"scale": 2, "unused": 5}
SIZES = [1, 2]
CALLS: list = []


def _uses_containers(x: Any) -> Any:
    CALLS.append(1)
    return x * CONFIG["scale"] * len(SIZES)


def test_global_containers_are_guarded(torch):
    """A global dict item or list length read by the region: changing it recompiles (PyTorch
    guards these containers whole: changing the unused key recompiles on both)."""
    def scenario(lib: Any) -> list:
        cnt = dynamo(lib).testing.CompileCounter()
        opt = lib.compile(_uses_containers, backend=cnt)
        out = []
        try:
            out.append((plain(opt(lib.ones(1))), cnt.frame_count))
            CONFIG["scale"] = 3
            out.append((plain(opt(lib.ones(1))), cnt.frame_count))
            SIZES.append(3)
            out.append((plain(opt(lib.ones(1))), cnt.frame_count))
            CONFIG["unused"] = 6
            out.append((plain(opt(lib.ones(1))), cnt.frame_count))
            out.append((plain(opt(lib.ones(1))), cnt.frame_count, len(CALLS)))
        finally:
            CONFIG.update(scale=2, unused=5)
            del SIZES[2:]
            CALLS.clear()
        return out
    ref, got = both(torch, scenario)
    assert [row[0] for row in got] == [row[0] for row in ref] == [[4.0], [6.0], [9.0], [9.0],
                                                                  [9.0]]
    assert [row[1] for row in got] == [1, 2, 3, 4, 4] and got[4][2] == ref[4][2] == 5
    # PyTorch also guards the length of `CALLS`, which the region appends to, and recompiles on
    # every call (frames 1..5); hookgrad replays the append and leaves it unguarded (D)
    assert [row[1] for row in ref] == [1, 2, 3, 4, 5]


@dataclasses.dataclass
class Point:
    k: float


def test_tracked_objects_keep_their_class_for_the_user():
    """While reads are noted, ``obj.__class__``, equality and copies see the user's class."""
    import copy

    def fn(x: Any, p: Any) -> Any:
        q = copy.copy(p)
        assert q == p and p.__class__ is Point and q.__class__ is Point
        return x * q.k
    opt = hookgrad.compile(fn, backend="eager")
    p = Point(2.0)
    assert plain(opt(hookgrad.ones(1), p)) == [2.0]
    assert type(p) is Point
    assert plain(opt(hookgrad.ones(1), Point(3.0))) == [3.0]


def test_enum_numpy_scalar_and_object_type_arguments_are_guarded(torch):
    """Values that are neither tensors nor plain constants: an enum member (identity), a NumPy
    scalar (value; PyTorch makes it a graph input instead: 1 frame where hookgrad takes 2) and a
    user object (its type)."""
    import enum

    import numpy as np

    class Mode(enum.Enum):
        A = 1
        B = 2

    class Other(Cfg):
        scale = 2

    def scenario(lib: Any) -> dict:
        by_mode = lib.compile(lambda x, m: x * (2 if m is Mode.A else 3), backend="eager")
        by_np = lib.compile(lambda x, s: x * s, backend="eager")
        cnt = dynamo(lib).testing.CompileCounter()
        by_type = lib.compile(lambda x, c: x * (5 if type(c) is Cfg else 7), backend=cnt)
        c, o = Cfg(), Other()
        return {"mode": [plain(by_mode(lib.ones(1), m)) for m in (Mode.A, Mode.B, Mode.A)],
                "np": [plain(by_np(lib.ones(1), np.float32(v))) for v in (2.0, 3.0)],
                "type": [plain(by_type(lib.ones(1), v)) for v in (c, o, c)],
                "type_fc": cnt.frame_count}
    ref, got = both(torch, scenario)
    assert got == ref
    assert got["mode"] == [[2.0], [3.0], [2.0]] and got["np"] == [[2.0], [3.0]]


def test_simple_namespace_attributes_are_guarded():
    """A C class cannot report reads: every constant attribute of its instances is guarded."""
    import types
    a, b = types.SimpleNamespace(k=2), types.SimpleNamespace(k=5)
    opt = hookgrad.compile(lambda x: x * a.k + b.k, backend="eager")
    assert plain(opt(hookgrad.ones(1))) == [7.0]
    b.k = 3
    assert plain(opt(hookgrad.ones(1))) == [5.0]
