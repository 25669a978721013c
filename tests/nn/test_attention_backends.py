"""``torch.nn.attention`` against PyTorch's CPU build: ``sdpa_kernel`` switches (shared with
``torch.backends.cuda``), priority order, "no viable backend", the causal biases and the
flex-attention mask helpers."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import hookgrad
from tests._errors import err
from tests.nn._compare import to_lib


def _backend_sets(A):
    B = A.SDPBackend
    return [B.MATH, B.FLASH_ATTENTION, B.EFFICIENT_ATTENTION, B.CUDNN_ATTENTION, B.OVERRIDEABLE,
            B.ERROR, [B.EFFICIENT_ATTENTION, B.MATH], [B.CUDNN_ATTENTION, B.FLASH_ATTENTION]]


def _state(lib):
    c = lib.backends.cuda
    return (c.flash_sdp_enabled(), c.math_sdp_enabled(), c.mem_efficient_sdp_enabled(),
            c.cudnn_sdp_enabled(), [int(b) for b in lib.nn.attention._cur_sdpa_kernel_backends()])


def _run(lib, backends, q):
    with lib.nn.attention.sdpa_kernel(backends) as ctx:
        inside = _state(lib)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch explains each disabled kernel
            out = err(lambda: lib.nn.functional.scaled_dot_product_attention(q, q, q))
    return ctx, inside, out, _state(lib)


def test_sdpa_kernel_matches_torch(torch):
    q = np.random.default_rng(0).standard_normal((1, 2, 3, 4))
    for bt, bh in zip(_backend_sets(torch.nn.attention), _backend_sets(hookgrad.nn.attention)):
        assert _run(hookgrad, bh, to_lib(hookgrad, q)) == _run(torch, bt, to_lib(torch, q))
    for lib in (torch, hookgrad):
        A = lib.nn.attention
        assert {k: int(v) for k, v in A.SDPBackend.__members__.items()} == {
            k: int(v) for k, v in torch.nn.attention.SDPBackend.__members__.items()}
        assert lib.backends.cuda.SDPBackend is A.SDPBackend
        assert A.WARN_FOR_UNFUSED_KERNELS is False
    assert err(lambda: hookgrad.nn.attention.sdpa_kernel("math").__enter__()) == err(
        lambda: torch.nn.attention.sdpa_kernel("math").__enter__())


def test_priority_order(torch):
    out = []
    for lib in (torch, hookgrad):
        A = lib.nn.attention
        B = A.SDPBackend
        with A.sdpa_kernel([B.MATH, B.FLASH_ATTENTION], set_priority=True):
            inside = [int(b) for b in A._cur_sdpa_kernel_backends(with_priority=True)]
        out.append((inside, [int(b) for b in A._cur_sdpa_kernel_backends(with_priority=True)]))
    assert out[0] == out[1]


@pytest.mark.parametrize("make,size", [("causal_upper_left", (3, 5)),
                                       ("causal_lower_right", (3, 5)),
                                       ("causal_lower_right", (4, 4))])
def test_causal_bias(torch, make, size):
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((2, 2, size[0], 4)), rng.standard_normal((2, 2, size[1], 4))
    res = []
    for lib in (torch, hookgrad):
        bias = getattr(importlib.import_module(f"{lib.__name__}.nn.attention.bias"), make)(*size)
        qt, kt = to_lib(lib, q, True), to_lib(lib, k, True)
        out = lib.nn.functional.scaled_dot_product_attention(qt, kt, kt, attn_mask=bias)
        out.sum().backward()
        res.append((bias._materialize().numpy(), repr(bias), out.detach().numpy(),
                    qt.grad.numpy(), kt.grad.numpy(), bias.variant.name, int(bias.variant)))
        assert isinstance(bias, lib.Tensor)
        assert err(lambda: lib.nn.functional.scaled_dot_product_attention(
            qt, kt, kt, attn_mask=bias, is_causal=True)) == (
            "ValueError", "CausalBias should not be used with causal=True")
    for t, h in zip(*res):
        if isinstance(t, np.ndarray):
            np.testing.assert_allclose(h, t, atol=1e-12)
        else:
            assert h == t


def test_causal_bias_checks(torch):
    for lib in (torch, hookgrad):
        B = importlib.import_module(f"{lib.__name__}.nn.attention.bias")
        with pytest.warns(UserWarning, match="produce NaNs"):
            B.causal_lower_right(4, 2)
        assert err(lambda: B.causal_upper_left(2)) == ("AssertionError",
                                                       "causal_upper_left only supports 2D tensors")
        assert err(lambda: B.CausalBias(1, 2, 2))[0] == "AssertionError"


def test_flex_mask_helpers(torch):
    def causal(b, h, q, kv):
        return q >= kv

    def window(b, h, q, kv):
        return (q - kv) <= 1

    def score(s, b, h, q, kv):
        return s + (h * 0.0) - (kv > q + 1).float() * float("inf")

    for fn_name, mods in (("and_masks", (causal, window)), ("or_masks", (causal, window))):
        outs = []
        for lib in (torch, hookgrad):
            FA = importlib.import_module(f"{lib.__name__}.nn.attention.flex_attention")
            mask = getattr(FA, fn_name)(*mods)
            outs.append((FA.create_mask(mask, 2, 3, 4, 5, device="cpu").numpy(),
                         FA.create_mask(FA.noop_mask, None, None, 2, 3, device="cpu").numpy(),
                         FA.create_mask(score, 1, 2, 3, 4, device="cpu").numpy()))
        for t, h in zip(*outs):
            assert h.shape == t.shape
            np.testing.assert_array_equal(h, t)
    assert err(lambda: hookgrad.nn.attention.flex_attention.or_masks(1)) == err(
        lambda: importlib.import_module("torch.nn.attention.flex_attention").or_masks(1))
    aux = hookgrad.nn.attention.flex_attention.AuxRequest(lse=True)
    theirs = importlib.import_module("torch.nn.attention.flex_attention").AuxRequest
    assert aux._fields == theirs._fields and aux.lse
    with pytest.raises(NotImplementedError):
        hookgrad.nn.attention.flex_attention.flex_attention(*[hookgrad.ones(1, 1, 2, 2)] * 3)


def test_flash_impl_registry():
    A = hookgrad.nn.attention
    removed = []

    class Handle:
        def remove(self):
            removed.append(True)

    A.register_flash_attention_impl("Mine", register_fn=Handle)
    try:
        assert "Mine" in A.list_flash_attention_impls()
        A.activate_flash_attention_impl("Mine")
        assert A.current_flash_attention_impl() == "Mine"
        A.restore_flash_attention_impl()
        assert removed == [True] and A.current_flash_attention_impl() is None
        with pytest.raises(ValueError, match="Unknown flash attention impl 'Nope'"):
            A.activate_flash_attention_impl("Nope")
    finally:
        A._FLASH_ATTENTION_IMPLS.pop("Mine")
