"""dtypes, type promotion, default dtype, finfo/iinfo and Size, against PyTorch."""

from __future__ import annotations

import copy
import itertools
import pickle

import pytest

import hookgrad

NAMES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]
ALIASES = ["float", "double", "half", "long", "int", "short", "bool"]


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as exc:  # noqa: BLE001 - comparing exception types with the oracle
        return (type(exc).__name__, str(exc))


def test_dtype_reprs_aliases_and_properties():
    for name in NAMES:
        d = getattr(hookgrad, name)
        assert repr(d) == str(d) == f"torch.{name}"
        assert d.to_real() is d
    assert hookgrad.float is hookgrad.float32 and hookgrad.long is hookgrad.int64


@pytest.mark.oracle
def test_dtype_properties_match_torch(torch):
    for name in NAMES:
        h, t = getattr(hookgrad, name), getattr(torch, name)
        for attr in ("is_floating_point", "is_complex", "is_signed", "itemsize"):
            assert getattr(h, attr) == getattr(t, attr), (name, attr)
    for alias in ALIASES:
        assert repr(getattr(hookgrad, alias)) == repr(getattr(torch, alias))


def test_dtype_pickle_and_copy_preserve_identity():
    for name in NAMES:
        d = getattr(hookgrad, name)
        assert pickle.loads(pickle.dumps(d)) is d
        assert copy.deepcopy(d) is d


@pytest.mark.oracle
def test_promote_types_all_pairs_match_torch(torch):
    for a, b in itertools.product(NAMES, repeat=2):
        got = hookgrad.promote_types(getattr(hookgrad, a), getattr(hookgrad, b))
        assert repr(got) == repr(torch.promote_types(getattr(torch, a), getattr(torch, b)))


@pytest.mark.oracle
def test_can_cast_all_pairs_match_torch(torch):
    for a, b in itertools.product(NAMES, repeat=2):
        got = hookgrad.can_cast(getattr(hookgrad, a), getattr(hookgrad, b))
        assert got == torch.can_cast(getattr(torch, a), getattr(torch, b)), (a, b)


def _operands(lib):
    ops = []
    for name in NAMES:
        d = getattr(lib, name)
        ops.append(lib.ones(2, dtype=d))
        ops.append(lib.ones((), dtype=d))
    return ops + [True, 2, 2.5]


@pytest.mark.oracle
@pytest.mark.parametrize("default", ["float32", "float64"])
def test_result_type_three_tiers_match_torch(torch, default):
    hookgrad.set_default_dtype(getattr(hookgrad, default))
    torch.set_default_dtype(getattr(torch, default))
    ours, theirs = _operands(hookgrad), _operands(torch)
    for i, j in itertools.product(range(len(ours)), repeat=2):
        if not (isinstance(ours[i], hookgrad.Tensor) or isinstance(ours[j], hookgrad.Tensor)):
            continue
        got = hookgrad.result_type(ours[i], ours[j])
        assert repr(got) == repr(torch.result_type(theirs[i], theirs[j])), (i, j)


@pytest.mark.oracle
def test_default_dtype_switch_matches_torch(torch):
    for name in ("float64", "float16", "float32"):
        hookgrad.set_default_dtype(getattr(hookgrad, name))
        torch.set_default_dtype(getattr(torch, name))
        for make in (lambda lib: lib.tensor([1.0]), lambda lib: lib.tensor(1),
                     lambda lib: lib.zeros(2), lambda lib: lib.arange(3.0),
                     lambda lib: lib.full((1,), 2.5), lambda lib: lib.rand(2),
                     lambda lib: lib.tensor([1, 2.0]), lambda lib: lib.linspace(0, 1, 3)):
            assert repr(make(hookgrad).dtype) == repr(make(torch).dtype)
        assert repr(hookgrad.get_default_dtype()) == repr(torch.get_default_dtype())
    bad_ours = _outcome(lambda: hookgrad.set_default_dtype(hookgrad.int64))
    assert bad_ours == _outcome(lambda: torch.set_default_dtype(torch.int64))


@pytest.mark.oracle
def test_is_floating_point_and_legacy_type_names_match_torch(torch):
    for name in NAMES:
        h, t = hookgrad.ones(2, dtype=getattr(hookgrad, name)), torch.ones(
            2, dtype=getattr(torch, name))
        assert h.is_floating_point() == t.is_floating_point() == hookgrad.is_floating_point(h)
        assert h.type() == t.type()
        assert repr(h.type(h.type())) == repr(t.type(t.type()))
    for target in ("torch.DoubleTensor", "torch.IntTensor", "torch.BoolTensor"):
        assert repr(hookgrad.ones(2).type(target)) == repr(torch.ones(2).type(target))
    for bad in ("float", float):
        assert _outcome(lambda b=bad: hookgrad.ones(2).type(b)) == _outcome(
            lambda b=bad: torch.ones(2).type(b))


@pytest.mark.oracle
def test_to_dtype_matches_torch(torch):
    values = [1.7, -2.5, 0.0, 300.25]
    for src, dst in itertools.product(["float32", "float64", "float16", "int64"], NAMES):
        h = hookgrad.tensor(values, dtype=getattr(hookgrad, src)).to(getattr(hookgrad, dst))
        t = torch.tensor(values, dtype=getattr(torch, src)).to(getattr(torch, dst))
        if dst in ("uint8", "int8") and src != "int64":
            continue  # out-of-range float -> small int casts are undefined behaviour in C++
        assert repr(h) == repr(t)


@pytest.mark.oracle
@pytest.mark.parametrize("name", NAMES)
def test_finfo_iinfo_match_torch(torch, name):
    h, t = getattr(hookgrad, name), getattr(torch, name)
    for cls in ("finfo", "iinfo"):
        ours = _outcome(lambda c=cls: getattr(hookgrad, c)(h))
        theirs = _outcome(lambda c=cls: getattr(torch, c)(t))
        assert ours[0] == theirs[0]
        if ours[0] == "ok":
            assert repr(ours[1]) == repr(theirs[1])
            fields = ["bits", "max", "min", "dtype"]
            if cls == "finfo":
                fields += ["eps", "tiny", "smallest_normal", "resolution"]
            for f in fields:
                assert getattr(ours[1], f) == getattr(theirs[1], f), f
        else:
            assert ours == theirs


@pytest.mark.oracle
def test_finfo_default_matches_torch(torch):
    assert repr(hookgrad.finfo()) == repr(torch.finfo())


@pytest.mark.oracle
def test_size_behaves_like_torch_size(torch):
    for lib in (hookgrad, torch):
        s = lib.Size([2, 3])
        assert type(s + (4,)) is lib.Size and type((1,) + s) is lib.Size
        assert type(s[1:]) is lib.Size and type(s * 2) is lib.Size
        assert s == (2, 3) and hash(s) == hash((2, 3)) and s.numel() == 6
        assert type(pickle.loads(pickle.dumps(s))) is lib.Size
    assert repr(hookgrad.Size([2, 3])[1:]) == repr(torch.Size([2, 3])[1:])
    assert repr(hookgrad.Size([])) == repr(torch.Size([]))
    assert repr(hookgrad.Size([hookgrad.tensor(2)])) == repr(torch.Size([torch.tensor(2)]))
    assert _outcome(lambda: hookgrad.Size([2.0])) == _outcome(lambda: torch.Size([2.0]))
    assert repr(hookgrad.ones(2, 3).shape) == repr(torch.ones(2, 3).shape)
