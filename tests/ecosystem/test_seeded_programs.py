"""Widely copied training programs, seeded and run unmodified on both libraries, give PyTorch's
numbers: the same initial weights, dropout masks, shuffles and samples (the random stream is
PyTorch's), so losses agree to float32 rounding and sampled actions and words agree exactly."""

from __future__ import annotations

import math

import numpy as np
import pytest

import hookgrad
from tests._cpu import pytorch_bernoulli_is_portable

# dropout masks are PyTorch's own only where PyTorch uses its portable Bernoulli kernel
DROP = 0.2 if pytorch_bernoulli_is_portable() else 0.0


def _word_lm(torch, kind):
    """The word-language-model example's RNN/Transformer models, a few SGD steps, sampling."""
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    ntokens = 30
    data = torch.randint(0, ntokens, (120,)).view(-1, 4).contiguous()
    torch.manual_seed(1)
    if kind == "Transformer":
        layer = nn.TransformerEncoderLayer(16, 2, 32, DROP)
        model = nn.ModuleDict({"emb": nn.Embedding(ntokens, 16), "enc": nn.TransformerEncoder(
            layer, 2, enable_nested_tensor=False), "dec": nn.Linear(16, ntokens)})
        mask = torch.log(torch.tril(torch.ones(10, 10)))

        def run(d, hidden):
            h = model["enc"](model["emb"](d) * math.sqrt(16), mask=mask[:len(d), :len(d)])
            return F.log_softmax(model["dec"](h), -1).view(-1, ntokens), None
        hidden = None
    else:
        rnn = {"LSTM": nn.LSTM, "GRU": nn.GRU, "RNN": nn.RNN}[kind](16, 16, 2, dropout=DROP)
        model = nn.ModuleDict({"emb": nn.Embedding(ntokens, 16), "rnn": rnn,
                               "dec": nn.Linear(16, ntokens), "drop": nn.Dropout(DROP)})
        model["dec"].weight = model["emb"].weight  # tied weights, as the example offers

        def run(d, hidden):
            out, hidden = model["rnn"](model["drop"](model["emb"](d)), hidden)
            return F.log_softmax(model["dec"](model["drop"](out)), -1).view(-1, ntokens), hidden
        zeros = torch.zeros(2, 4, 16)
        hidden = (zeros, zeros.clone()) if kind == "LSTM" else zeros
    losses = []
    for i in range(0, data.size(0) - 1, 10):
        d, target = data[i:i + 10], data[i + 1:i + 11].reshape(-1)
        if hidden is not None:
            hidden = tuple(h.detach() for h in hidden) if isinstance(hidden, tuple) \
                else hidden.detach()
        model.zero_grad()
        out, hidden = run(d[:len(target) // 4], hidden)
        loss = F.nll_loss(out, target)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-5.0)
        losses.append(loss.item())
    words = torch.multinomial(out[-1].exp(), 5, replacement=True).tolist()
    return losses, words


def _vae_and_policy(torch):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(1)
    enc, mu_head, lv_head, dec = nn.Linear(16, 12), nn.Linear(12, 4), nn.Linear(12, 4), \
        nn.Linear(4, 16)
    params = [p for m in (enc, mu_head, lv_head, dec) for p in m.parameters()]
    opt = torch.optim.Adam(params, lr=1e-2)
    data = torch.rand(48, 16)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data), batch_size=16,
                                         shuffle=True)
    losses = []
    for _ in range(2):
        for (x,) in loader:
            h = F.relu(enc(x))
            mu, logvar = mu_head(h), lv_head(h)
            z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
            recon = torch.sigmoid(dec(z))
            loss = F.binary_cross_entropy(recon, x, reduction="sum") \
                - 0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
    policy = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(DROP), nn.Linear(16, 2))
    actions = []
    state = torch.randn(4)
    for _ in range(12):
        dist = torch.distributions.Categorical(probs=F.softmax(policy(state), -1))
        actions.append(int(dist.sample()))
        state = state + 0.1 * torch.randn(4)
    return losses, actions


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN", "Transformer"])
def test_word_language_model_matches_pytorch(torch, kind):
    (got, got_words), (want, want_words) = _word_lm(hookgrad, kind), _word_lm(torch, kind)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert got_words == want_words


def test_vae_and_policy_gradient_match_pytorch(torch):
    (got, got_actions), (want, want_actions) = _vae_and_policy(hookgrad), _vae_and_policy(torch)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert got_actions == want_actions
