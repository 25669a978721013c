"""Per-layer forward + backward times at the real models' shapes, hookgrad against PyTorch: which
layer of a step holds its gap.

Usage: ``python -m bench.layers [NAME ...]`` (default: every layer). One thread, both libraries
in this process, CPU clock, best of 5 loops of at least 0.2 s (as `bench.bounds`); each row runs
one layer (or one optimizer or ``clip_grad_norm_`` call) forward and backward on the `gpt`
shapes (batch 12, block 64, width 128, 4 heads) or the `lstm_lm` ones (`lstm`,
`log_softmax_nll`: 700 rows of 1000 classes), and prints both times, their ratio and their
difference (what the layer adds to a step's gap, once per use). Needs PyTorch. Never used by
unit tests for timing.
"""

from __future__ import annotations

import argparse

from bench import _threads  # noqa: F401  (one BLAS/OpenMP thread, before NumPy loads)
from bench.bounds import _best_step_seconds

B, T, C, H = 12, 64, 128, 4  # the gpt workload's batch, block, width and heads


def _cases(lib) -> dict:
    """name -> a zero-argument callable running the layer forward and backward once."""
    import numpy as np

    rng = np.random.default_rng(0)
    nn, F = lib.nn, lib.nn.functional

    def leaf(*shape):
        return lib.tensor(rng.standard_normal(shape).astype(np.float32)).requires_grad_()

    x, big, att = leaf(B, T, C), leaf(B * T, 4 * C), leaf(B, H, T, T)
    q, k = leaf(B, H, T, C // H), leaf(B, H, T, C // H)
    mask = lib.tril(lib.ones(T, T)).view(1, 1, T, T)
    g_x, g_big, g_att = lib.ones(B, T, C), lib.ones(B * T, 4 * C), lib.ones(B, H, T, T)
    ln, lin, emb = nn.LayerNorm(C), nn.Linear(C, 4 * C), nn.Embedding(65, C)
    idx = lib.tensor(rng.integers(0, 65, (B, T)))
    logits, target = leaf(B * T, 65), lib.tensor(rng.integers(0, 65, B * T))
    many = nn.Sequential(*[nn.Linear(C, C) for _ in range(26)])
    for p in many.parameters():
        p.grad = lib.ones_like(p)
    adamw = lib.optim.AdamW(many.parameters(), lr=1e-3)
    lstm, seq = nn.LSTM(64, 128, batch_first=True), leaf(20, 35, 64)
    lm_logits, lm_target = leaf(700, 1000), lib.tensor(rng.integers(0, 1000, 700))
    return {
        "layer_norm": lambda: ln(x).backward(g_x),
        "gelu": lambda: F.gelu(big).backward(g_big),
        "linear": lambda: lin(x).sum().backward(),
        "q@k^T": lambda: (q @ k.transpose(-2, -1)).backward(g_att),
        "masked_fill": lambda: att.masked_fill(mask == 0, float("-inf")).backward(g_att),
        "softmax": lambda: F.softmax(att, dim=-1).backward(g_att),
        "cross_entropy": lambda: F.cross_entropy(logits, target).backward(),
        "embedding": lambda: emb(idx).backward(g_x),
        "adamw_26": lambda: adamw.step(),
        "clip_grad_norm_26": lambda: nn.utils.clip_grad_norm_(many.parameters(), 1.0),
        "lstm": lambda: lstm(seq)[0].sum().backward(),
        "log_softmax_nll": lambda: F.cross_entropy(lm_logits, lm_target).backward(),
    }


NAMES = ["layer_norm", "gelu", "linear", "q@k^T", "masked_fill", "softmax", "cross_entropy",
         "embedding", "adamw_26", "clip_grad_norm_26", "lstm", "log_softmax_nll"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.layers", description=__doc__)
    parser.add_argument("names", nargs="*", help=f"layers (default: all of {NAMES})")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in NAMES]
    if unknown:
        parser.error(f"unknown layers {unknown}; choose from {NAMES}")
    import torch

    import hookgrad

    torch.set_num_threads(1)
    mine, theirs = _cases(hookgrad), _cases(torch)
    print("| layer (forward + backward) | hookgrad us | PyTorch us | ratio | difference us |")
    print("|---|---|---|---|---|")
    for name in args.names or NAMES:
        mine[name]()  # warm-up
        theirs[name]()
        a = _best_step_seconds(mine[name])[0] * 1e6
        b = _best_step_seconds(theirs[name])[0] * 1e6
        print(f"| {name} | {a:.0f} | {b:.0f} | {a / b:.2f} | {a - b:.0f} |", flush=True)


if __name__ == "__main__":
    main()
