"""asarray, frombuffer, empty_strided, empty_permuted and gradient against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err


def _out(x):
    if isinstance(x, (tuple, list)):
        return tuple(_out(e) for e in x)
    return (str(x.dtype).replace("torch.", ""), tuple(x.shape), x.detach().numpy().tolist())


F = [[1.0, 4.0, 9.0, 16.0], [2.0, 3.0, 5.0, 11.0], [0.5, -1.0, 2.0, 4.0]]

VALUES = {
    "grad_int": lambda lib: lib.gradient(lib.tensor([1, 4, 9, 16])),
    "grad_scalar": lambda lib: lib.gradient(lib.tensor([1.0, 4, 9, 16]), spacing=2.0),
    "grad_coords_o2": lambda lib: lib.gradient(lib.tensor([1.0, 4, 9, 16, 3]),
                                               spacing=(lib.tensor([0.0, 1, 3, 4, 7]),),
                                               edge_order=2),
    "grad_coords_o1": lambda lib: lib.gradient(lib.tensor(F), dim=1,
                                               spacing=(lib.tensor([0.0, 0.5, 2, 3]),)),
    "grad_dim": lambda lib: lib.gradient(lib.tensor(F), dim=1, spacing=[2.0]),
    "grad_dims": lambda lib: lib.gradient(lib.tensor(F), dim=(0, 1), spacing=[2.0, 3.0]),
    "grad_all_o2": lambda lib: lib.gradient(lib.tensor(F, dtype=lib.float64), edge_order=2),
    "asarray_list": lambda lib: lib.asarray([1, 2.5]),
    "asarray_np": lambda lib: lib.asarray(np.arange(3)),
    "asarray_scalar": lambda lib: lib.asarray(3.5),
    "asarray_tensors": lambda lib: lib.asarray([lib.tensor(1.0), lib.tensor(2.0)]),
    "asarray_dtype": lambda lib: lib.asarray(lib.ones(2), dtype=lib.float64),
    "frombuffer": lambda lib: lib.frombuffer(bytearray(b"\x01\x00\x00\x00\x02\x00\x00\x00"),
                                             dtype=lib.int32),
    "frombuffer_offset": lambda lib: lib.frombuffer(bytearray(range(8)), dtype=lib.int16,
                                                    count=2, offset=2),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_match_torch(torch, name):
    assert _out(VALUES[name](hookgrad)) == _out(VALUES[name](torch))


def test_asarray_and_frombuffer_share_memory(torch):
    for lib in (hookgrad, torch):
        a = np.arange(3.0)
        t = lib.asarray(a)
        a[0] = 5
        assert t.tolist() == [5.0, 1.0, 2.0]
        x = lib.ones(2)
        assert lib.asarray(x) is x and lib.asarray(x, copy=True) is not x
        buf = bytearray(8)
        f = lib.frombuffer(buf, dtype=lib.int32)
        buf[0] = 7
        assert f.tolist() == [7, 0]


LAYOUT = {
    "empty_strided": lambda lib: lib.empty_strided((2, 3), (1, 2)),
    "empty_strided_f64": lambda lib: lib.empty_strided((2, 2), (2, 1), dtype=lib.float64),
    "empty_permuted": lambda lib: lib.empty_permuted((2, 3, 4), (2, 0, 1)),
    "empty_permuted_id": lambda lib: lib.empty_permuted((2, 3), (0, 1), dtype=lib.int64),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(LAYOUT))
def test_layouts_match_torch(torch, name):
    a, b = LAYOUT[name](hookgrad), LAYOUT[name](torch)
    assert (str(a.dtype).split(".")[-1], tuple(a.shape), a.stride()) == \
        (str(b.dtype).split(".")[-1], tuple(b.shape), b.stride())


def test_gradient_grads_match_torch(torch):
    def run(lib):
        x = lib.tensor(F, dtype=lib.float64, requires_grad=True)
        c = lib.tensor([0.0, 0.5, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        g0, g1 = lib.gradient(x, spacing=[lib.tensor([0.0, 1, 3], dtype=lib.float64), c],
                              edge_order=2)
        (g0 * g0 + g1 * 3).sum().backward()
        return x.grad.tolist(), c.grad.tolist()

    mine, theirs = run(hookgrad), run(torch)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    x = hookgrad.tensor(F, dtype=hookgrad.float64, requires_grad=True)
    assert hookgrad.autograd.gradcheck(lambda t: hookgrad.gradient(t, edge_order=2), (x,))


BAD = {
    "grad_small": lambda lib: lib.gradient(lib.tensor([1.0, 4]), edge_order=2),
    "grad_order": lambda lib: lib.gradient(lib.tensor([1.0, 4]), edge_order=3),
    "grad_spacing_len": lambda lib: lib.gradient(lib.tensor([[1.0, 4, 9], [2, 3, 5]]),
                                                 spacing=[2.0]),
    "permuted_len": lambda lib: lib.empty_permuted((2, 3, 4), (2, 0)),
    "strided_len": lambda lib: lib.empty_strided((2, 3), (1,)),
    "frombuffer_count": lambda lib: lib.frombuffer(bytearray(8), dtype=lib.int32, count=3),
    "frombuffer_empty": lambda lib: lib.frombuffer(bytearray(0), dtype=lib.int32),
    "frombuffer_multiple": lambda lib: lib.frombuffer(bytearray(7), dtype=lib.int32),
    "asarray_alias": lambda lib: lib.asarray(np.arange(3.0), copy=False, dtype=lib.float32),
    "asarray_int_grad": lambda lib: lib.asarray([1, 2], requires_grad=True),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(BAD))
def test_errors_match_torch_types(torch, name):
    mine, theirs = err(lambda: BAD[name](hookgrad)), err(lambda: BAD[name](torch))
    assert theirs is not None and mine is not None and mine[0] == theirs[0], (mine, theirs)
