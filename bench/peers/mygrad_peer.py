"""The bench workloads in MyGrad (``pip install mygrad``): tensors, ``backward()``, no hooks.

MyGrad records a graph as torch does and ``loss.backward()`` fills each tensor's ``.grad``;
a tensor's gradient is cleared when it enters a new operation, which plays ``zero_grad``'s
part. It has no tensor hooks; ``chain_hooks`` uses the nearest workaround, a custom
``Operation`` that is the identity forward and calls the hook on the backward pass (one more
graph node per hook, labelled "workaround"). Its backward pass produces plain arrays, not a
graph, so there are no higher-order gradients and no ``hvp``. A Python float operand makes a
float64 result in MyGrad, so constants are float32 scalars.
"""

from __future__ import annotations

from collections.abc import Callable

import mygrad as mg
import numpy as np
from mygrad.nnet.activations import relu
from mygrad.nnet.layers import conv_nd, max_pool
from mygrad.nnet.losses import softmax_crossentropy
from mygrad.operation_base import Operation

from bench.peers import Unavailable
from bench.peers import _data as D

LR = np.float32(0.01)
SCALE = np.float32(1.01)
NOTES = {"chain_hooks": "workaround"}


class HookSite(Operation):
    """Identity on the forward pass; the backward pass hands the gradient to ``hook(grad)``,
    which may return a replacement (a torch tensor hook's contract)."""

    def __call__(self, y, hook):
        self.variables = (y,)
        self.hook = hook
        return y.data

    def backward_var(self, grad, index, **kwargs):
        out = self.hook(grad)
        return grad if out is None else out


def hook_site(y, hook):
    return mg.Tensor._op(HookSite, y, op_args=(hook,))


def _noop(grad):
    return None


def chain_sum(y: mg.Tensor, hook: Callable | None = None) -> mg.Tensor:
    """The bench chain, summed; `hook` (if given) sees the gradient of every link's output."""
    for _ in range(D.LINKS):
        y = mg.tanh(y * SCALE)
        if hook is not None:
            y = hook_site(y, hook)
    return y.sum()


def chain_grad(x: np.ndarray, hook: Callable | None = None) -> np.ndarray:
    """d chain_sum / dx."""
    t = mg.tensor(x)
    chain_sum(t, hook).backward()
    return t.grad


def chain(hooks: bool = False):
    x = mg.tensor(D.chain_input())
    hook = _noop if hooks else None
    return (lambda: chain_sum(x, hook).backward()), float(chain_sum(x).item())


def mlp_forward(params, x):
    w1, b1, w2, b2, w3, b3 = params
    h = relu(x @ w1 + b1)
    h = relu(h @ w2 + b2)
    return h @ w3 + b3


def _sgd_step(params: list, loss: Callable[[], mg.Tensor]):
    """(step, first loss, `params`, current loss): ``step()`` is one SGD step (lr 0.01) of
    ``loss()``, updating `params`' arrays in place."""

    def step():
        loss().backward()
        for p in params:
            p.data -= LR * p.grad

    def current() -> float:
        return float(loss().item())

    return step, current(), params, current


def mlp_step(batch: int, loss: str = "ce") -> tuple[Callable, float, list, Callable]:
    """(step, first loss, the parameter tensors the step updates (weights stored (in, out)),
    a function giving the loss at the current parameters)."""
    weights, x, y = D.mlp(batch)
    params = [mg.tensor(w.T.copy() if w.ndim == 2 else w) for w in weights]
    if loss == "mse":
        target = D.mse_target(batch)
        return _sgd_step(params, lambda: mg.mean((mlp_forward(params, x) - target) ** 2))
    return _sgd_step(params, lambda: softmax_crossentropy(mlp_forward(params, x), y))


def cnn_step(batch: int = 64) -> tuple[Callable, float, list, Callable]:
    """Like `mlp_step`, for the CNN workload (conv weights in torch's layout)."""
    (wc, bc, wl, bl), x, y = D.cnn(batch)
    params = [mg.tensor(wc), mg.tensor(bc.reshape(1, 8, 1, 1)), mg.tensor(wl.T.copy()),
              mg.tensor(bl)]

    def loss():
        h = relu(conv_nd(x, params[0], stride=1) + params[1])
        h = max_pool(h, pool=(2, 2), stride=2)
        return softmax_crossentropy(h.reshape(batch, -1) @ params[2] + params[3], y)

    return _sgd_step(params, loss)


BUILDERS: dict[str, Callable] = {
    "chain": chain,
    "chain_hooks": lambda: chain(hooks=True),
    "mlp64": lambda: mlp_step(64)[:2],
    "mlp1024": lambda: mlp_step(1024)[:2],
    "mlp1_mse": lambda: mlp_step(1, "mse")[:2],
    "cnn": lambda: cnn_step()[:2],
}


def build(name: str):
    """``(step, first_value)`` of workload `name`, or `Unavailable`."""
    if name not in BUILDERS:
        raise Unavailable(f"MyGrad: no {name} (no higher-order gradients, modules, module "
                          "hooks, LSTM or compiler)")
    return BUILDERS[name]()
