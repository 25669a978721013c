"""Tensors created inside a compiled region (spec compile.md §3.1, §5.3).

A random factory (``randn``, ``rand_like``, ``dropout``...) is one op, as in PyTorch, and draws
fresh numbers on every call, in the same order and from the same generator as the eager call
(PyTorch's generator differs from hookgrad's, so values are compared with hookgrad's own eager
run and counts with PyTorch). A deterministic factory with constant arguments (``ones(3)``,
``tensor([...])``) is folded into a static graph as a constant, so the backends can fold it:
a custom backend's fx graph still shows the factory call, as PyTorch's does (the same op
count); ``tensor([...])`` stays a constant there (one op fewer); in a dynamic trace it is a node.
"""

from __future__ import annotations

from typing import Any

import pytest

import hookgrad
from tests.compile._libs import both, dynamo, plain

pytestmark = pytest.mark.filterwarnings("ignore:The .grad attribute:UserWarning:torch.*")

CASES = {
    "ones": lambda lib, x: lib.ones(3) + x,
    "randn": lambda lib, x: lib.randn(3) + x,
    "tensor": lambda lib, x: lib.tensor([1.0, 2.0, 3.0]) + x,
    "zeros_like": lambda lib, x: lib.zeros_like(x) + x,
    "arange": lambda lib, x: lib.arange(3) + x,
    "full": lambda lib, x: lib.full((3,), 2.0) * x,
    "rand_like": lambda lib, x: lib.rand_like(x) * 0 + x,
    "eye": lambda lib, x: lib.eye(3) @ x,
    "empty_uniform": lambda lib, x: lib.empty(3).uniform_() + x,
    "dropout": lambda lib, x: lib.nn.functional.dropout(x, 0.5, training=True),
}


def _run(lib: Any, name: str) -> dict:
    case = CASES[name]
    cnt = dynamo(lib).testing.CompileCounter()
    opt = lib.compile(lambda x: case(lib, x), backend=cnt)
    x = lib.ones(3)
    lib.manual_seed(0)
    compiled = [plain(opt(x)) for _ in range(3)]
    lib.manual_seed(0)
    eager = [plain(case(lib, x)) for _ in range(3)]
    return {"fc": cnt.frame_count, "oc": cnt.op_count, "same_as_eager": compiled == eager,
            "fresh_each_call": compiled[0] != compiled[1]}


BAKED = ("tensor",)


@pytest.mark.parametrize("name", sorted(CASES))
def test_factory_counts_and_randomness_match(torch, name):
    ref, got = _run(torch, name), _run(hookgrad, name)
    if name in BAKED:  # a constant in the fx graph too
        assert got.pop("oc") == ref.pop("oc") - 1  # (a constant there, an op in PyTorch's)
    assert got == ref
    assert got["same_as_eager"] and got["fc"] == 1
    assert got["fresh_each_call"] == (name in ("randn", "dropout", "empty_uniform"))


def test_dropout_module_training_step_matches_eager():
    net = hookgrad.nn.Sequential(hookgrad.nn.Linear(4, 4), hookgrad.nn.Dropout(0.5))
    cnt = hookgrad._dynamo.testing.CompileCounter()
    opt = hookgrad.compile(net, backend=cnt)
    x = hookgrad.ones(2, 4)
    grads = []
    for run in (opt, net):
        hookgrad.manual_seed(1)
        for _ in range(2):
            run(x).sum().backward()
        grads.append(plain(net[0].weight.grad))
        net.zero_grad()
    assert grads[0] == grads[1] and cnt.frame_count == 1


def test_seeding_inside_the_region_is_replayed(torch):
    """``manual_seed`` in the region is a node (PyTorch compiles it too): every call reseeds, so
    the draws after it repeat, whatever the generator did between calls."""
    def scenario(lib: Any) -> dict:
        cnt = dynamo(lib).testing.CompileCounter()

        def fn(x: Any) -> Any:
            lib.manual_seed(0)
            return x + lib.randn(3)
        opt = lib.compile(fn, backend=cnt)
        first = plain(opt(lib.zeros(3)))
        lib.randn(5)  # move the generator on between calls
        same = [plain(opt(lib.zeros(3))) == first for _ in range(2)]
        return {"same": same, "fc": cnt.frame_count}
    ref, got = both(torch, scenario)
    assert got == ref == {"same": [True, True], "fc": 1}


@pytest.mark.filterwarnings("ignore:Dynamo does not know how to trace:UserWarning")
def test_python_randomness_in_the_region_is_not_baked(torch):
    """``random.random()`` draws anew on every call, in eager's sequence (PyTorch: 2 frames
    around it; hookgrad: a graph break, the call runs eagerly, spec §3.1)."""
    import random

    def scenario(lib: Any) -> dict:
        def fn(x: Any) -> Any:
            return x * random.random()
        opt = lib.compile(fn, backend="eager")
        random.seed(0)
        compiled = [plain(opt(lib.ones(1))) for _ in range(3)]
        random.seed(0)
        eager = [plain(fn(lib.ones(1))) for _ in range(3)]
        return {"same": compiled == eager, "distinct": len({c[0] for c in compiled})}
    ref, got = both(torch, scenario)
    assert got == ref == {"same": True, "distinct": 3}
