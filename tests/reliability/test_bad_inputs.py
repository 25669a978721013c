"""The bad-input corpus (`_corpus`) and generated bad arguments, on PyTorch and on hookgrad.

What is compared is the exception *type* (what ported ``except RuntimeError`` code depends on).
Every disagreement must be listed in `DEPARTURES` with the reason; the corpus must agree in at
least 99% of cases and hookgrad must never accept what PyTorch rejects without a listed reason.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import hookgrad
from tests.conftest import load_torch
from tests.reliability._corpus import build, outcome

CASES = build()

# case name -> why hookgrad's exception type (or acceptance) differs from PyTorch 2.13's
DEPARTURES = {
    "take_along_dim(oob)": "PyTorch's CPU kernel does not bounds-check this index and reads "
    "past the tensor; hookgrad refuses (RuntimeError)",
}


@pytest.fixture(scope="module")
def T():
    """The oracle, once per module (hypothesis tests cannot take function-scoped fixtures)."""
    return load_torch()


@pytest.fixture(scope="module")
def results(T):
    torch = T
    return {name: (outcome(fn, torch), outcome(fn, hookgrad)) for name, fn in CASES}


def test_corpus_is_large_and_mostly_rejections(results):
    assert len(results) >= 1000
    rejected = sum(t != "ok" for t, _ in results.values())
    assert rejected >= 0.85 * len(results)


def test_corpus_exception_types_agree_with_torch(results):
    differ = {n: r for n, r in results.items() if r[0] != r[1]}
    undocumented = {n: r for n, r in differ.items() if n not in DEPARTURES}
    assert not undocumented, undocumented
    agreement = 1 - len(differ) / len(results)
    assert agreement >= 0.99, (agreement, differ)


def test_departures_are_still_departures(results):
    stale = [n for n in DEPARTURES if results[n][0] == results[n][1]]
    assert not stale, f"fixed: remove from DEPARTURES: {stale}"


def test_never_silently_accepts_what_torch_rejects(results):
    accepted = [n for n, (t, h) in results.items() if t != "ok" and h == "ok"]
    assert set(accepted) <= set(DEPARTURES), accepted


# ------------------------------------------------------------------ generated (hypothesis)
dims = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)
binary_ops = st.sampled_from(
    [
        "add",
        "sub",
        "mul",
        "div",
        "maximum",
        "eq",
        "lt",
        "atan2",
        "pow",
        "fmod",
        "logical_and",
        "where",
        "masked_fill",
        "add_",
        "mul_",
        "lerp",
    ]
)


def _binary(L, op, sa, sb):
    a = L.ones(sa) + 1
    b = L.ones(sb) + 2
    if op == "where":
        return L.where(a > 0, a, b)
    if op == "masked_fill":
        return a.masked_fill(b > 0, 0.0)
    if op == "lerp":
        return L.lerp(a, b, 0.5)
    if op.endswith("_"):
        return getattr(a, op)(b)
    return getattr(L, op)(a, b)


def _run(fn, lib):
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 - the type is compared
        return type(e).__name__, str(e)
    return "ok", tuple(out.shape)


@given(op=binary_ops, sa=dims, sb=dims)
def test_generated_broadcasts_match_torch_type_text_and_shape(T, op, sa, sb):
    torch = T
    ours = _run(lambda L: _binary(L, op, sa, sb), hookgrad)
    theirs = _run(lambda L: _binary(L, op, sa, sb), torch)
    assert ours[0] == theirs[0], (ours, theirs)
    if op in ("add", "mul", "sub", "div", "where", "maximum", "eq") and ours[0] != "ok":
        assert ours[1] == theirs[1]  # "The size of tensor a (3) must match ..."
    if ours[0] == "ok":
        assert ours[1] == theirs[1]


small = st.integers(-2, 3)


@given(
    stride=small,
    padding=small,
    dilation=small,
    groups=small,
    k=st.integers(0, 4),
    size=st.integers(1, 6),
)
def test_generated_conv_arguments_match_torch(T, stride, padding, dilation, groups, k, size):
    torch = T

    def call(L):
        x = L.ones(1, 2, size, size)
        w = L.ones(2, 2 // max(groups, 1) if groups in (1, 2) else 2, k, k)
        return L.nn.functional.conv2d(
            x, w, stride=stride, padding=padding, dilation=dilation, groups=groups
        )

    assert _run(call, hookgrad)[0] == _run(call, torch)[0]


@given(
    kernel=st.integers(-1, 4),
    stride=st.one_of(st.none(), small),
    padding=small,
    dilation=small,
    size=st.integers(1, 6),
    ceil=st.booleans(),
)
def test_generated_pool_arguments_match_torch(T, kernel, stride, padding, dilation, size, ceil):
    torch = T

    def call(L):
        return L.nn.functional.max_pool2d(
            L.ones(1, 1, size, size), kernel, stride, padding, dilation, ceil
        )

    assert _run(call, hookgrad) == _run(call, torch)


numbers = st.one_of(st.integers(-(2**64), 2**64), st.floats(allow_nan=True, allow_infinity=True))
int_dtypes = st.sampled_from(["int64", "int32", "int16", "int8", "uint8", "bool", "float32", None])


@given(values=st.lists(numbers, min_size=1, max_size=4), dtype=int_dtypes, nested=st.booleans())
def test_generated_tensor_values_match_torch(T, values, dtype, nested):
    torch = T
    data = [values] if nested else values

    def call(L):
        return L.tensor(data, dtype=None if dtype is None else getattr(L, dtype))

    ours, theirs = _run(call, hookgrad), _run(call, torch)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "ok" and (dtype is None or dtype == "int64"):
        got = hookgrad.tensor(data, dtype=None if dtype is None else getattr(hookgrad, dtype))
        want = torch.tensor(data, dtype=None if dtype is None else getattr(torch, dtype))
        assert got.dtype.name == str(want.dtype).replace("torch.", "")
        for a, b in zip(got.reshape(-1).tolist(), want.reshape(-1).tolist(), strict=True):
            assert a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))


# ------------------------------------------------------------------ the issue's examples
def test_issue_examples_match_torch(torch):
    def cases(L):
        return {
            "2**63": lambda: L.tensor([2**63]),
            "nan->int64": lambda: L.tensor([float("nan")], dtype=L.int64),
            "nan.to(int64)": lambda: L.tensor([float("nan")]).to(L.int64).tolist(),
            "Conv2d(1,1,0)": lambda: L.nn.Conv2d(1, 1, 0)(L.ones(1, 1, 4, 4)),
            "[[]] dtype": lambda: str(L.tensor([[]]).dtype),
            "dtype=float": lambda: str(L.tensor([1.5], dtype=float).dtype),
            "dtype=int": lambda: str(L.tensor([1.5], dtype=int).dtype),
            "dtype=bool": lambda: str(L.tensor([1.5], dtype=bool).dtype),
            "zeros dtype=float": lambda: str(L.zeros(2, dtype=float).dtype),
            "mse f32,i64": lambda: str(
                L.nn.functional.mse_loss(L.ones(3), L.zeros(3, dtype=L.int64)).dtype
            ),
            "relu('a')": lambda: L.nn.functional.relu("a"),
            "stride=0": lambda: L.nn.functional.conv2d(
                L.ones(1, 1, 4, 4), L.ones(1, 1, 2, 2), stride=0
            ),
            "padding=-1": lambda: L.nn.functional.conv2d(
                L.ones(1, 1, 4, 4), L.ones(1, 1, 2, 2), padding=-1
            ),
            "index_select oob": lambda: L.ones(3).index_select(0, L.tensor([5])),
            "zeros(10**20)": lambda: L.zeros(10**20),
            "to(5)": lambda: L.ones(2).to(5),
            "batch_norm": lambda: L.nn.functional.batch_norm(L.ones(2, 3), L.zeros(2), L.ones(2)),
        }

    deep: list = [1]
    for _ in range(2000):
        deep = [deep]
    for lib in (hookgrad, torch):
        with pytest.raises(ValueError, match="too many dimensions"):
            lib.tensor(deep)
    ours, theirs = cases(hookgrad), cases(torch)
    for name in ours:
        o, t = _run_value(ours[name]), _run_value(theirs[name])
        assert o[0] == t[0], (name, o, t)
        if o[0] == "ok" or name in ("Conv2d(1,1,0)", "stride=0", "padding=-1", "batch_norm"):
            assert o[1] == t[1], (name, o, t)


def _run_value(fn):
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return "ok", out if not hasattr(out, "shape") else tuple(out.shape)


def test_shape_mismatch_text_and_state_unchanged(torch):
    for lib in (torch, hookgrad):
        a, b = lib.ones(2, 3), lib.ones(2, 2)
        with pytest.raises(
            RuntimeError,
            match=r"The size of tensor a \(3\) must match the size "
            r"of tensor b \(2\) at non-singleton dimension 1",
        ):
            a + b
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            lib.ones(3).add_(lib.ones(2, 3))
        x = lib.ones(3)
        v = x._version
        with pytest.raises(RuntimeError):
            x.mul_(lib.ones(2, 3))
        assert x._version == v and x.tolist() == [1.0, 1.0, 1.0]
