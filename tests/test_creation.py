"""Factories (``tensor``, ``zeros``, ``arange``...), ``Tensor.new_*`` and NumPy interop."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn()
        return ("ok", repr(out) if not isinstance(out, np.ndarray) else out.tolist())
    except Exception as exc:  # noqa: BLE001 - comparing exception types with the oracle
        return (type(exc).__name__, str(exc))


def _same(torch, scenario, message=True):
    ours, theirs = _outcome(lambda: scenario(hookgrad, np)), _outcome(
        lambda: scenario(torch, np))
    if message:
        assert ours == theirs
    else:
        assert ours[0] == theirs[0], (ours, theirs)


TENSOR_CASES = [
    lambda L, np: L.tensor([1, 2.5]),
    lambda L, np: L.tensor([True, 2]),
    lambda L, np: L.tensor([True, 2.5]),
    lambda L, np: L.tensor([[1, 2], [3]]),
    lambda L, np: L.tensor([[1], []]),
    lambda L, np: L.tensor([[1, 2], 3]),
    lambda L, np: L.tensor([]),
    lambda L, np: L.tensor([[]]).shape,
    lambda L, np: L.tensor([[], []]).shape,
    lambda L, np: L.tensor(np.float32(1.5)),
    lambda L, np: L.tensor(np.int32(1)),
    lambda L, np: L.tensor([np.float32(1.5), 2]),
    lambda L, np: L.tensor([np.int32(1), np.int32(2)]),
    lambda L, np: L.tensor([np.float64(1.5)]),
    lambda L, np: L.tensor([np.int16(1), np.uint8(3)]),
    lambda L, np: L.tensor(np.array([1, 2], dtype=np.int32)),
    lambda L, np: L.tensor(np.array([[True], [False]])),
    lambda L, np: L.tensor("a"),
    lambda L, np: L.tensor(None),
    lambda L, np: L.tensor([None]),
    lambda L, np: L.tensor([L.tensor(1.0), L.tensor(2.0)]),
    lambda L, np: L.tensor([L.tensor([1.0]), L.tensor([2.0])]),
    lambda L, np: L.tensor([L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0])]),
    lambda L, np: L.tensor([[L.tensor([1.0])]]),
    lambda L, np: L.tensor([L.tensor([[1.0]])]),
    lambda L, np: L.tensor([L.tensor(1.0), L.tensor([2.0])]),
    lambda L, np: L.tensor([np.array([1.0])]),
    lambda L, np: L.tensor([L.tensor(1, dtype=L.int32), 2.5]),
    lambda L, np: L.tensor([L.tensor(1, dtype=L.int32), L.tensor(1, dtype=L.int32)]),
    lambda L, np: L.tensor([L.tensor(1.0, dtype=L.float64)]),
    lambda L, np: L.tensor(L.tensor([1.0], requires_grad=True)),
    lambda L, np: L.tensor([1, 2], requires_grad=True),
    lambda L, np: L.tensor([1.0, 2], requires_grad=True),
    lambda L, np: L.tensor(2**63),
    lambda L, np: L.tensor([-(2**63)]),
    lambda L, np: L.tensor([2**63], dtype=L.float32),
    lambda L, np: L.tensor(1e300, dtype=L.float32),
    lambda L, np: L.tensor(3.7, dtype=L.int64),
    lambda L, np: L.tensor(-3.7, dtype=L.uint8),
    lambda L, np: L.tensor([300], dtype=L.uint8),
    lambda L, np: L.tensor([-1], dtype=L.uint8),
    lambda L, np: L.tensor([1e10], dtype=L.int32),
    lambda L, np: L.tensor([1.5], dtype=L.bool),
    lambda L, np: L.tensor((1, 2)),
    lambda L, np: L.tensor(range(3)),
    lambda L, np: L.tensor([range(2), range(2)]),
    lambda L, np: L.tensor(np.float32(1.5), dtype=L.float64),
    lambda L, np: L.tensor(np.array([1.0, 2.0])[::-1].copy()),
    lambda L, np: L.tensor([[1.0, 2.0]], dtype=L.float16),
]


@pytest.mark.oracle
@pytest.mark.parametrize("case", range(len(TENSOR_CASES)))
def test_tensor_constructor_matches_torch(torch, case):
    _same(torch, TENSOR_CASES[case])


@pytest.mark.oracle
def test_tensor_constructor_warns_on_tensor_input(torch):
    with pytest.warns(UserWarning, match="To copy construct from a tensor") as ours:
        hookgrad.tensor(hookgrad.ones(2))
    with pytest.warns(UserWarning) as theirs:
        torch.tensor(torch.ones(2))
    assert str(ours[0].message) == str(theirs[0].message)
    with pytest.warns(UserWarning, match="new_tensor"):
        hookgrad.ones(2).new_tensor(hookgrad.ones(1))


def test_tensor_copies_its_input():
    src = np.array([1.0, 2.0])
    t = hookgrad.tensor(src)
    src[0] = 9
    assert t.tolist() == [1.0, 2.0]
    base = hookgrad.ones(2, requires_grad=True)
    with pytest.warns(UserWarning):
        copy = hookgrad.tensor(base)
    assert not copy.requires_grad and copy.grad_fn is None
    copy.add_(1) if hasattr(copy, "add_") else None
    assert base.tolist() == [1.0, 1.0]


FACTORY_CASES = [
    lambda L, np: L.zeros(2, 3),
    lambda L, np: L.zeros((2, 3)),
    lambda L, np: L.zeros([2, 3]),
    lambda L, np: L.zeros(L.Size([2, 3])),
    lambda L, np: L.zeros(np.int64(2)),
    lambda L, np: L.zeros(L.tensor(2)),
    lambda L, np: L.zeros(size=(2,)),
    lambda L, np: L.zeros(()),
    lambda L, np: L.zeros(2, -3),
    lambda L, np: L.ones(2, -3),
    lambda L, np: L.empty(2, -3),
    lambda L, np: L.full((2, -3), 1.0),
    lambda L, np: L.zeros(2.5),
    lambda L, np: L.zeros((2.5,)),
    lambda L, np: L.zeros("a"),
    lambda L, np: L.zeros(None),
    lambda L, np: L.zeros(2, 3.0),
    lambda L, np: L.zeros(2, dtype=L.int64, requires_grad=True),
    lambda L, np: L.ones(2, dtype=L.float64, requires_grad=True),
    lambda L, np: L.empty(2, 3, dtype=L.int16).shape,
    lambda L, np: L.full((2,), 1),
    lambda L, np: L.full((2,), True),
    lambda L, np: L.full((2,), 1.5),
    lambda L, np: L.full((2,), np.float32(1.5)),
    lambda L, np: L.full((2,), np.int32(1)),
    lambda L, np: L.full((2,), L.tensor(1.5)),
    lambda L, np: L.full((2,), L.tensor([1.5])),
    lambda L, np: L.full((2,), L.tensor(1, dtype=L.int32)),
    lambda L, np: L.full((2,), L.tensor(True)),
    lambda L, np: L.full((2,), -300, dtype=L.uint8),
    lambda L, np: L.full((2,), 1.5, dtype=L.bool),
    lambda L, np: L.zeros(-1),
    lambda L, np: L.zeros((2, -1)),
    lambda L, np: L.full((2,), None),
    lambda L, np: L.full(2, 1.5),
    lambda L, np: L.full([2, 3], 1.5).shape,
    lambda L, np: L.full((2,), 1.5, dtype=L.int64),
    lambda L, np: L.full((2,), -1, dtype=L.uint8),
    lambda L, np: L.full((2,), 2**63),
    lambda L, np: L.zeros_like(L.ones(2, dtype=L.int32)),
    lambda L, np: L.zeros_like(L.ones(2, requires_grad=True)),
    lambda L, np: L.zeros_like(L.ones(2), requires_grad=True),
    lambda L, np: L.ones_like(L.ones(2), dtype=L.int64),
    lambda L, np: L.full_like(L.ones(2, dtype=L.int64), 2.7),
    lambda L, np: L.full_like(L.ones(2), 2),
    lambda L, np: L.full_like(L.ones(2), 2, dtype=L.int64, requires_grad=True),
    lambda L, np: L.empty_like(L.ones(2, 3)).shape,
    lambda L, np: L.zeros_like([1, 2]),
    lambda L, np: L.scalar_tensor(1),
    lambda L, np: L.scalar_tensor(True),
    lambda L, np: L.eye(2, 3),
    lambda L, np: L.eye(3, dtype=L.int64),
    lambda L, np: L.eye(2, 3, dtype=L.bool),
    lambda L, np: L.eye(0),
    lambda L, np: L.eye(-1),
    lambda L, np: L.eye(2, -1),
    lambda L, np: L.eye(2.5),
]


@pytest.mark.oracle
@pytest.mark.parametrize("case", range(len(FACTORY_CASES)))
def test_factories_match_torch(torch, case):
    _same(torch, FACTORY_CASES[case])


RANGE_CASES = [
    lambda L, np: L.arange(5),
    lambda L, np: L.arange(5.0),
    lambda L, np: L.arange(0, 1, 0.1),
    lambda L, np: L.arange(1, 2.5, 0.5),
    lambda L, np: L.arange(0, 10, 3),
    lambda L, np: L.arange(10, 0, -3),
    lambda L, np: L.arange(0, 10, -1),
    lambda L, np: L.arange(0, 10, 0),
    lambda L, np: L.arange(3, 3),
    lambda L, np: L.arange(0, 1, 0.1, dtype=L.int64),
    lambda L, np: L.arange(0.5, 3, dtype=L.int64),
    lambda L, np: L.arange(0.5, 3.7, 0.9, dtype=L.int32),
    lambda L, np: L.arange(np.int32(5)),
    lambda L, np: L.arange(L.tensor(5)),
    lambda L, np: L.arange(L.tensor(5.0)),
    lambda L, np: L.arange(L.tensor([5])),
    lambda L, np: L.arange(-1.0, 1.0, 0.3, dtype=L.float64),
    lambda L, np: L.arange(0, 5, 1.0).dtype,
    lambda L, np: L.arange(True),
    lambda L, np: L.arange(0, 5, dtype=L.bool),
    lambda L, np: L.arange(5, requires_grad=True),
    lambda L, np: L.arange(5.0, requires_grad=True),
    lambda L, np: L.arange(float("inf")),
    lambda L, np: L.arange(-3.3, 40.1, 0.7, dtype=L.float16),
    lambda L, np: L.arange(0, 100, 0.37).tolist(),
    lambda L, np: L.arange(1e6, 1e6 + 3000, 0.1, dtype=L.float64).tolist()[-5:],
    lambda L, np: L.linspace(0, 1, 5),
    lambda L, np: L.linspace(-1, 1, 7),
    lambda L, np: L.linspace(0, 10, 5, dtype=L.int64),
    lambda L, np: L.linspace(-2.5, 10.7, 5, dtype=L.int64),
    lambda L, np: L.linspace(0, 1, 0),
    lambda L, np: L.linspace(0, 1, 1),
    lambda L, np: L.linspace(0, 1, -1),
    lambda L, np: L.linspace(L.tensor(0.0), L.tensor(1.0), 3),
    lambda L, np: L.linspace(0, 1, 3, requires_grad=True),
    lambda L, np: L.linspace(0, 10, 5, dtype=L.bool),
    lambda L, np: L.linspace(0, 300, 5, dtype=L.uint8),
    lambda L, np: L.linspace(-7.3, 1e4, 333, dtype=L.float16).tolist(),
    lambda L, np: L.linspace(3.1, -17.9, 1001, dtype=L.float64).tolist(),
]


@pytest.mark.oracle
@pytest.mark.parametrize("case", range(len(RANGE_CASES)))
def test_ranges_match_torch(torch, case):
    _same(torch, RANGE_CASES[case])


@pytest.mark.oracle
def test_ranges_bit_exact_on_random_arguments(torch):
    rng = np.random.default_rng(7)
    for _ in range(60):
        start, step = float(rng.normal() * 10), float(abs(rng.normal()) + 0.01)
        end = start + step * int(rng.integers(1, 400))
        lo, hi, n = float(rng.normal() * 10), float(rng.normal() * 10), int(rng.integers(0, 400))
        for name in ("float32", "float64", "float16", "int64", "int32"):
            scale = 1 if name.startswith("float") else 3  # integral steps must not truncate to 0
            args = (start, end * scale, step * scale)
            ours = _outcome(lambda a=args, n=name: hookgrad.arange(
                *a, dtype=getattr(hookgrad, n)).numpy())
            theirs = _outcome(lambda a=args, n=name: torch.arange(
                *a, dtype=getattr(torch, n)).numpy())
            assert ours == theirs
            a = hookgrad.linspace(lo, hi, n, dtype=getattr(hookgrad, name)).numpy()
            b = torch.linspace(lo, hi, n, dtype=getattr(torch, name)).numpy()
            np.testing.assert_array_equal(a, b)


NEW_CASES = [
    lambda L, np: L.zeros(2).new_zeros(3),
    lambda L, np: L.zeros(2, dtype=L.int32).new_ones((2,)),
    lambda L, np: L.zeros(2, dtype=L.int32).new_tensor([1.5]),
    lambda L, np: L.zeros(2).new_tensor([1, 2]),
    lambda L, np: L.zeros(2).new_full((2,), 3),
    lambda L, np: L.zeros(2, dtype=L.int32).new_empty(2, 2).dtype,
    lambda L, np: L.zeros(2).new_zeros(2, requires_grad=True),
    lambda L, np: L.zeros(2).new_zeros(2, dtype=L.int64),
    lambda L, np: L.zeros(2, requires_grad=True).new_tensor([1.0]),
    lambda L, np: L.ones(2).new_tensor([1.0], requires_grad=True),
    lambda L, np: L.ones(2).new_full((2,), 5, dtype=L.int64),
    lambda L, np: L.ones(2).new_empty((0,)),
    lambda L, np: L.ones(2).new_ones(()),
    lambda L, np: L.ones(2, dtype=L.float64).new_ones(2, 2),
]


@pytest.mark.oracle
@pytest.mark.parametrize("case", range(len(NEW_CASES)))
def test_new_methods_match_torch(torch, case):
    _same(torch, NEW_CASES[case])


NUMPY_CASES = [
    lambda L, np: L.from_numpy(np.array([1.0, 2.0])[::-1]),
    lambda L, np: L.as_tensor(np.array([1.0, 2.0])[::-1]),
    lambda L, np: L.from_numpy(np.array(["a"])),
    lambda L, np: L.from_numpy([1]),
    lambda L, np: L.from_numpy(np.array([1], dtype=">f8")),
    lambda L, np: L.as_tensor([1, 2], dtype=L.float64),
    lambda L, np: L.as_tensor(np.array([1, 2]), dtype=L.float64),
    lambda L, np: L.as_tensor(3),
    lambda L, np: L.from_numpy(np.zeros((2, 3), dtype=np.int16)).stride(),
    lambda L, np: L.from_numpy(np.zeros((2, 3), order="F")).stride(),
    lambda L, np: L.from_numpy(np.float64(1.0)),
]


@pytest.mark.oracle
@pytest.mark.parametrize("case", range(len(NUMPY_CASES)))
def test_numpy_interop_matches_torch(torch, case):
    # NumPy dtype lists differ (hookgrad supports fewer dtypes): compare exception types only
    _same(torch, NUMPY_CASES[case], message=case not in (2,))


def test_from_numpy_and_as_tensor_share_memory():
    arr = np.zeros(3)
    t = hookgrad.from_numpy(arr)
    arr[0] = 1.0
    assert t[0].item() == 1.0 if hasattr(t, "__getitem__") else t.tolist()[0] == 1.0
    assert t.numpy() is arr or np.shares_memory(t.numpy(), arr)
    assert np.shares_memory(hookgrad.as_tensor(arr).numpy(), arr)
    assert not np.shares_memory(hookgrad.as_tensor(arr, dtype=hookgrad.float32).numpy(), arr)
    same = hookgrad.ones(2)
    assert hookgrad.as_tensor(same) is same


def test_from_numpy_readonly_warns_once(monkeypatch):
    import hookgrad._functional.creation as creation

    monkeypatch.setattr(creation, "_WARNED_READONLY", False)
    arr = np.zeros(2)
    arr.setflags(write=False)
    with pytest.warns(UserWarning, match="not writable"):
        hookgrad.from_numpy(arr)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hookgrad.from_numpy(arr)


def test_out_argument_writes_into_out():
    out = hookgrad.ones(3)
    res = hookgrad.zeros(3, out=out)
    assert res is out and out.tolist() == [0.0, 0.0, 0.0] and out._version == 1
    res = hookgrad.arange(4.0, out=out)
    assert res is out and out.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_queries():
    t = hookgrad.ones(2, 3)
    assert hookgrad.is_tensor(t) and not hookgrad.is_tensor([1])
    assert hookgrad.numel(t) == 6 and hookgrad.is_floating_point(t)
