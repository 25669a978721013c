"""The bench workloads in HIPS autograd (``pip install autograd``): functional, no hooks.

HIPS autograd differentiates a function of NumPy arrays: ``autograd.grad(f)(x)`` traces ``f``
and returns the gradient, so every step below builds its graph and runs the backward pass as
the torch step does. It has no tensor hooks; ``chain_hooks`` uses the nearest workaround, an
identity primitive whose vector-Jacobian product calls the hook (one more graph node per hook,
so it is labelled "workaround"). It has no nn layers and no convolution in ``autograd.numpy``.
"""

from __future__ import annotations

from collections.abc import Callable

import autograd
import autograd.numpy as anp
import numpy as np
from autograd.extend import defvjp, primitive

from bench.peers import Unavailable
from bench.peers import _data as D

LR = np.float32(0.01)
NOTES = {"chain_hooks": "workaround"}


@primitive
def hook_site(y, hook):
    """Identity on the forward pass; the backward pass hands the gradient to ``hook(grad)``,
    which may return a replacement (a torch tensor hook's contract)."""
    return y


def _call_hook(hook: Callable, grad):
    out = hook(grad)
    return grad if out is None else out


defvjp(hook_site, lambda ans, y, hook: lambda g: _call_hook(hook, g))


def _noop(grad):
    return None


def chain_sum(y, hook: Callable | None = None):
    """The bench chain, summed; `hook` (if given) sees the gradient of every link's output."""
    for _ in range(D.LINKS):
        y = anp.tanh(y * 1.01)
        if hook is not None:
            y = hook_site(y, hook)
    return anp.sum(y)


def chain_grad(x: np.ndarray, hook: Callable | None = None) -> np.ndarray:
    """d chain_sum / dx."""
    return autograd.grad(chain_sum)(x, hook)


def chain(hooks: bool = False):
    x = D.chain_input()
    dfdx = autograd.grad(chain_sum)
    hook = _noop if hooks else None
    return (lambda: dfdx(x, hook)), float(chain_sum(x))


def relu(z):
    # NOTE: the mask product is autograd's fastest ReLU: the mlp64 step takes 1.8 ms with it
    # against 2.7 with anp.where(z > 0, z, 0) and 3.7 with anp.maximum(z, 0) (whose VJP
    # splits ties with several full-size array ops).
    return z * (z > 0)


def mlp_forward(params, x):
    w1, b1, w2, b2, w3, b3 = params
    h = relu(anp.dot(x, w1) + b1)
    h = relu(anp.dot(h, w2) + b2)
    return anp.dot(h, w3) + b3


def cross_entropy(z, y):
    """Mean of -log softmax(z)[i, y[i]], composed from autograd.numpy ops (autograd's fused
    ``logsumexp`` lives in ``autograd.scipy``, which needs SciPy)."""
    s = z - np.max(autograd.tracer.getval(z), axis=1, keepdims=True)  # a constant shift
    logp = s - anp.log(anp.sum(anp.exp(s), axis=1, keepdims=True))
    return -anp.mean(logp[np.arange(len(y)), y])


def mse(z, target):
    return anp.mean((z - target) ** 2)


def _sgd_step(loss: Callable, params: list, *data):
    """One SGD step (lr 0.01) of ``loss(params, *data)``, updating `params` in place."""
    dloss = autograd.grad(loss)

    def step():
        for p, g in zip(params, dloss(params, *data), strict=True):
            p -= LR * g

    return step, float(loss(params, *data))


def mlp_step(batch: int, loss: str = "ce") -> tuple[Callable, float, list, Callable]:
    """(step, first loss, the parameter arrays the step updates (weights stored (in, out)),
    a function giving the loss at the current parameters)."""
    weights, x, y = D.mlp(batch)
    params = [w.T.copy() if w.ndim == 2 else w.copy() for w in weights]
    if loss == "mse":
        target = D.mse_target(batch)
        step, first = _sgd_step(lambda p, x: mse(mlp_forward(p, x), target), params, x)
        return step, first, params, lambda: float(mse(mlp_forward(params, x), target))
    step, first = _sgd_step(lambda p, x, y: cross_entropy(mlp_forward(p, x), y), params, x, y)
    return step, first, params, lambda: float(cross_entropy(mlp_forward(params, x), y))


def hvp():
    """(step, first loss); ``step()`` returns the Hessian-vector product (a pair of arrays)."""
    w1, w2, x, v1, v2 = D.hvp()

    def loss(w):
        return anp.mean(anp.dot(anp.tanh(anp.dot(x, w[0])), w[1]) ** 2)

    dloss = autograd.grad(loss)

    def grad_dot_v(w):  # reverse over reverse, as torch's grad(create_graph=True) then grad
        g1, g2 = dloss(w)
        return anp.sum(g1 * v1) + anp.sum(g2 * v2)

    hessian_v = autograd.grad(grad_dot_v)
    return (lambda: hessian_v((w1, w2))), float(loss((w1, w2)))


BUILDERS: dict[str, Callable] = {
    "chain": chain,
    "chain_hooks": lambda: chain(hooks=True),
    "mlp64": lambda: mlp_step(64)[:2],
    "mlp1024": lambda: mlp_step(1024)[:2],
    "mlp1_mse": lambda: mlp_step(1, "mse")[:2],
    "hvp": hvp,
}


def build(name: str):
    """``(step, first_value)`` of workload `name`, or `Unavailable`."""
    if name not in BUILDERS:
        raise Unavailable(f"HIPS autograd: no {name} (no nn layers, module hooks, convolution, "
                          "LSTM or compiler)")
    return BUILDERS[name]()
