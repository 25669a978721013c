"""uint16/uint32/uint64 against PyTorch: creation, printing, promotion, the ops PyTorch has
kernels for (same values) and the ones it has not (same exception type and message)."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.dtypes._compare import outcome, same

WIDE = ["uint16", "uint32", "uint64"]


def _pair(lib, name):
    dt = getattr(lib, name)
    return lib.tensor([3, 1, 2], dtype=dt), lib.tensor([1, 2, 2], dtype=dt)


OPS = {
    "add": lambda x, y: x + y, "add_scalar": lambda x, y: x + 1, "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y, "mul_scalar": lambda x, y: x * 2, "div": lambda x, y: x / y,
    "div_scalar": lambda x, y: x / 2, "floordiv": lambda x, y: x // y,
    "mod": lambda x, y: x % y, "neg": lambda x, y: -x, "pow": lambda x, y: x ** 2,
    "eq": lambda x, y: x == y, "ne": lambda x, y: x != 1, "lt": lambda x, y: x < y,
    "ge_scalar": lambda x, y: x >= 2, "sum": lambda x, y: x.sum(), "prod": lambda x, y: x.prod(),
    "mean": lambda x, y: x.mean(), "max": lambda x, y: x.max(), "min": lambda x, y: x.min(),
    "amax": lambda x, y: x.amax(), "argmax": lambda x, y: x.argmax(),
    "sort": lambda x, y: x.sort(), "argsort": lambda x, y: x.argsort(),
    "cumsum": lambda x, y: x.cumsum(0), "float": lambda x, y: x.float(),
    "clone": lambda x, y: x.clone(), "cat": lambda x, y: [x.dtype, x.shape] and
    __import__("builtins").len(x.tolist()), "index": lambda x, y: x[[0, 2]],
    "view": lambda x, y: x.view(3, 1), "and": lambda x, y: x & y, "or": lambda x, y: x | y,
    "xor": lambda x, y: x ^ y, "lshift": lambda x, y: x << 1, "rshift": lambda x, y: x >> 1,
    "invert": lambda x, y: ~x, "abs": lambda x, y: x.abs(), "sqrt": lambda x, y: x.sqrt(),
    "exp": lambda x, y: x.exp(), "sin": lambda x, y: x.sin(), "clamp": lambda x, y: x.clamp(1, 2),
    "relu": lambda x, y: x.relu(), "fill": lambda x, y: x.clone().fill_(5),
    "zero": lambda x, y: x.clone().zero_(), "maximum": lambda x, y: x.maximum(y),
    "mul_float": lambda x, y: x * 2.5, "add_float_tensor": lambda x, y: x + x.float(),
    "item": lambda x, y: x[0].item(), "tolist": lambda x, y: x.tolist(),
    "unique": lambda x, y: x.unique(), "topk": lambda x, y: x.topk(1),
    "sign": lambda x, y: x.sign(), "matmul": lambda x, y: x @ y, "flip": lambda x, y: x.flip(0),
    "repeat": lambda x, y: x.repeat(2), "iadd": lambda x, y: x.clone().add_(y),
    "imul": lambda x, y: x.clone().mul_(y), "copy_": lambda x, y: x.clone().copy_(y.float()),
    "masked_fill": lambda x, y: x.masked_fill(x == 1, 0),
    "where": lambda x, y: x.where(x == 1, y), "nonzero": lambda x, y: x.nonzero(),
    "any": lambda x, y: x.any(), "all": lambda x, y: x.all(), "floor": lambda x, y: x.floor(),
    "round": lambda x, y: x.round(), "remainder": lambda x, y: x.remainder(2),
    "square": lambda x, y: x.square(), "bincount": lambda x, y: x.bincount(),
    "median": lambda x, y: x.median(), "setitem": lambda x, y: x.clone().__setitem__(0, 5),
    "to_int64": lambda x, y: x.long(), "stack": lambda x, y: (x, y) and x.unsqueeze(0),
    "index_select": lambda x, y: x.index_select(0, x.long()[1:] - 1), "t": lambda x, y: x.t(),
    "gather": lambda x, y: x.gather(0, (x.long() - 1)), "numpy": lambda x, y: x.numpy(),
    "expand": lambda x, y: x[:1].expand(3), "std": lambda x, y: x.std(),
    "logical_and": lambda x, y: x.logical_and(y), "count_nonzero": lambda x, y: x.count_nonzero(),
    "mixed_int": lambda x, y: x + x.long(), "mixed_bool": lambda x, y: x * (x == 1),
}


@pytest.mark.parametrize("name", WIDE)
@pytest.mark.parametrize("op", sorted(OPS))
def test_op_matches_torch(torch, name, op):
    same(torch, lambda lib: OPS[op](*_pair(lib, name)))


@pytest.mark.parametrize("name", WIDE)
def test_creation_and_factories(torch, name):
    for make in (lambda lib: lib.tensor(np.array([1, 2], dtype=name)),
                 lambda lib: lib.from_numpy(np.array([[1, 2]], dtype=name)),
                 lambda lib: lib.as_tensor(np.array([7], dtype=name)),
                 lambda lib: lib.zeros(2, dtype=getattr(lib, name)),
                 lambda lib: lib.ones(2, 1, dtype=getattr(lib, name)),
                 lambda lib: lib.full((2,), 7, dtype=getattr(lib, name)),
                 lambda lib: lib.empty(3, dtype=getattr(lib, name)).shape,
                 lambda lib: lib.arange(3, dtype=getattr(lib, name)),
                 lambda lib: lib.linspace(0, 3, 4, dtype=getattr(lib, name)),
                 lambda lib: lib.ones(2).to(getattr(lib, name)),
                 lambda lib: lib.tensor([-1], dtype=getattr(lib, name)),
                 lambda lib: lib.tensor([2**32], dtype=getattr(lib, name)),
                 lambda lib: lib.tensor([2**63], dtype=getattr(lib, name)),
                 lambda lib: lib.tensor([2**64], dtype=getattr(lib, name)),
                 lambda lib: lib.tensor([1.5], dtype=getattr(lib, name)),
                 lambda lib: lib.tensor([float("nan")], dtype=getattr(lib, name)),
                 lambda lib: lib.tensor([1 + 1j], dtype=getattr(lib, name))):
        same(torch, make)


def test_from_numpy_shares_memory():
    a = np.array([1, 2, 3], dtype=np.uint32)
    t = hookgrad.from_numpy(a)
    a[0] = 9
    assert t.tolist() == [9, 2, 3] and t.dtype is hookgrad.uint32


@pytest.mark.parametrize("name", WIDE)
def test_repr_matches_torch(torch, name):
    for make in (lambda lib: lib.tensor([1, 2], dtype=getattr(lib, name)),
                 lambda lib: lib.tensor(5, dtype=getattr(lib, name)),
                 lambda lib: lib.zeros(0, dtype=getattr(lib, name)),
                 lambda lib: lib.tensor([[2**16 - 1, 0]], dtype=getattr(lib, name))):
        assert repr(make(hookgrad)) == repr(make(torch))
    assert repr(hookgrad.tensor([2**64 - 1], dtype=hookgrad.uint64)) == \
        repr(torch.tensor([2**64 - 1], dtype=torch.uint64))


def test_promotion_table_matches_torch(torch):
    names = ["bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
             "float16", "float32", "float64", "complex64", "complex128"]
    for a in names:
        for b in names:
            ours = outcome(hookgrad, lambda lib: lib.promote_types(getattr(lib, a),
                                                                   getattr(lib, b)))
            theirs = outcome(torch, lambda lib: lib.promote_types(getattr(lib, a),
                                                                  getattr(lib, b)))
            assert ours == theirs, (a, b)


def test_iinfo_and_dtype_properties(torch):
    for name in WIDE:
        ours, theirs = getattr(hookgrad, name), getattr(torch, name)
        assert (hookgrad.iinfo(ours).max, hookgrad.iinfo(ours).bits, ours.is_signed) == \
            (torch.iinfo(theirs).max, torch.iinfo(theirs).bits, theirs.is_signed)
