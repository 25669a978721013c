"""``nn.TransformerEncoder``'s inference fast path against PyTorch: zeros at padded positions
(NOTE [Encoder fast path]), the construction warning, and every condition that turns it off."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad

X = np.random.default_rng(3).standard_normal((2, 5, 8)).astype(np.float32)
PAD = [[False, False, False, True, True], [False] * 5]
NOT_LEFT_ALIGNED = [[True, False, False, False, False], [False] * 5]


def _encoder(lib, batch_first=True, norm=True, **kw):
    lib.manual_seed(0)
    layer = lib.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=batch_first, **kw)
    enc = lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(8) if norm else None)
    with lib.no_grad():
        for i, p in enumerate(enc.parameters()):
            p.copy_(lib.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 + i % 3))
    return enc


SCENARIOS = {
    "eval_no_grad": lambda lib, enc, x, m: (enc.eval(), lib.no_grad().__enter__(), enc(x, src_key_padding_mask=m))[2],
    "eval_grad": lambda lib, enc, x, m: enc.eval()(x, src_key_padding_mask=m),
    "train_no_grad": lambda lib, enc, x, m: (lib.no_grad().__enter__(), enc(x, src_key_padding_mask=m))[1],
    "no_mask": lambda lib, enc, x, m: (enc.eval(), lib.no_grad().__enter__(), enc(x))[2],
    "not_left_aligned": lambda lib, enc, x, m: (enc.eval(), lib.no_grad().__enter__(), enc(
        x, src_key_padding_mask=lib.tensor(NOT_LEFT_ALIGNED)))[2],
    "switched_off": lambda lib, enc, x, m: _switched_off(lib, enc, x, m),
    "params_frozen": lambda lib, enc, x, m: (enc.eval(), enc.requires_grad_(False), enc(
        x, src_key_padding_mask=m))[2],
}


def _switched_off(lib, enc, x, m):
    lib.backends.mha.set_fastpath_enabled(False)
    try:
        with lib.no_grad():
            return enc.eval()(x, src_key_padding_mask=m)
    finally:
        lib.backends.mha.set_fastpath_enabled(True)


@pytest.mark.oracle
@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_fast_path_outputs_match_torch(torch, name):
    def run(lib):
        enc = _encoder(lib)
        grad_was = lib.is_grad_enabled()
        try:
            out = SCENARIOS[name](lib, enc, lib.tensor(X), lib.tensor(PAD))
        finally:
            lib.set_grad_enabled(grad_was)
        return out.detach().numpy()
    np.testing.assert_allclose(run(hookgrad), run(torch), rtol=1e-5, atol=1e-5)


@pytest.mark.oracle
def test_construction_warnings_match_torch(torch):
    def warned(lib, **kw):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            enc = _encoder(lib, **kw)
        return [str(w.message) for w in caught], enc.use_nested_tensor
    for kw in ({}, {"batch_first": False}, {"norm_first": True}, {"bias": False},
               {"activation": hookgrad.nn.functional.silu}, {"layer_norm_eps": 1e-6}):
        theirs_kw = {k: (torch.nn.functional.silu if k == "activation" else v)
                     for k, v in kw.items()}
        assert warned(hookgrad, **kw) == warned(torch, **theirs_kw), kw
