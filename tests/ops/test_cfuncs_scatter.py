"""scatter_reduce / index_reduce / put against PyTorch: values, gradients with ties and zeros
(where the generic OpSpec samples are smooth), in-place forms and error types."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad
from tests._errors import err

SELF = np.array([[1.0, 0.0, 3.0, 2.0], [2.0, 5.0, -1.0, 0.0]])
SRC = np.array([[2.0, 0.0, 3.0, 2.0, 0.0], [5.0, 5.0, 4.0, -1.0, 2.0]])  # ties and zeros
IDX = np.array([[0, 1, 0, 3, 1], [1, 1, 3, 2, 0]])
REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def _grads(lib, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # index_reduce's once-per-process "beta" warning
        return _grads_of(lib, fn)


def _grads_of(lib, fn):
    s = lib.tensor(SELF, requires_grad=True)
    src = lib.tensor(SRC, requires_grad=True)
    out = fn(lib, s, src)
    w = lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape) + 1
    gs, gsrc = lib.autograd.grad((out * w).sum(), (s, src), allow_unused=True,
                                 materialize_grads=True)
    return out.tolist(), gs.tolist(), gsrc.tolist(), out.grad_fn.name()


CASES = {f"scatter_{r}_{inc}": (lambda r, inc: lambda lib, s, src: s.scatter_reduce(
    1, lib.tensor(IDX), src, r, include_self=inc))(r, inc) for r in REDUCES for inc in (True, False)}
CASES.update({f"index_{r}_{inc}": (lambda r, inc: lambda lib, s, src: lib.index_reduce(
    s.t().contiguous(), 0, lib.tensor([0, 1, 0, 3, 1]), src.t(), r, include_self=inc))(r, inc)
    for r in REDUCES[1:] for inc in (True, False)})
CASES["put"] = lambda lib, s, src: s.put(lib.tensor([[0, 5], [7, 2]]), src[:, :2])
CASES["put_acc"] = lambda lib, s, src: lib.put(s, lib.tensor([0, 5, 0, -1]), src[0, :4], True)
CASES["scatter_max_alias"] = lambda lib, s, src: s.scatter_reduce(1, lib.tensor(IDX[:, :4]),
                                                                   src[:, :4], "max")


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_torch(torch, name):
    failed = err(lambda: _grads(torch, CASES[name]))
    if failed:  # "max" runs forwards and is refused by PyTorch's backward
        assert err(lambda: _grads(hookgrad, CASES[name])) == failed
        return
    mine, theirs = _grads(hookgrad, CASES[name]), _grads(torch, CASES[name])
    assert mine[3] == theirs[3]
    for a, b in zip(mine[:3], theirs[:3]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_gradcheck_with_zeros(reduce):
    s = hookgrad.tensor(SELF + 0.5, requires_grad=True)
    src = hookgrad.tensor(np.where(SRC == 0, 0.0, SRC + 0.25), requires_grad=True)
    idx = hookgrad.tensor(IDX)
    assert hookgrad.autograd.gradcheck(
        lambda a, b: a.scatter_reduce(1, idx, b, reduce, include_self=False), (s, src))


INT_CASES = {
    "mean_int": lambda lib: lib.tensor([1, 2, 3, 4]).scatter_reduce(
        0, lib.tensor([0, 1, 0, 1]), lib.tensor([5, 6, 2, 7]), "mean"),
    "amin_int_excl": lambda lib: lib.tensor([1, 2, 3, 4]).scatter_reduce(
        0, lib.tensor([0, 1, 0, 1]), lib.tensor([5, 6, 2, 7]), "amin", include_self=False),
    "inplace": lambda lib: lib.zeros(2, 3).scatter_reduce_(
        1, lib.tensor([[0, 0], [2, 1]]), lib.ones(2, 2) * 3, "sum", include_self=False),
    "index_inplace": lambda lib: lib.ones(3, 2).index_reduce_(
        0, lib.tensor([2, 0, 2]), lib.tensor([[1.0, 2], [3, 4], [5, 6]]), "amax"),
    "put_inplace": lambda lib: lib.zeros(2, 2).put_(lib.tensor([3, 0]), lib.tensor([1.0, 2.0])),
    "zero_dim": lambda lib: lib.tensor(2.0).scatter_reduce(0, lib.tensor(0), lib.tensor(3.0),
                                                           "prod"),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(INT_CASES))
def test_values_dtypes_match_torch(torch, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = INT_CASES[name](hookgrad), INT_CASES[name](torch)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert a.tolist() == b.tolist()


BAD = {
    "bad_reduce": lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1), "add"),
    "float_index": lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0.0]), lib.ones(1),
                                                            "sum"),
    "dtype": lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([0]),
                                                      lib.ones(1, dtype=lib.float64), "sum"),
    "dim": lambda lib: lib.zeros(3).scatter_reduce(1, lib.tensor([0]), lib.ones(1), "sum"),
    "ndim": lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([[0]]), lib.ones(1, 1), "sum"),
    "oob": lambda lib: lib.zeros(3).scatter_reduce(0, lib.tensor([3]), lib.ones(1), "sum"),
    "leaf_inplace": lambda lib: lib.zeros(3, requires_grad=True).scatter_reduce_(
        0, lib.tensor([0]), lib.ones(1), "sum"),
    "ir_sum": lambda lib: lib.zeros(3).index_reduce(0, lib.tensor([0]), lib.ones(1), "sum"),
    "ir_2d_index": lambda lib: lib.zeros(3).index_reduce(0, lib.tensor([[0]]), lib.ones(1),
                                                          "prod"),
    "ir_float_index": lambda lib: lib.zeros(3).index_reduce(0, lib.tensor([0.0]), lib.ones(1),
                                                             "prod"),
    "ir_dtype": lambda lib: lib.zeros(3).index_reduce(0, lib.tensor([0]),
                                                       lib.ones(1, dtype=lib.float64), "prod"),
    "ir_count": lambda lib: lib.zeros(3, 2).index_reduce(0, lib.tensor([0]), lib.ones(2, 2),
                                                          "prod"),
    "ir_shape": lambda lib: lib.zeros(3, 2).index_reduce(0, lib.tensor([0]), lib.ones(1, 3),
                                                          "prod"),
    "ir_oob": lambda lib: lib.zeros(3).index_reduce(0, lib.tensor([4]), lib.ones(1), "prod"),
    "put_oob": lambda lib: lib.zeros(3).put(lib.tensor([4]), lib.ones(1)),
    "put_count": lambda lib: lib.zeros(3).put(lib.tensor([0, 1]), lib.ones(1)),
    "put_dtype": lambda lib: lib.zeros(3).put(lib.tensor([0]), lib.ones(1, dtype=lib.float64)),
    "put_float_index": lambda lib: lib.zeros(3).put(lib.tensor([0.0]), lib.ones(1)),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(BAD))
def test_errors_match_torch_types(torch, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine, theirs = err(lambda: BAD[name](hookgrad)), err(lambda: BAD[name](torch))
    assert theirs is not None and mine is not None and mine[0] == theirs[0], (mine, theirs)


def test_index_reduce_warns_once_per_process():
    """PyTorch's TORCH_WARN_ONCE; checked in a fresh process (conftest marks it given)."""
    import subprocess
    import sys

    code = ("import warnings, hookgrad as h\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    for _ in range(3):\n"
            "        h.zeros(2).index_reduce(0, h.tensor([0]), h.ones(1), 'amax')\n"
            "print(len(w), w[0].category.__name__, str(w[0].message))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout.strip()
    assert out == "1 UserWarning index_reduce() is in beta and the API may change at any time."
