"""Elementwise arithmetic primitives (PyTorch docs: "Pointwise Ops", arithmetic part).

Rules receive hookgrad Tensors and use Tensor methods, which resolve at call time (layer 4
installs them), so double backward works without extra code. `unbroadcast` is the one
"undo broadcasting" step of every binary rule.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._ops.registry import defop


def unbroadcast(g: Any, shape: tuple) -> Any:
    """Sum `g` down to `shape` (no-op when the shapes already agree)."""
    return g if g._data.shape == shape else g.sum_to_size(shape)


def _scaled(g: Any, alpha: Any) -> Any:
    return g if alpha == 1 else g * alpha


# ---------------------------------------------------------------- add / sub / mul / div
defop("add", impl=lambda self, other, alpha=1: np.add(self, other if alpha == 1 else other * alpha),
      inputs=("self", "other"), params=("alpha",),
      vjp={"self": lambda grad, self_shape: unbroadcast(grad, self_shape),
           "other": lambda grad, other_shape, alpha: unbroadcast(_scaled(grad, alpha), other_shape)},
      jvp="linear")

defop("sub", impl=lambda self, other, alpha=1: np.subtract(self, other if alpha == 1 else other * alpha),
      inputs=("self", "other"), params=("alpha",),
      vjp={"self": lambda grad, self_shape: unbroadcast(grad, self_shape),
           "other": lambda grad, other_shape, alpha: unbroadcast(-_scaled(grad, alpha), other_shape)},
      jvp="linear")

defop("rsub", impl=lambda self, other, alpha=1: np.subtract(other, self if alpha == 1 else self * alpha),
      inputs=("self",), params=("other", "alpha"), node_name="RsubBackward1",
      vjp={"self": lambda grad, alpha: -_scaled(grad, alpha)},
      jvp="linear")

defop("mul", impl=np.multiply, inputs=("self", "other"), saves=("other", "self"),
      vjp={"self": lambda grad, other, self_shape: unbroadcast(grad * other, self_shape),
           "other": lambda grad, self, other_shape: unbroadcast(grad * self, other_shape)},
      jvp={"self": lambda t, other: t * other, "other": lambda t, self: self * t})

defop("div", impl=np.true_divide, inputs=("self", "other"), saves=("other", "self"),
      vjp={"self": lambda grad, other, self_shape: unbroadcast(grad / other, self_shape),
           "other": lambda grad, self, other, other_shape: unbroadcast(
               -grad * self / (other * other), other_shape)},
      jvp={"self": lambda t, other: t / other,
           "other": lambda t, self, other: -t * self / (other * other)})

defop("neg", impl=np.negative, vjp={"self": lambda grad: -grad}, jvp="linear")

# ---------------------------------------------------------------- exponentials
defop("exp", impl=np.exp, saves=("result",),
      vjp={"self": lambda grad, result: grad * result}, jvp="elementwise")
