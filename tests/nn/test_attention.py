"""Attention against the oracle: ``scaled_dot_product_attention``, ``MultiheadAttention`` (masks,
weights, batch_first, kdim/vdim, bias_kv, zero attention), ``TransformerEncoderLayer`` and
``TransformerEncoder`` (eval mode or dropout 0, where PyTorch is deterministic)."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from hookgrad.testing._oracle import assert_same
from tests.nn._compare import compare_module

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(21)


def randn(*shape):
    return RNG.standard_normal(shape).astype("float32")


Q, K, V = randn(2, 3, 4, 8), randn(2, 3, 5, 8), randn(2, 3, 5, 6)
BOOL_MASK = RNG.random((4, 5)) > 0.3
BOOL_MASK[1] = False  # a row that may attend nothing: PyTorch returns zeros there
FLOAT_MASK = randn(4, 5)

SDPA = {
    "plain": {},
    "scale": {"scale": 0.3},
    "bool_mask": {"attn_mask": "bool"},
    "float_mask": {"attn_mask": "float"},
    "causal": {"is_causal": True},
}


@pytest.mark.parametrize("name", list(SDPA))
@pytest.mark.parametrize("rank", [3, 4])
def test_scaled_dot_product_attention(torch, name, rank):
    arrays = [a[0] if rank == 3 else a for a in (Q, K, V)]
    masks = {"bool": BOOL_MASK, "float": FLOAT_MASK}

    def scenario(lib, log):
        kw = dict(SDPA[name])
        if "attn_mask" in kw:
            kw["attn_mask"] = lib.tensor(masks[kw["attn_mask"]].tolist())
        q, k, v = (lib.tensor(a.tolist(), requires_grad=True) for a in arrays)
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, **kw)
        out.backward(lib.ones(*out.shape))
        return out, q.grad, k.grad, v.grad

    assert_same(scenario, torch, rtol=1e-5, atol=1e-5)


def test_sdpa_grouped_query_and_causal_with_mask_error(torch):
    q, k = randn(1, 4, 3, 2), randn(1, 2, 3, 2)

    def scenario(lib, log):
        qt, kt = (
            lib.tensor(q.tolist(), requires_grad=True),
            lib.tensor(k.tolist(), requires_grad=True),
        )
        out = lib.nn.functional.scaled_dot_product_attention(qt, kt, kt, enable_gqa=True)
        out.sum().backward()
        return out, qt.grad, kt.grad

    assert_same(scenario, torch)
    assert_same(
        lambda lib, log: lib.nn.functional.scaled_dot_product_attention(
            lib.ones(2, 3, 4),
            lib.ones(2, 3, 4),
            lib.ones(2, 3, 4),
            attn_mask=lib.ones(3, 3),
            is_causal=True,
        ),
        torch,
        check_message=False,
    )


def _mha(lib, kw, call):
    mha = lib.nn.MultiheadAttention(8, 2, **kw)

    class Wrapped(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = mha

        def forward(self, x, y):
            out, w = call(lib, self.mha, x, y)
            return out.reshape(-1) if w is None else lib.cat([out.reshape(-1), w.reshape(-1)])

    return Wrapped()


def _masks(lib):
    pad = lib.tensor([[False, False, True, False, True], [False] * 5])
    causal = lib.triu(lib.full((4, 4), float("-inf")), 1)
    return pad, causal


MHA_CALLS = {
    "self": ({}, lambda lib, m, x, y: m(x, x, x)),
    "self_no_weights": ({}, lambda lib, m, x, y: m(x, x, x, need_weights=False)),
    "per_head_weights": ({}, lambda lib, m, x, y: m(x, x, x, average_attn_weights=False)),
    "cross_padding_mask": ({}, lambda lib, m, x, y: m(x, y, y, key_padding_mask=_masks(lib)[0])),
    "cross_padding_sdpa": (
        {},
        lambda lib, m, x, y: m(x, y, y, key_padding_mask=_masks(lib)[0], need_weights=False),
    ),
    "causal": (
        {},
        lambda lib, m, x, y: m(
            x, x, x, attn_mask=_masks(lib)[1], is_causal=True, need_weights=False
        ),
    ),
    "bool_attn_mask": (
        {"bias": False},
        lambda lib, m, x, y: m(x, y, y, attn_mask=lib.tensor(BOOL_MASK.tolist()).logical_not()),
    ),
    "bias_kv_zero_attn": (
        {"add_bias_kv": True, "add_zero_attn": True},
        lambda lib, m, x, y: m(x, y, y, key_padding_mask=_masks(lib)[0]),
    ),
    "kdim_vdim": ({"kdim": 3, "vdim": 5}, lambda lib, m, x, y: m(x, y[..., :3], y[..., 3:])),
}


@pytest.mark.parametrize("name", list(MHA_CALLS))
@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention(torch, name, batch_first):
    kw, call = MHA_CALLS[name]
    x, y = randn(4, 2, 8), randn(5, 2, 8)
    if batch_first:
        x, y = x.transpose(1, 0, 2).copy(), y.transpose(1, 0, 2).copy()
    uses_y = name not in ("self", "self_no_weights", "per_head_weights", "causal")
    compare_module(
        torch,
        lambda lib: _mha(lib, {**kw, "batch_first": batch_first}, call),
        [(x, True), (y, uses_y)],
        check_name=False,
        atol=1e-5,
        rtol=1e-4,
    )


def test_multihead_attention_unbatched_and_names(torch):
    compare_module(
        torch,
        lambda lib: _mha(lib, {}, lambda lib, m, x, y: m(x, y, y)),
        [(randn(4, 8), True), (randn(5, 8), True)],
        check_name=False,
    )
    for lib in (torch, hookgrad):
        m = lib.nn.MultiheadAttention(8, 2, kdim=3)
        assert [n for n, _ in m.named_parameters()] == [
            "q_proj_weight",
            "k_proj_weight",
            "v_proj_weight",
            "in_proj_bias",
            "out_proj.weight",
            "out_proj.bias",
        ]
    assert repr(hookgrad.nn.MultiheadAttention(8, 2)) == repr(torch.nn.MultiheadAttention(8, 2))
    m = hookgrad.nn.MultiheadAttention(8, 2)
    assert float(m.in_proj_bias.abs().sum()) == 0.0 and float(m.out_proj.bias.abs().sum()) == 0
    bound = (6 / (8 + 24)) ** 0.5  # xavier_uniform_ on the packed [3E, E] weight
    assert float(m.in_proj_weight.abs().max()) <= bound


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"norm_first": True, "activation": "gelu", "batch_first": True},
        {"bias": False, "layer_norm_eps": 1e-3},
    ],
)
def test_transformer_encoder_layer(torch, kw):
    def make(lib):
        return lib.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, **kw)

    def make_with_dropout(lib):
        return lib.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, **kw)

    compare_module(torch, make, [(randn(4, 3, 8), True)])
    # with dropout, evaluation mode is deterministic in both libraries
    compare_module(torch, make_with_dropout, [(randn(4, 3, 8), True)], modes=(False,))


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_transformer_encoder_with_masks(torch):
    def make(lib):
        layer = lib.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
        enc = lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(8))

        class Wrapped(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = enc

            def forward(self, x):
                pad = lib.tensor([[False, False, False, True], [False] * 4, [True] + [False] * 3])
                causal = lib.ones(4, 4, dtype=lib.bool).triu(1)  # same mask dtypes: no warning
                return self.enc(x, mask=causal, src_key_padding_mask=pad)

        return Wrapped()

    compare_module(torch, make, [(randn(4, 3, 8), True)], check_name=False)
