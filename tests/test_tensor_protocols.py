"""Python protocols of Tensor (scalars, NumPy, len/bool/format) and copy/pickle, vs PyTorch."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import hookgrad


def _outcome(fn):
    try:
        out = fn()
        if isinstance(out, np.ndarray):
            return ("ok", out.dtype.name, out.tolist())
        return ("ok", repr(out), type(out).__name__)
    except Exception as exc:  # noqa: BLE001 - comparing exception types with the oracle
        return (type(exc).__name__, str(exc))


CASES = [
    lambda L: L.ones(2).item(),
    lambda L: L.tensor([2.5]).item(),
    lambda L: L.tensor(3).item(),
    lambda L: L.tensor(True).item(),
    lambda L: L.tensor(2.5, dtype=L.float16).item(),
    lambda L: L.tensor(3.0, requires_grad=True).item(),
    lambda L: L.tensor([[1, 2], [3, 4]]).tolist(),
    lambda L: L.tensor(2.5).tolist(),
    lambda L: L.tensor([0.1], dtype=L.float16).tolist(),
    lambda L: L.tensor([True, False]).tolist(),
    lambda L: L.tensor(3.0, requires_grad=True).tolist(),
    lambda L: L.zeros(0, 2).tolist(),
    lambda L: L.tensor([1, 2]).numpy(),
    lambda L: L.ones(2, requires_grad=True).numpy(),
    lambda L: L.ones(2, requires_grad=True).numpy(force=True),
    lambda L: np.asarray(L.tensor([1.5, 2.0])),
    lambda L: np.asarray(L.ones(2, requires_grad=True)),
    lambda L: L.ones(2).__array__(dtype="float64"),
    lambda L: len(L.zeros(3, 2)),
    lambda L: len(L.zeros(0, 3)),
    lambda L: len(L.tensor(1.0)),
    lambda L: bool(L.tensor([0.0])),
    lambda L: bool(L.tensor(float("nan"))),
    lambda L: bool(L.tensor([1, 2])),
    lambda L: bool(L.tensor([])),
    lambda L: float(L.tensor([[2]])),
    lambda L: float(L.ones(2)),
    lambda L: int(L.tensor(2.7)),
    lambda L: int(L.tensor([-2.7])),
    lambda L: int(L.ones(2)),
    lambda L: complex(L.tensor(2.0)),
    lambda L: L.tensor(2.7).__index__(),
    lambda L: L.tensor(True).__index__(),
    lambda L: [1, 2, 3][L.tensor(1)],
    lambda L: [1, 2, 3][L.tensor([1])],
    lambda L: [1, 2, 3][L.tensor([1, 2])],
    lambda L: f"{L.tensor(3)}",
    lambda L: f"{L.tensor(3):5d}",
    lambda L: f"{L.tensor(1.2345):.2f}",
    lambda L: f"{L.tensor([1.2345]):.2f}",
    lambda L: f"{L.tensor([3])!s}",
    lambda L: f"{L.tensor(3.0, requires_grad=True):.2f}",
    lambda L: L.ones(2, dtype=L.int64).requires_grad_(),
    lambda L: setattr(L.ones(2, dtype=L.int64), "requires_grad", True),
    lambda L: L.ones(2, dtype=L.float64).requires_grad_(),
    lambda L: (L.ones(2, 3).nbytes, L.ones(2, dtype=L.float16).itemsize, L.ones(2).get_device()),
    lambda L: (L.ones(2).is_cpu, L.ones(2).element_size(), L.zeros(0, 3).stride()),
    lambda L: (L.zeros(2, 0, 3).stride(), L.zeros(0).stride(), L.ones(2, 3).stride(1)),
    lambda L: (L.ones(2, 3)[1].storage_offset(), L.ones(2, 3)[:, 2].storage_offset()),
    lambda L: L.from_numpy(np.arange(5.0)[2:]).storage_offset(),
]


@pytest.mark.oracle
@pytest.mark.parametrize("case", range(len(CASES)))
def test_protocols_match_torch(torch, case):
    assert _outcome(lambda: CASES[case](hookgrad)) == _outcome(lambda: CASES[case](torch))


@pytest.mark.oracle
def test_deepcopy_nonleaf_raises_torch_error(torch):
    def scenario(lib):
        a = lib.ones(2, requires_grad=True)
        return copy.deepcopy(a * 2)

    assert _outcome(lambda: scenario(hookgrad)) == _outcome(lambda: scenario(torch))


def _copy_scenario(lib, copier):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a.grad = lib.tensor([0.5, 0.5, 0.5])
    b = lib.from_numpy(np.arange(6.0).reshape(2, 3))
    bt = lib.from_numpy(np.arange(6.0).reshape(2, 3).T)  # F-contiguous strides survive
    with lib.no_grad():
        nonleaf_free = lib.ones(2) * 3
    c = lib.tensor([1, 2], dtype=lib.int16)
    c.note = {"k": [1, 2]}
    out = copier([a, b, bt, nonleaf_free, c])
    return [(repr(t), t.stride(), t.requires_grad) for t in out], out


@pytest.mark.oracle
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copy_protocols_preserve_values_dtype_requires_grad(torch, how):
    copier = copy.deepcopy if how == "deepcopy" else (lambda x: pickle.loads(pickle.dumps(x)))
    ours, objs = _copy_scenario(hookgrad, copier)
    theirs, tobjs = _copy_scenario(torch, copier)
    assert ours == theirs
    assert objs[4].note == tobjs[4].note == {"k": [1, 2]}
    grads = [(repr(o[0].grad) if o[0].grad is not None else None) for o in (objs, tobjs)]
    assert grads[0] == grads[1]


def _deepcopy_sharing(lib):
    base = lib.arange(6.0)
    buf = np.arange(6.0)
    # a view shares its base's storage; from_numpy of a NumPy slice is a storage of its own
    cb, cv, ca, cw = copy.deepcopy([base, base[2:5], lib.from_numpy(buf),
                                    lib.from_numpy(buf[2:5])])
    cb[3] = 100.0
    ca[3] = 100.0
    return (cv.tolist(), cv.storage_offset(), cw.tolist(), cw.storage_offset(), base.tolist(),
            buf.tolist())


@pytest.mark.oracle
def test_deepcopy_keeps_storage_sharing_between_copies(torch):
    assert _deepcopy_sharing(hookgrad) == _deepcopy_sharing(torch)
    assert _deepcopy_sharing(hookgrad)[:2] == ([2.0, 100.0, 4.0], 2)


def test_pickle_shares_detached_aliases_and_copy_shares_memory():
    a = hookgrad.ones(3)
    la, lb = pickle.loads(pickle.dumps([a, a.detach()]))
    la.numpy()[0] = 7.0
    assert lb.tolist()[0] == 7.0
    c = copy.copy(a)
    c.numpy()[1] = 5.0
    assert a.tolist()[1] == 5.0


def test_pickle_of_nonleaf_loads_as_leaf_requiring_grad():
    a = hookgrad.ones(2, requires_grad=True)
    b = pickle.loads(pickle.dumps(a * 2))
    assert b.requires_grad and b.grad_fn is None and b.tolist() == [2.0, 2.0]


def test_deepcopy_memo_returns_same_copy():
    a = hookgrad.ones(2)
    x, y = copy.deepcopy([a, a])
    assert x is y and x is not a


def test_numpy_of_a_tensor_that_requires_grad_works_without_grad_mode(torch):
    """PyTorch refuses ``numpy()`` (and ``np.asarray``) of a tensor that requires grad only
    while grad mode is on; under ``no_grad``/``inference_mode`` it shares the data (BoTorch's
    ``as_ndarray`` relies on it)."""
    def scenario(lib):
        v = lib.ones(2, dtype=lib.float64, requires_grad=True) * 2
        out = []
        for mode in (lib.no_grad, lib.enable_grad, lib.inference_mode):
            with mode():
                for read in (lambda: v.numpy(), lambda: np.asarray(v)):
                    try:
                        out.append(read().tolist())
                    except RuntimeError:
                        out.append("RuntimeError")
        with lib.no_grad():
            v.numpy()[0] = 7.0  # shares memory
        return [*out, v.tolist()]

    assert scenario(hookgrad) == scenario(torch)
