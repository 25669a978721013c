"""torch.func workloads: per-sample gradients (bench MLP and CNN, batch 64) and a jacrev.

Each is written once against ``lib`` (torch or hookgrad), as `bench.workloads` writes its own: a
factory ``make(lib)`` returning ``(step, first_value)``. The per-sample gradients are
``vmap(grad(loss), in_dims=(None, 0, 0))`` over ``functional_call`` (the torch.func tutorial's
program); the ``psg_loop_*`` workloads compute the same gradients with a Python loop of ``grad``
over the samples, so hookgrad's loop/vmap ratio (the issue's 10x) comes from the same run. The
first value is the sum of the absolute per-sample gradients, the same in every variant.
"""

from __future__ import annotations

import numpy as np

BATCH = 64


def _abs_total(grads) -> float:
    return float(sum(float(g.abs().sum().item()) for g in grads))


def per_sample_grads(lib, model_name, loop=False):
    # imported here: bench.workloads imports this module to add TABLE to its own
    from bench import workloads as W

    setup = {"mlp": W._mlp_setup, "cnn": W._cnn_setup}[model_name]
    model, x, y = setup(lib, BATCH)
    params = {k: v.detach() for k, v in model.named_parameters()}
    fn = lib.func

    def loss(p, xi, yi):
        out = fn.functional_call(model, p, (xi.unsqueeze(0),))
        return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))

    if loop:
        g = fn.grad(loss)

        def step():
            return [g(params, x[i], y[i]) for i in range(BATCH)]

        return step, _abs_total(v for d in step() for v in d.values())
    batched = fn.vmap(fn.grad(loss), in_dims=(None, 0, 0))

    def vstep():
        return batched(params, x, y)

    return vstep, _abs_total(vstep().values())


def jacrev64(lib):
    """The Jacobian of a 64-output two-layer function of a 32-vector."""
    rng = np.random.default_rng(5)
    w1 = lib.tensor(rng.normal(size=(48, 32)).astype(np.float32) * 0.2)
    w2 = lib.tensor(rng.normal(size=(64, 48)).astype(np.float32) * 0.2)
    x = lib.tensor(rng.normal(size=32).astype(np.float32))

    def f(v):
        return w2 @ lib.tanh(w1 @ v)

    jac = lib.func.jacrev(f)

    def step():
        return jac(x)

    return step, _abs_total([step()])


# name -> (factory(lib) -> (step, first_value), unit divisor, unit label, description)
TABLE = {
    "psg_mlp": (lambda lib: per_sample_grads(lib, "mlp"), 1, "ms/step",
                "per-sample grads, MLP 784-256-256-10, batch 64: vmap(grad) over functional_call"),
    "psg_loop_mlp": (lambda lib: per_sample_grads(lib, "mlp", loop=True), 1, "ms/step",
                     "psg_mlp as a Python loop of grad over the 64 samples"),
    "psg_cnn": (lambda lib: per_sample_grads(lib, "cnn"), 1, "ms/step",
                "per-sample grads, bench CNN, batch 64: vmap(grad) over functional_call"),
    "psg_loop_cnn": (lambda lib: per_sample_grads(lib, "cnn", loop=True), 1, "ms/step",
                     "psg_cnn as a Python loop of grad over the 64 samples"),
    "jacrev64": (lambda lib: jacrev64(lib), 1, "ms/step",
                 "jacrev of a 64-output function of 32 inputs (tanh MLP)"),
}
