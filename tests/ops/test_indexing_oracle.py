"""Indexing against PyTorch: a matrix of ``__getitem__``/``__setitem__`` indices (values, node
chains, view-ness, gradients) and the error types and messages of every indexing op."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err

pytestmark = pytest.mark.oracle


def chain(t):
    """Node names from `t` down to the leaf's accumulator (first input at each step)."""
    out, fn = [], t.grad_fn
    while fn is not None:
        out.append(fn.name())
        nxt = [n for n, _ in fn.next_functions if n is not None]
        fn = nxt[0] if nxt else None
    return out


def leaf(lib, shape=(3, 4, 5)):
    data = np.random.default_rng(0).normal(size=shape)
    return lib.tensor(data, requires_grad=True)


# Index builders take the library, so tensor indices are built by each side.
GET = {
    "int": lambda lib: 1,
    "neg_int": lambda lib: -3,
    "slice": lambda lib: slice(1, 3),
    "full_slice": lambda lib: slice(None),
    "step": lambda lib: slice(None, None, 2),
    "clamped": lambda lib: slice(-9, 9),
    "empty": lambda lib: slice(3, 1),
    "none": lambda lib: None,
    "ellipsis": lambda lib: ...,
    "true": lambda lib: True,
    "false": lambda lib: False,
    "tuple_full": lambda lib: (slice(None), slice(None)),
    "col": lambda lib: (slice(None), 1),
    "row_full": lambda lib: (0, slice(None)),
    "ellipsis_last": lambda lib: (..., 2),
    "ellipsis_mid": lambda lib: (0, ..., 1),
    "none_mix": lambda lib: (None, 0, None, slice(1, None)),
    "scalar": lambda lib: (1, 2, 3),
    "tensor_0d": lambda lib: lib.tensor(2),
    "tensor_0d_pair": lambda lib: (lib.tensor(1), 2),
    "bool_0d": lambda lib: lib.tensor(True),
    "list": lambda lib: [0, 2],
    "list_neg_dup": lambda lib: [-1, 0, -1],
    "empty_list": lambda lib: [],
    "tensor_2d": lambda lib: lib.tensor([[0, 1], [2, 0]]),
    "int32_tensor": lambda lib: lib.tensor([1, 2], dtype=lib.int32),
    "adjacent": lambda lib: (slice(None), [0, 1], [2, 3]),
    "separated": lambda lib: ([0, 1], slice(None), [2, 3]),
    "separated_none": lambda lib: ([0, 1], None, [2, 3]),
    "broadcast_idx": lambda lib: (lib.tensor([[0], [2]]), slice(1, 3), lib.tensor([1, 4, 0])),
    "select_then_adv": lambda lib: (1, [0, 3]),
    "slice_then_adv": lambda lib: (slice(1, None), [0, 3]),
    "adv_then_none": lambda lib: ([0, 1], None),
    "mask_full": lambda lib: lib.tensor(np.random.default_rng(1).random((3, 4, 5)) > 0.5),
    "mask_2d": lambda lib: lib.tensor(np.random.default_rng(2).random((3, 4)) > 0.5),
    "mask_2d_then_slice": lambda lib: (
        lib.tensor(np.random.default_rng(3).random((3, 4)) > 0.5),
        slice(1, 3),
    ),
    "mask_dim1": lambda lib: (slice(None), lib.tensor([True, False, True, True])),
    "bool_list": lambda lib: [True, False, True],
    "ellipsis_adv": lambda lib: (..., [0, 4]),
}


@pytest.mark.parametrize("name", sorted(GET))
def test_getitem_matches_torch(torch, name):
    def scenario(lib):
        x = leaf(lib)
        y = x * 1
        r = y[GET[name](lib)]
        out = [tuple(r.shape), r.tolist(), chain(r), r._is_view(), r._base is y]
        if r.numel():
            w = lib.tensor(np.arange(r.numel(), dtype=np.float64).reshape(tuple(r.shape)))
            (r * w).sum().backward()
            out.append(x.grad.tolist())
        return out

    assert scenario(hookgrad) == scenario(torch)


def test_getitem_on_leaf_and_repeated_views(torch):
    def scenario(lib):
        x = leaf(lib)
        a, b = x[0], x[0]
        return [chain(a), a._base is x, b._base is x, a is b, chain(x[..., None])]

    assert scenario(hookgrad) == scenario(torch)


def test_non_tuple_sequence_warning_matches_torch(torch):
    def scenario(lib):
        x = leaf(lib)
        with pytest.warns(UserWarning, match="non-tuple sequence") as rec:
            r = x[[[0, 1], [1, 2]]]
        return [tuple(r.shape), len(rec) >= 1]

    assert scenario(hookgrad) == scenario(torch)


def _get_errors(lib):
    x = leaf(lib)
    return {
        "int_oob": lambda: x[3],
        "neg_oob": lambda: x[-4],
        "col_oob": lambda: x[:, 4],
        "list_oob": lambda: x[[0, 5]],
        "list_neg_oob": lambda: x[:, [-5]],
        "too_many": lambda: x[0, 0, 0, 0],
        "float": lambda: x[1.5],
        "float_tensor": lambda: x[lib.tensor([1.0])],
        "string": lambda: x[{}],
        "step_zero": lambda: x[::0],
        "step_neg": lambda: x[::-1],
        "mask_shape": lambda: x[lib.ones(4, dtype=lib.bool)],
        "mask_dims": lambda: x[lib.ones(3, 5, dtype=lib.bool)],
        "broadcast": lambda: x[[0, 1], [0, 1, 2]],
        "zero_dim_int": lambda: lib.tensor(1.0)[0],
        "zero_dim_slice": lambda: lib.tensor(1.0)[:],
        "zero_dim_list": lambda: lib.tensor(1.0)[[0]],
        "iter_0d": lambda: iter(lib.tensor(1.0)),
    }


@pytest.mark.parametrize("name", sorted(_get_errors(hookgrad)))
def test_getitem_errors_match_torch(torch, name):
    assert err(_get_errors(hookgrad)[name]) == err(_get_errors(torch)[name])


def _set_errors(lib):
    x = lib.zeros(3, 4)

    def assign(index, value):
        def run():
            x[index] = value

        return run

    return {
        "value_shape": assign(0, lib.ones(3)),
        "value_broadcast": assign(slice(None), lib.ones(2, 4)),
        "adv_dtype": assign([0], lib.ones(4, dtype=lib.float64)),
        "adv_shape": assign([0, 1], lib.ones(3, 4)),
        "oob": assign(5, 1.0),
        "bad_value": assign(0, "a"),
        "index_put_dtype": lambda: x.index_put_((lib.tensor([0]),), lib.ones(1, dtype=lib.int64)),
        "index_put_none": lambda: x.index_put_((None, lib.tensor([0])), lib.ones(3)),
    }


@pytest.mark.parametrize("name", sorted(_set_errors(hookgrad)))
def test_setitem_errors_match_torch(torch, name):
    got, expected = err(_set_errors(hookgrad)[name]), err(_set_errors(torch)[name])
    if name == "bad_value":  # the texts come from each library's scalar conversion
        got, expected = got[0], expected[0]
    assert got == expected


def test_setitem_values_and_casts(torch):
    def scenario(lib):
        x = lib.zeros(3, 4)
        x[0] = 1
        x[1, 1:3] = lib.tensor([2.5, 3.5], dtype=lib.float64)
        x[x > 3] = -1.0
        x[[2, 2], [0, 1]] = lib.tensor([7.0, 8.0])
        x[..., 3] = lib.tensor(9.0)
        x[False] = 100.0
        x[None, 2] = lib.tensor([[4.0, 4.0, 4.0, 4.0]])
        i = lib.zeros(2, 2, dtype=lib.int64)
        i[0] = 2.7
        b = lib.zeros(3, dtype=lib.bool)
        b[1] = 1
        return [x.tolist(), x._version, i.tolist(), b.tolist()]

    assert scenario(hookgrad) == scenario(torch)


def _op_errors(lib):
    x = lib.zeros(3, 4)
    i2 = lib.tensor([[0], [1], [5]])
    return {
        "gather_oob": lambda: x.gather(1, i2),
        "gather_neg": lambda: x.gather(1, lib.tensor([[0], [1], [-1]])),
        "gather_ndim": lambda: x.gather(1, lib.tensor([0])),
        "gather_float": lambda: x.gather(1, lib.tensor([[0.0]])),
        "gather_size": lambda: x.gather(0, lib.zeros(3, 5, dtype=lib.int64)),
        "scatter_oob": lambda: x.scatter(1, i2, 1.0),
        "scatter_dtype": lambda: x.scatter(
            1, lib.zeros(3, 1, dtype=lib.int64), lib.ones(3, 1, dtype=lib.float64)
        ),
        "scatter_size": lambda: x.scatter(1, lib.zeros(1, 2, dtype=lib.int64), lib.ones(1, 1)),
        "scatter_add_oob": lambda: x.scatter_add(1, i2, lib.ones(3, 1)),
        "index_select_2d": lambda: x.index_select(1, lib.tensor([[0]])),
        "index_select_oob": lambda: x.index_select(1, lib.tensor([0, 5])),
        "index_select_scalar": lambda: lib.tensor(3.0).index_select(0, lib.tensor([0, 0])),
        "index_add_oob": lambda: x.index_add(0, lib.tensor([0, 5]), lib.ones(2, 4)),
        "index_add_count": lambda: x.index_add(0, lib.tensor([0]), lib.ones(2, 4)),
        "index_add_shape": lambda: x.index_add(0, lib.tensor([0]), lib.ones(1, 3)),
        "index_add_dtype": lambda: x.index_add(
            0, lib.tensor([0]), lib.ones(1, 4, dtype=lib.float64)
        ),
        "take_oob": lambda: x.take(lib.tensor([12])),
        "masked_select_dtype": lambda: x.masked_select(lib.ones(4)),
        "masked_select_shape": lambda: x.masked_select(lib.ones(5, dtype=lib.bool)),
        "take_along_dim_ndim": lambda: lib.take_along_dim(x, lib.tensor([0]), 1),
    }


@pytest.mark.parametrize("name", sorted(_op_errors(hookgrad)))
def test_indexing_op_errors_match_torch(torch, name):
    assert err(_op_errors(hookgrad)[name]) == err(_op_errors(torch)[name])


def test_inplace_index_ops_graph(torch):
    def scenario(lib):
        x = leaf(lib, (3, 4))
        y = x * 1
        idx = lib.tensor([[0, 1], [2, 3], [1, 0]])
        y.scatter_(1, idx, lib.ones(3, 2, dtype=lib.float64))
        y.scatter_add_(1, idx, x[:, :2] * 2)
        y.index_add_(0, lib.tensor([2, 0]), x[:2] * 3, alpha=0.5)
        y.index_put_(
            (lib.tensor([1]), lib.tensor([3])), lib.tensor(5.0, dtype=lib.float64), accumulate=True
        )
        (y * lib.arange(12.0, dtype=lib.float64).view(3, 4)).sum().backward()
        return [chain(y), y._version, y.tolist(), x.grad.tolist()]

    assert scenario(hookgrad) == scenario(torch)
