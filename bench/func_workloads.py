"""torch.func workloads: per-sample gradients (bench MLP and CNN, batch 64) and a jacrev.

Each factory ``make(lib, mode)`` returns a zero-argument step; `mode` is ``"vmap"`` (vmap of
grad over functional_call) or ``"loop"`` (a Python loop of grad over the samples).
"""

from __future__ import annotations

import numpy as np

from bench.workloads import _cnn_setup, _mlp_setup

BATCH = 64


def _per_sample(lib, setup, mode):
    model, x, y = setup(lib, BATCH)
    params = {k: v.detach() for k, v in model.named_parameters()}
    fn = lib.func

    def loss(p, xi, yi):
        out = fn.functional_call(model, p, (xi.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))

    if mode == "vmap":
        batched = fn.vmap(fn.grad(loss), in_dims=(None, 0, 0))
        return lambda: batched(params, x, y)
    g = fn.grad(loss)
    return lambda: [g(params, x[i], y[i]) for i in range(BATCH)]


def mlp_per_sample(lib, mode="vmap"):
    return _per_sample(lib, _mlp_setup, mode)


def cnn_per_sample(lib, mode="vmap"):
    return _per_sample(lib, _cnn_setup, mode)


def jacrev64(lib, mode="vmap"):
    """The Jacobian of a 64-output two-layer function of a 32-vector."""
    rng = np.random.default_rng(5)
    w1 = lib.tensor(rng.normal(size=(48, 32)).astype(np.float32) * 0.2)
    w2 = lib.tensor(rng.normal(size=(64, 48)).astype(np.float32) * 0.2)
    x = lib.tensor(rng.normal(size=32).astype(np.float32))

    def f(v):
        return w2 @ lib.tanh(w1 @ v)

    jac = lib.func.jacrev(f)
    return lambda: jac(x)


WORKLOADS = {"mlp_per_sample": mlp_per_sample, "cnn_per_sample": cnn_per_sample,
             "jacrev64": jacrev64}
