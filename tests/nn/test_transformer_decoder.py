"""`TransformerDecoderLayer`, `TransformerDecoder` and `Transformer` against PyTorch (dropout 0
or evaluation mode, where PyTorch is deterministic): values, gradients, state-dict keys."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.nn._compare import compare_module, copy_state, to_lib

pytestmark = [pytest.mark.oracle,
              pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")]

RNG = np.random.default_rng(5)


def randn(*shape):
    return RNG.standard_normal(shape).astype("float32")


@pytest.mark.parametrize("kw", [{}, {"norm_first": True, "activation": "gelu",
                                     "batch_first": True}, {"bias": False}])
def test_decoder_layer(torch, kw):
    def make(lib):
        layer = lib.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, **kw)

        class WithMemory(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = layer

            def forward(self, tgt, memory):
                return self.layer(tgt, memory)

        return WithMemory()

    mem = randn(4, 5, 8) if kw.get("batch_first") else randn(5, 3, 8)
    compare_module(torch, make, [(randn(4, 3, 8), True), (mem, True)], check_name=False)


def test_decoder_stack_with_masks(torch):
    def make(lib):
        layer = lib.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0)
        dec = lib.nn.TransformerDecoder(layer, 2, norm=lib.nn.LayerNorm(8))

        class Wrapped(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.dec = dec

            def forward(self, tgt, memory):
                causal = lib.nn.Transformer.generate_square_subsequent_mask(4)
                pad = lib.tensor([[False, False, True], [False] * 3])
                return self.dec(tgt, memory, tgt_mask=causal, memory_key_padding_mask=pad)

        return Wrapped()

    tm, hm = compare_module(torch, make, [(randn(4, 2, 8), True), (randn(3, 2, 8), True)],
                            check_name=False)
    assert list(tm.state_dict()) == list(hm.state_dict())


def test_full_transformer(torch):
    def make(lib):
        return lib.nn.Transformer(8, 2, 2, 1, 16, dropout=0.0, batch_first=True)

    tm, hm = make(torch), make(hookgrad)
    assert list(tm.state_dict()) == list(hm.state_dict())
    copy_state(tm, hm, hookgrad)
    src, tgt = randn(2, 5, 8), randn(2, 3, 8)
    outs = []
    for lib, m in ((torch, tm), (hookgrad, hm)):
        s, t = to_lib(lib, src, True), to_lib(lib, tgt, True)
        mask = lib.nn.Transformer.generate_square_subsequent_mask(3)
        out = m(s, t, tgt_mask=mask)
        out.sum().backward()
        outs.append((out.detach().numpy(), s.grad.numpy(), t.grad.numpy(),
                     m.encoder.layers[0].linear1.weight.grad.numpy()))
    for a, b in zip(outs[1], outs[0]):
        np.testing.assert_allclose(a, b, atol=1e-4, rtol=1e-4)
    for lib, m in ((torch, tm), (hookgrad, hm)):
        with pytest.raises(RuntimeError, match="batch number"):
            m(lib.ones(2, 5, 8), lib.ones(3, 3, 8))
        with pytest.raises(RuntimeError, match="feature number"):
            m(lib.ones(2, 5, 4), lib.ones(2, 3, 4))


def test_square_subsequent_mask(torch):
    a = torch.nn.Transformer.generate_square_subsequent_mask(3)
    b = hookgrad.nn.Transformer.generate_square_subsequent_mask(3)
    np.testing.assert_array_equal(b.numpy(), a.numpy())
    assert str(b.dtype) == str(a.dtype)
