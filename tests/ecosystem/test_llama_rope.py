"""LLaMA's rotary position embedding, unmodified, inside a small attention model trained a few
steps: the losses and every gradient equal PyTorch's (complex64 views, polar, complex mul).

The functions below are Meta's LLaMA ``model.py`` code as published (``precompute_freqs_cis``,
``reshape_for_broadcast``, ``apply_rotary_emb`` and the attention block, without the model
parallel layers and KV cache); `torch` is whichever library the scenario runs on.
"""

from __future__ import annotations

import math

import numpy as np

import hookgrad


def _llama(torch):  # noqa: C901 - the published code, kept as one block
    nn = torch.nn
    F = torch.nn.functional

    def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
        freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
        t = torch.arange(end, device=freqs.device)  # type: ignore
        freqs = torch.outer(t, freqs).float()  # type: ignore
        freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # complex64
        return freqs_cis

    def reshape_for_broadcast(freqs_cis, x):
        ndim = x.ndim
        assert 0 <= 1 < ndim
        assert freqs_cis.shape == (x.shape[1], x.shape[-1])
        shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
        return freqs_cis.view(*shape)

    def apply_rotary_emb(xq, xk, freqs_cis):
        xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
        freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
        xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
        xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
        return xq_out.type_as(xq), xk_out.type_as(xk)

    class Attention(nn.Module):
        def __init__(self, dim, n_heads):
            super().__init__()
            self.n_heads = n_heads
            self.head_dim = dim // n_heads
            self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False)
            self.wk = nn.Linear(dim, n_heads * self.head_dim, bias=False)
            self.wv = nn.Linear(dim, n_heads * self.head_dim, bias=False)
            self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False)

        def forward(self, x, freqs_cis, mask):
            bsz, seqlen, _ = x.shape
            xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
            xq = xq.view(bsz, seqlen, self.n_heads, self.head_dim)
            xk = xk.view(bsz, seqlen, self.n_heads, self.head_dim)
            xv = xv.view(bsz, seqlen, self.n_heads, self.head_dim)
            xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)
            xq = xq.transpose(1, 2)
            keys = xk.transpose(1, 2)
            values = xv.transpose(1, 2)
            scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
            if mask is not None:
                scores = scores + mask
            scores = F.softmax(scores.float(), dim=-1).type_as(xq)
            output = torch.matmul(scores, values)
            output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
            return self.wo(output)

    class Tiny(nn.Module):
        def __init__(self, vocab, dim, n_heads, seqlen):
            super().__init__()
            self.tok = nn.Embedding(vocab, dim)
            self.attn = Attention(dim, n_heads)
            self.out = nn.Linear(dim, vocab, bias=False)
            self.freqs_cis = precompute_freqs_cis(dim // n_heads, seqlen * 2)

        def forward(self, tokens):
            seqlen = tokens.shape[1]
            h = self.tok(tokens)
            freqs_cis = self.freqs_cis[:seqlen]
            mask = torch.full((seqlen, seqlen), float("-inf"), device=tokens.device)
            mask = torch.triu(mask, diagonal=1)
            h = h + self.attn(h, freqs_cis, mask)
            return self.out(h)

    return Tiny, precompute_freqs_cis


def _train(lib, steps=4):
    tiny, precompute = _llama(lib)
    model = tiny(vocab=11, dim=16, n_heads=2, seqlen=6)
    rng = np.random.default_rng(0)
    with lib.no_grad():  # the same initial weights in both libraries
        for p in model.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)) * 0.3, dtype=lib.float32))
    opt = lib.optim.AdamW(model.parameters(), lr=1e-2)
    tokens = lib.tensor(rng.integers(0, 11, (3, 6)))
    targets = lib.tensor(rng.integers(0, 11, (3, 6)))
    losses, grads = [], []
    for _ in range(steps):
        opt.zero_grad()
        logits = model(tokens)
        loss = lib.nn.functional.cross_entropy(logits.view(-1, 11), targets.view(-1))
        loss.backward()
        losses.append(loss.item())
        grads.append([p.grad.numpy().copy() for p in model.parameters()])
        opt.step()
    freqs = precompute(8, 12)
    return losses, grads, lib.view_as_real(freqs).numpy().copy(), str(freqs.dtype)


def test_llama_rotary_attention_trains_as_torch(torch):
    ours, theirs = _train(hookgrad), _train(torch)
    assert ours[3] == theirs[3] == "torch.complex64"
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    for step_ours, step_theirs in zip(ours[1], theirs[1]):
        for g_ours, g_theirs in zip(step_ours, step_theirs):
            np.testing.assert_allclose(g_ours, g_theirs, rtol=1e-4, atol=1e-6)
