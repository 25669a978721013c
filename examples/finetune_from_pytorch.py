"""Fine-tune PyTorch-trained weights in hookgrad, then hand the result back to PyTorch.

1. PyTorch trains nothing here but *creates* a model and saves its ``state_dict()`` with
   ``torch.save`` (pass ``--weights path.pt`` to use your own file instead);
2. hookgrad loads that file (``weights_only=True``: no code from the file runs) into the same
   architecture built from ``hookgrad.nn`` and fine-tunes it, with hooks watching: a forward
   hook logs activation statistics, a tensor hook clips the gradient of the last layer, an
   optimizer step post-hook counts steps;
3. hookgrad saves a training checkpoint (model, optimizer, step) in PyTorch's format, and
   PyTorch loads it with ``weights_only=True`` and gets the same predictions.

Run: ``python examples/finetune_from_pytorch.py [--weights FILE] [--out DIR] [--steps N]``.
Without PyTorch installed, step 1 is done by ``hookgrad.save`` (the same file format) and step
3's check is skipped.
"""

from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np

import hookgrad


def build(nn):
    """The architecture, written once for both libraries (``nn`` is torch.nn or hookgrad.nn)."""
    return nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))


def pretrained_weights(path: str) -> str:
    """Write a PyTorch ``state_dict`` file to `path` (with PyTorch when it is installed)."""
    try:
        import torch
    except ImportError:
        torch = None
    lib = torch if torch is not None else hookgrad
    lib.manual_seed(0)
    lib.save(build(lib.nn).state_dict(), path)
    return "torch.save" if torch is not None else "hookgrad.save"


def finetune(weights: str, steps: int) -> tuple:
    """Load `weights` into a hookgrad model and train it with hooks; returns what it made."""
    model = build(hookgrad.nn)
    model.load_state_dict(hookgrad.load(weights))  # weights_only=True by default
    log: list = []
    model[1].register_forward_hook(
        lambda mod, inp, out: log.append(float(out.abs().mean())))
    model[2].weight.register_hook(lambda g: g.clamp(-1.0, 1.0))  # clip this layer's gradient
    opt = hookgrad.optim.Adam(model.parameters(), lr=0.02)
    stepped = [0]
    opt.register_step_post_hook(lambda o, args, kwargs: stepped.__setitem__(0, stepped[0] + 1))
    rng = np.random.default_rng(0)
    x = hookgrad.from_numpy(rng.standard_normal((64, 4)).astype(np.float32))
    y = (x[:, :1] * 2 - x[:, 1:2]).detach()
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    return model, opt, float(loss), log, stepped[0], x


def check_in_torch(path: str, model, x) -> str:
    """Load the checkpoint with PyTorch and compare predictions (skipped without PyTorch)."""
    try:
        import torch
    except ImportError:
        return "PyTorch not installed: check skipped"
    ckpt = torch.load(path, weights_only=True)
    theirs = build(torch.nn)
    theirs.load_state_dict(ckpt["model"])
    ours = model(x).detach().numpy()
    got = theirs(torch.from_numpy(x.numpy())).detach().numpy()
    np.testing.assert_allclose(got, ours, rtol=1e-5, atol=1e-6)
    return f"PyTorch loaded step {ckpt['step']} and predicts the same (max diff " \
           f"{float(np.abs(got - ours).max()):.1e})"


def main(argv: list | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", help="a torch.save'd state_dict of the architecture")
    parser.add_argument("--out", default=None, help="directory for the checkpoint")
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args(argv)
    out = args.out or tempfile.mkdtemp(prefix="hookgrad-finetune-")
    os.makedirs(out, exist_ok=True)
    weights = args.weights
    if weights is None:
        weights = os.path.join(out, "pretrained.pt")
        print(f"pretrained weights written by {pretrained_weights(weights)}: {weights}")
    model, opt, loss, log, steps, x = finetune(weights, args.steps)
    print(f"fine-tuned {steps} steps: loss {loss:.4f}; forward hook saw mean |tanh| "
          f"{log[0]:.3f} -> {log[-1]:.3f}")
    ckpt = os.path.join(out, "finetuned.pt")
    hookgrad.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": steps},
                  ckpt)
    print(f"checkpoint: {ckpt}")
    print(check_in_torch(ckpt, model, x))
    return {"loss": loss, "steps": steps, "checkpoint": ckpt}


if __name__ == "__main__":
    main()
