"""Ops on meta tensors give PyTorch's shapes, dtypes, strides and offsets; backward gives meta
gradients. Each scenario runs twice (`mode`): on real stand-ins and on shape rules alone."""

from __future__ import annotations

import copy
import resource

import pytest

import hookgrad
from tests._errors import err
from tests.meta._lib import info, shape_info


def _m(L, *shape, dtype=None):
    return L.empty(*shape, device="meta", dtype=dtype or L.float32)


OPS = {
    "add_broadcast": lambda L: _m(L, 3, 1, 4) + _m(L, 5, 1),
    "mul_scalar": lambda L: _m(L, 3, 4) * 2,
    "int_plus_float": lambda L: _m(L, 3, dtype=L.int64) + 1.5,
    "int_div": lambda L: _m(L, 3, dtype=L.int64) / 2,
    "int_pow": lambda L: _m(L, 3, dtype=L.int32) ** 2,
    "compare": lambda L: _m(L, 2, 3) > 0,
    "f64_f32": lambda L: _m(L, 2, dtype=L.float64) * _m(L, 2),
    "unary": lambda L: [_m(L, 2, 3).exp(), _m(L, 2, 3).tanh(), _m(L, 2, 3).abs().neg()],
    "where": lambda L: L.where(_m(L, 3, 1, dtype=L.bool), _m(L, 4), 0.0),
    "clamp": lambda L: _m(L, 3, 4).clamp(-1, 1),
    "matmul_2d": lambda L: _m(L, 3, 4) @ _m(L, 4, 5),
    "matmul_batch": lambda L: _m(L, 2, 1, 3, 4) @ _m(L, 6, 4, 5),
    "matmul_vec": lambda L: [_m(L, 4) @ _m(L, 4, 5), _m(L, 3, 4) @ _m(L, 4), _m(L, 4) @ _m(L, 4)],
    "mm_bmm": lambda L: [L.mm(_m(L, 2, 3), _m(L, 3, 4)), L.bmm(_m(L, 5, 2, 3), _m(L, 5, 3, 4))],
    "sum": lambda L: [_m(L, 3, 4).sum(), _m(L, 3, 4).sum(0), _m(L, 3, 4).sum(1, keepdim=True)],
    "sum_int": lambda L: _m(L, 3, 4, dtype=L.int32).sum(1),
    "mean_var": lambda L: [_m(L, 3, 4).mean(-1), _m(L, 3, 4).var(0), _m(L, 2, 3, 4).std((0, 2))],
    "max_argmax": lambda L: [_m(L, 3, 4).amax(1), _m(L, 3, 4).argmax(0), _m(L, 3, 4).max()],
    "prod_all_any": lambda L: [_m(L, 3, 4).prod(1), (_m(L, 3) > 0).all(), (_m(L, 3) > 0).any()],
    "softmax": lambda L: [_m(L, 3, 4).softmax(-1), _m(L, 3, 4).log_softmax(0)],
    "cumsum": lambda L: _m(L, 3, 4).cumsum(1),
    "view": lambda L: _m(L, 4, 6).view(2, 12),
    "view_infer": lambda L: _m(L, 4, 6).view(-1, 3),
    "reshape_copy": lambda L: _m(L, 4, 6).t().reshape(24),
    "reshape_view": lambda L: _m(L, 4, 6).t().reshape(3, 2, 4),
    "transpose": lambda L: [_m(L, 2, 3, 4).transpose(0, 2), _m(L, 3, 4).t(), _m(L, 3, 4).T],
    "permute": lambda L: _m(L, 2, 3, 4).permute(2, 0, 1),
    "expand": lambda L: _m(L, 3, 1).expand(3, 5),
    "unsqueeze": lambda L: [_m(L, 3, 4).unsqueeze(1), _m(L, 3, 1).squeeze(1), _m(L, 1, 3).squeeze()],
    "flatten": lambda L: _m(L, 2, 3, 4).flatten(1),
    "contiguous": lambda L: _m(L, 3, 4).t().contiguous(),
    "clone": lambda L: _m(L, 3, 4).t().clone(),
    "slice": lambda L: [_m(L, 5, 6)[1:4], _m(L, 5, 6)[:, ::2], _m(L, 5, 6)[2], _m(L, 5, 6)[..., 3]],
    "slice_none": lambda L: _m(L, 5, 6)[None, 1:, -1],
    "narrow_select": lambda L: [_m(L, 5, 6).narrow(1, 2, 3), _m(L, 5, 6).select(0, 4)],
    "chunk_split": lambda L: [*_m(L, 6, 4).chunk(3), *_m(L, 6, 4).split([1, 5])],
    "unbind": lambda L: list(_m(L, 3, 4).unbind(1)),
    "diagonal": lambda L: _m(L, 4, 5).diagonal(),
    "cat": lambda L: [L.cat([_m(L, 2, 3), _m(L, 4, 3)]), L.cat([_m(L, 2, 3), _m(L, 2, 1)], 1)],
    "stack": lambda L: [L.stack([_m(L, 2, 3)] * 3), L.stack([_m(L, 2, 3)] * 2, dim=-1)],
    "to_dtype": lambda L: [_m(L, 3, 4).double(), _m(L, 3, 4).to(L.int64), _m(L, 3).bool()],
    "index_tensor": lambda L: _m(L, 5, 6)[_m(L, 2, 3, dtype=L.int64)],
    "index_select": lambda L: _m(L, 5, 6).index_select(1, _m(L, 4, dtype=L.int64)),
    "gather": lambda L: _m(L, 5, 6).gather(1, _m(L, 5, 2, dtype=L.int64)),
    "linear": lambda L: L.nn.functional.linear(_m(L, 8, 3), _m(L, 4, 3), _m(L, 4)),
    "relu_gelu": lambda L: [L.relu(_m(L, 3)), L.nn.functional.gelu(_m(L, 3, 2))],
    "layer_norm": lambda L: L.nn.functional.layer_norm(_m(L, 2, 5, 4), (4,)),
    "cross_entropy": lambda L: L.nn.functional.cross_entropy(
        _m(L, 8, 5), _m(L, 8, dtype=L.int64)),
    "mse": lambda L: L.nn.functional.mse_loss(_m(L, 8, 5), _m(L, 8, 5)),
    "inplace": lambda L: _m(L, 3, 4).add_(1).mul_(_m(L, 4)),
    "zero_fill": lambda L: [_m(L, 3, 4).zero_(), _m(L, 3, 4).fill_(2.0)],
    "setitem": lambda L: _assign(_m(L, 3, 4)),
    "einsum": lambda L: L.einsum("ij,jk->ik", _m(L, 2, 3), _m(L, 3, 4)),
    "sort_max": lambda L: [*_m(L, 3, 4).sort(1), *_m(L, 3, 4).max(1)],
    "masked_fill": lambda L: _m(L, 3, 4).masked_fill(_m(L, 3, 4) > 0, 1.0),
    "repeat_expand_as": lambda L: [_m(L, 3, 4).repeat(2, 1), _m(L, 1, 4).expand_as(_m(L, 3, 4))],
    "conv1d": lambda L: L.nn.functional.conv1d(_m(L, 2, 3, 10), _m(L, 4, 3, 3), padding=1),
    "embedding": lambda L: L.nn.functional.embedding(_m(L, 2, 5, dtype=L.long), _m(L, 10, 4)),
    "sdpa": lambda L: L.nn.functional.scaled_dot_product_attention(
        _m(L, 2, 3, 5, 8), _m(L, 2, 3, 5, 8), _m(L, 2, 3, 5, 8)),
    "dropout": lambda L: L.nn.functional.dropout(_m(L, 3, 4), 0.5),
    "deepcopy_clone": lambda L: [copy.deepcopy(_m(L, 3, 4)), _m(L, 3, 4).new_empty(2, 5)],
}


def _assign(t):
    t[1:, 0] = 3.0
    return t


def test_topk_shapes(torch, mode):
    # shapes only: hookgrad's CPU topk indices keep the argsort's strides, (4, 1) here where
    # PyTorch's are (2, 1); the meta backend reproduces what the CPU backend computes
    def run(L):
        return list(_m(L, 3, 4).topk(2))
    assert shape_info(run(hookgrad)) == shape_info(run(torch))


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_metadata_matches_torch(torch, mode, name):
    assert info(OPS[name](hookgrad)) == info(OPS[name](torch))


HUGE = {
    "arith": lambda L: (_m(L, 10**6, 10**6) * 2 + 1).exp(),
    "reduce": lambda L: [_m(L, 10**6, 10**6).sum(1), _m(L, 10**12).mean()],
    "matmul": lambda L: _m(L, 10**6, 10**5) @ _m(L, 10**5, 10**6),
    "views": lambda L: [_m(L, 10**12).view(10**6, -1).t()[5:, ::2], _m(L, 10**6, 1).expand(
        10**6, 10**6)],
    "cat": lambda L: L.cat([_m(L, 10**6, 10**6), _m(L, 10**6, 10**6)]),
    "linear": lambda L: L.nn.functional.linear(_m(L, 10**5, 10**5), _m(L, 10**6, 10**5)),
}


@pytest.mark.parametrize("name", sorted(HUGE))
def test_huge_tensors(torch, name):
    assert info(HUGE[name](hookgrad)) == info(HUGE[name](torch))


ERRORS = {
    "broadcast": lambda L: _m(L, 3) + _m(L, 4),
    "matmul": lambda L: _m(L, 3, 4) @ _m(L, 5, 6),
    "view": lambda L: _m(L, 3, 4).t().view(12),
    "reshape": lambda L: _m(L, 3, 4).reshape(5),
    "cat": lambda L: L.cat([_m(L, 2, 3), _m(L, 2, 4)]),
    "dim": lambda L: _m(L, 3, 4).sum(2),
    "equal": lambda L: L.equal(_m(L, 3), _m(L, 3)),
    "allclose": lambda L: L.allclose(_m(L, 3), _m(L, 3)),
    "unique": lambda L: _m(L, 3).unique(),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_shape_errors_match_torch(torch, mode, name):
    mine, theirs = err(lambda: ERRORS[name](hookgrad)), err(lambda: ERRORS[name](torch))
    assert theirs is not None and mine is not None and mine[0] == theirs[0], (mine, theirs)


def _backward(L):
    w = L.empty(4, 3, device="meta", requires_grad=True)
    b = L.empty(4, device="meta", requires_grad=True)
    x = L.empty(8, 3, device="meta")
    h = L.nn.functional.linear(x, w, b).tanh()
    loss = (h * h).sum()
    loss.backward()
    return [loss, w.grad, b.grad]


def test_backward_gives_meta_grads(torch, mode):
    assert info(_backward(hookgrad)) == info(_backward(torch))


def test_autograd_grad_on_meta(torch, mode):
    def run(L):
        x = L.empty(3, 5, device="meta", requires_grad=True)
        y = (x.exp() @ L.empty(5, 2, device="meta")).sum()
        (g,) = L.autograd.grad(y, x)
        return [y, g]
    assert shape_info(run(hookgrad)) == shape_info(run(torch))


def test_data_ptr_and_sizes(torch):
    def run(L):
        x = _m(L, 3, 4)
        return [x.data_ptr(), x.nbytes, x.element_size(), x.is_contiguous(), x.t().is_contiguous()]
    assert run(hookgrad) == run(torch)


def _big_transformer(L):
    layer = L.nn.TransformerEncoderLayer(4096, 32, 16384, device="meta", batch_first=True)
    y = layer(_m(L, 8, 2048, 4096))
    y.sum().backward()
    return [y] + [p.grad for p in layer.parameters()]


def test_huge_transformer_layer_costs_no_memory(torch):
    """A layer of ~200M parameters on a batch of 64M activations: metadata only."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    mine = info(_big_transformer(hookgrad))
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert mine == info(_big_transformer(torch))
    assert grown_mib < 200, grown_mib


LAYOUTS = {
    "to_channels_last": lambda L: _m(L, 2, 3, 4, 5).to(memory_format=L.channels_last),
    "contiguous_cl": lambda L: _m(L, 2, 3, 1, 5).contiguous(memory_format=L.channels_last),
    "empty_like_cl": lambda L: L.empty_like(_m(L, 2, 3, 4, 5).to(memory_format=L.channels_last)),
    "zeros_like_contig": lambda L: L.zeros_like(
        _m(L, 2, 3, 4, 5).to(memory_format=L.channels_last), memory_format=L.contiguous_format),
    "like_of_slice": lambda L: L.empty_like(
        _m(L, 2, 3, 4, 5).to(memory_format=L.channels_last)[:, :2]),
    "like_of_transposed": lambda L: L.zeros_like(_m(L, 4, 2).t()),
    "clone_cl": lambda L: _m(L, 2, 3, 4, 5).to(memory_format=L.channels_last).clone(),
    "back_to_contig": lambda L: _m(L, 2, 3, 4, 5).to(memory_format=L.channels_last).contiguous(),
}


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_memory_formats_match_torch(torch, name):
    def run(L):
        t = LAYOUTS[name](L)
        return [info(t), t.is_contiguous(), t.is_contiguous(memory_format=L.channels_last)]
    assert run(hookgrad) == run(torch)
