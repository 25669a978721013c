"""Real-model workloads: a nanoGPT training step, an embedding + LSTM language model, MNIST's CNN.

Each is written once against ``lib`` (torch or hookgrad) as a user would write it, with the same
weights (`_load`: every parameter drawn from one seeded generator in ``named_parameters`` order,
which both libraries share) and the same data. Dropout draws different masks in the two
libraries, so the first value compared by the harness is taken in ``eval()`` mode; the timed
steps run in training mode.
"""

from __future__ import annotations

import math

import numpy as np

GPT = {"n_layer": 4, "n_head": 4, "n_embd": 128, "block": 64, "batch": 12, "vocab": 65}


def _load(lib, model, seed):
    """Fill every parameter from one generator: matrices N(0, 0.02), vectors near 0 or 1."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for name, p in model.named_parameters():
            shape = tuple(p.shape)
            if len(shape) >= 2:
                a = rng.normal(0.0, 0.02, size=shape)
            elif name.endswith("weight"):  # a norm's scale
                a = 1.0 + rng.normal(0.0, 0.02, size=shape)
            else:
                a = rng.normal(0.0, 0.02, size=shape)
            p.copy_(lib.tensor(a.astype(np.float32)))


def _gpt_classes(lib, flash):
    nn, F = lib.nn, lib.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c_attn = nn.Linear(c["n_embd"], 3 * c["n_embd"])
            self.c_proj = nn.Linear(c["n_embd"], c["n_embd"])
            self.attn_dropout = nn.Dropout(0.0)
            self.resid_dropout = nn.Dropout(0.0)
            self.n_head, self.n_embd = c["n_head"], c["n_embd"]
            t = c["block"]
            self.register_buffer("bias", lib.tril(lib.ones(t, t)).view(1, 1, t, t))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            if flash:
                y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0,
                                                   is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
                att = F.softmax(att, dim=-1)
                att = self.attn_dropout(att)
                y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    class MLP(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c_fc = nn.Linear(c["n_embd"], 4 * c["n_embd"])
            self.c_proj = nn.Linear(4 * c["n_embd"], c["n_embd"])
            self.dropout = nn.Dropout(0.0)

        def forward(self, x):
            return self.dropout(self.c_proj(F.gelu(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.ln_1 = nn.LayerNorm(c["n_embd"])
            self.attn = CausalSelfAttention(c)
            self.ln_2 = nn.LayerNorm(c["n_embd"])
            self.mlp = MLP(c)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPTModel(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(c["vocab"], c["n_embd"]),
                wpe=nn.Embedding(c["block"], c["n_embd"]),
                drop=nn.Dropout(0.0),
                h=nn.ModuleList([Block(c) for _ in range(c["n_layer"])]),
                ln_f=nn.LayerNorm(c["n_embd"]),
            ))
            self.lm_head = nn.Linear(c["n_embd"], c["vocab"], bias=False)
            self.transformer.wte.weight = self.lm_head.weight  # weight tying

        def forward(self, idx, targets):
            t = idx.size(1)
            pos = lib.arange(0, t, dtype=lib.long)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for block in self.transformer.h:
                x = block(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)

    return GPTModel


def gpt_setup(lib, flash=False):
    """The nanoGPT model, a batch ``(x, y)`` and its AdamW (weight-decay groups)."""
    c = GPT
    model = _gpt_classes(lib, flash)(c)
    _load(lib, model, 10)
    data = np.random.default_rng(11).integers(0, c["vocab"], size=(c["batch"], c["block"] + 1))
    x = lib.tensor(data[:, :-1].astype(np.int64))
    y = lib.tensor(data[:, 1:].astype(np.int64))
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    opt = lib.optim.AdamW(groups, lr=6e-4, betas=(0.9, 0.95))
    return model, x, y, opt


def gpt_step(lib, model, opt, run, x, y):
    """One nanoGPT training step through `run` (the model, or it compiled): the loss."""
    loss = run(x, y)
    loss.backward()
    lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


def gpt(lib, flash=False):
    """One nanoGPT training step: AdamW with weight-decay groups, clip_grad_norm_(1.0)."""
    model, x, y, opt = gpt_setup(lib, flash)
    first = float(model(x, y).item())

    def step():
        gpt_step(lib, model, opt, model, x, y)

    return step, first


def lstm_lm(lib, vocab=1000, emb=64, hidden=128, seq=35, batch=20):
    """One step of a word-level LSTM language model (PyTorch's word_language_model, smaller)."""
    nn, F = lib.nn, lib.nn.functional

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Embedding(vocab, emb)
            self.rnn = nn.LSTM(emb, hidden, batch_first=True)
            self.decoder = nn.Linear(hidden, vocab)

        def forward(self, idx):
            out, _ = self.rnn(self.encoder(idx))
            return self.decoder(out)

    model = RNNModel()
    _load(lib, model, 12)
    data = np.random.default_rng(13).integers(0, vocab, size=(batch, seq + 1))
    x = lib.tensor(data[:, :-1].astype(np.int64))
    y = lib.tensor(data[:, 1:].reshape(-1).astype(np.int64))
    opt = lib.optim.SGD(model.parameters(), lr=0.5)

    def loss():
        return F.cross_entropy(model(x).view(-1, vocab), y)
    first = float(loss().item())

    def step():
        opt.zero_grad()
        loss().backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()

    return step, first


def mnist_cnn(lib, batch=64):
    """One step of PyTorch's MNIST example: two convs, max-pool, dropout, Adadelta."""
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = self.dropout1(F.max_pool2d(x, 2))
            x = self.dropout2(F.relu(self.fc1(lib.flatten(x, 1))))
            return F.log_softmax(self.fc2(x), dim=1)

    model = Net()
    _load(lib, model, 14)
    rng = np.random.default_rng(15)
    x = lib.tensor(rng.normal(size=(batch, 1, 28, 28)).astype(np.float32))
    y = lib.tensor(rng.integers(0, 10, size=batch).astype(np.int64))
    opt = lib.optim.Adadelta(model.parameters(), lr=1.0)
    model.eval()  # the compared first value without dropout's random masks
    first = float(F.nll_loss(model(x), y).item())
    model.train()

    def step():
        opt.zero_grad()
        F.nll_loss(model(x), y).backward()
        opt.step()

    return step, first


# name -> (factory(lib) -> (step, first_value), unit divisor, unit label, description)
TABLE = {
    "gpt": (lambda lib: gpt(lib), 1, "ms/step",
            "nanoGPT step: 4 layers, 4 heads, 128 wide, block 64, batch 12, AdamW, clip"),
    "gpt_sdpa": (lambda lib: gpt(lib, flash=True), 1, "ms/step",
                 "the gpt step with F.scaled_dot_product_attention(is_causal=True)"),
    "lstm_lm": (lambda lib: lstm_lm(lib), 1, "ms/step",
                "Embedding(1000, 64) + LSTM(64, 128) + Linear, seq 35, batch 20, CE, clip, SGD"),
    "mnist_cnn": (lambda lib: mnist_cnn(lib), 1, "ms/step",
                  "MNIST example CNN (conv 1-32-64, pool, dropout, fc 9216-128-10), Adadelta"),
}
