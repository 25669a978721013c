"""Shape ops against PyTorch: which results are views, layouts, errors, promotion, iteration.

Values, gradients and node names of every op are covered by the OpSpec table
(``hookgrad/testing/_opspec/shape.py``); this file checks what the table cannot express.
"""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from hookgrad._functional.shape import pad as hg_pad
from tests._errors import err

pytestmark = pytest.mark.oracle


def base(lib, shape=(3, 4)):
    return lib.tensor(np.arange(float(np.prod(shape))).reshape(shape))


def pad(lib):
    return lib.nn.functional.pad if lib.__name__ == "torch" else hg_pad


VIEW_CASES = {
    "view": lambda x: x.view(4, 3),
    "reshape_view": lambda x: x.reshape(12),
    "reshape_copy": lambda x: x.t().reshape(12),
    "flatten": lambda x: x.flatten(),
    "flatten_copy": lambda x: x.t().flatten(),
    "ravel_copy": lambda x: x.t().ravel(),
    "unflatten": lambda x: x.unflatten(1, (2, 2)),
    "t": lambda x: x.t(),
    "T": lambda x: x.T,
    "mT": lambda x: x.mT,
    "transpose": lambda x: x.transpose(0, 1),
    "permute": lambda x: x.permute(1, 0),
    "movedim": lambda x: x.movedim(0, 1),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "select": lambda x: x.select(1, 2),
    "unbind": lambda x: x.unbind(1)[1],
    "split": lambda x: x.split(3, 1)[1],
    "chunk": lambda x: x.chunk(2)[1],
    "tensor_split": lambda x: x.tensor_split(2, 1)[1],
    "diagonal": lambda x: x.diagonal(1),
    "squeeze": lambda x: x[None].squeeze(0),
    "unsqueeze": lambda x: x.unsqueeze(-1),
    "expand": lambda x: x[:, :1].expand(3, 5),
    "as_strided": lambda x: x[1:].as_strided((2, 2), (1, 4)),
    "as_strided_offset": lambda x: x[1:].as_strided((2,), (2,), 1),
    "contiguous_self": lambda x: x.contiguous(),
    "contiguous_copy": lambda x: x.t().contiguous(),
    "clone_t": lambda x: x.t().clone(),
    "cat": lambda x: hookgrad_or(x).cat([x, x]),
    "flip": lambda x: x.flip(0),
    "view_of_view": lambda x: x.t()[1:].unsqueeze(0),
}


def hookgrad_or(x):
    return hookgrad if isinstance(x, hookgrad.Tensor) else __import__("torch")


@pytest.mark.parametrize("name", sorted(VIEW_CASES))
def test_view_semantics_and_layout_match_torch(torch, name):
    def scenario(lib):
        x = base(lib)
        r = VIEW_CASES[name](x)
        root = r._base
        return [
            tuple(r.shape),
            r.stride(),
            r.is_contiguous(),
            r._is_view(),
            root is x,
            r.storage_offset(),
            r.tolist(),
            r._version,
        ]

    assert scenario(hookgrad) == scenario(torch)


def test_views_share_memory_both_ways(torch):
    def scenario(lib):
        x = base(lib)
        v = x.t()[1:]
        v[0, 1] = -1.0
        x[2, 2] = -2.0
        d = x.diagonal()
        d.mul_(10)
        return [x.tolist(), v.tolist(), x._version, v._version]

    assert scenario(hookgrad) == scenario(torch)


def _error_cases(lib):
    x = base(lib)
    return {
        "view_incompatible": lambda: x.t().view(12),
        "view_bad_size": lambda: x.view(5, -1),
        "view_two_infer": lambda: x.view(-1, -1),
        "transpose_range": lambda: x.transpose(0, 2),
        "t_3d": lambda: base(lib, (2, 2, 2)).t(),
        "permute_len": lambda: x.permute(0),
        "permute_dup": lambda: x.permute(0, 0),
        "squeeze_range": lambda: x.squeeze(3),
        "unsqueeze_range": lambda: x.unsqueeze(4),
        "narrow_start": lambda: x.narrow(0, 5, 1),
        "narrow_length": lambda: x.narrow(0, 1, 3),
        "select_index": lambda: x.select(0, 3),
        "select_0d": lambda: lib.tensor(1.0).select(0, 0),
        "unbind_0d": lambda: lib.tensor(1.0).unbind(),
        "split_sizes": lambda: x.split([1, 1]),
        "chunk_zero": lambda: x.chunk(0),
        "diagonal_same": lambda: x.diagonal(0, 1, 1),
        "expand_fewer": lambda: x.expand(4),
        "expand_mismatch": lambda: x.expand(2, 4),
        "expand_leading_neg": lambda: x.expand(-1, 3, 4),
        "mT_1d": lambda: x[0].mT,
        "H_1d": lambda: x[0].H,
        "cat_empty": lambda: lib.cat([]),
        "cat_ndim": lambda: lib.cat([x, x[0]]),
        "cat_sizes": lambda: lib.cat([x, x[:, :2]]),
        "cat_0d": lambda: lib.cat([lib.tensor(1.0), lib.tensor(2.0)]),
        "cat_tensor_arg": lambda: lib.cat(x),
        "stack_sizes": lambda: lib.stack([x, x[0]]),
        "stack_empty": lambda: lib.stack([]),
        "flip_dup": lambda: x.flip(0, 0),
        "fliplr_1d": lambda: x[0].fliplr(),
        "repeat_fewer": lambda: x.repeat(2),
        "tril_1d": lambda: x[0].tril(),
        "roll_mismatch": lambda: x.roll((1, 2), 0),
        "pad_odd": lambda: pad(lib)(x, (1,)),
        "pad_too_long": lambda: pad(lib)(x, (1, 1, 1, 1, 1, 1)),
        "pad_negative_size": lambda: pad(lib)(x, (-3, -2)),
        "pad_reflect_big": lambda: pad(lib)(x[None], (4, 0), mode="reflect"),
        "as_strided_oob": lambda: x.as_strided((4, 4), (4, 1)),
        "flatten_order": lambda: x.flatten(1, 0),
    }


def test_movedim_mixed_int_and_tuple_is_a_type_error(torch):
    def scenario(lib):
        return err(lambda: base(lib).movedim((0, 1), 0))[0]

    assert scenario(hookgrad) == scenario(torch)


@pytest.mark.parametrize("name", sorted(_error_cases(hookgrad)))
def test_errors_match_torch(torch, name):
    assert err(_error_cases(hookgrad)[name]) == err(_error_cases(torch)[name])


def test_cat_and_stack_type_promotion(torch):
    def scenario(lib):
        f = lib.ones(2, dtype=lib.float32)
        d = lib.ones(2, dtype=lib.float64)
        i = lib.ones(2, dtype=lib.int64)
        s = lib.tensor(1.0, dtype=lib.float64)
        return [
            str(lib.cat([f, d]).dtype),
            str(lib.cat([f, i]).dtype),
            str(lib.cat([i, i]).dtype),
            str(lib.stack([s, s.float()]).dtype),
            str(lib.stack([f, i]).dtype),
        ]

    got, expected = scenario(hookgrad), scenario(torch)
    assert [g.replace("hookgrad", "torch") for g in got] == expected


def test_cat_mixed_dtypes_gradients(torch):
    def scenario(lib):
        a = lib.ones(2, 3, dtype=lib.float32, requires_grad=True)
        b = lib.ones(1, 3, dtype=lib.float64, requires_grad=True)
        out = lib.cat([a, b])
        (out * lib.arange(9.0, dtype=lib.float64).view(3, 3)).sum().backward()
        return [str(a.grad.dtype), a.grad.tolist(), str(b.grad.dtype), b.grad.tolist()]

    got, expected = scenario(hookgrad), scenario(torch)
    assert got[1::2] == expected[1::2]
    assert [g.replace("hookgrad", "torch") for g in got[::2]] == expected[::2]


def test_iteration_and_len(torch):
    def scenario(lib):
        x = base(lib).requires_grad_()
        rows = list(x * 1)
        out = [
            len(x),
            [r.grad_fn.name() for r in rows],
            [r.tolist() for r in rows],
            [r._is_view() for r in rows],
            err(lambda: iter(lib.tensor(1.0))),
            err(lambda: len(lib.tensor(1.0))),
        ]
        rows[1].sum().backward()
        return out + [x.grad.tolist()]

    assert scenario(hookgrad) == scenario(torch)


def test_zero_size_shapes(torch):
    def scenario(lib):
        z = lib.zeros(0, 3)
        return [
            tuple(z.view(3, 0).shape),
            err(lambda: z.reshape(-1, 0)),
            len(z.unbind(0)),
            [tuple(p.shape) for p in z.chunk(3)],
            [tuple(p.shape) for p in z.split(1)],
            tuple(lib.cat([z, z]).shape),
            tuple(lib.stack([z, z], 1).shape),
            tuple(z.t().shape),
            tuple(lib.zeros(2, 0).repeat(2, 3).shape),
        ]

    assert scenario(hookgrad) == scenario(torch)


def test_storage_offset_and_as_strided_of_a_view(torch):
    def scenario(lib):
        x = base(lib).requires_grad_()
        y = x * 1
        v = y[1:, 1:]
        w = v.as_strided((2, 2), (4, 1))  # storage offset kept: starts at v's first element
        u = v.as_strided((3,), (1,), 0)  # absolute offset: starts at y's first element
        (w * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward(retain_graph=True)
        g1 = x.grad.tolist()
        x.grad = None
        (u * lib.tensor([5.0, 6.0, 7.0])).sum().backward()
        return [
            v.storage_offset(),
            w.storage_offset(),
            u.storage_offset(),
            w.tolist(),
            u.tolist(),
            g1,
            x.grad.tolist(),
        ]

    assert scenario(hookgrad) == scenario(torch)


def test_expanded_tensor_rejects_inplace_write(torch):
    def scenario(lib):
        e = lib.zeros(1, 3).expand(2, 3)

        def write():
            e[0] = 1.0

        e2 = lib.zeros(1, 3).expand(2, 3)
        e2[1].add_(1)  # one row of an expanded tensor does not overlap itself
        return [
            err(write),
            err(lambda: e.copy_(lib.ones(2, 3))),
            err(lambda: e.mul_(2)),
            err(lambda: e.fill_(1.0)),
            e.tolist(),
            e2.tolist(),
        ]

    assert scenario(hookgrad) == scenario(torch)
