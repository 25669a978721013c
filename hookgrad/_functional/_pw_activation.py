"""Public activation functions, with ``torch.nn.functional``'s signatures.

Where a name exists both in ``torch`` and in ``torch.nn.functional`` with different signatures
(``relu``, ``threshold``, ``selu``, ``celu``), the one function here takes the
``nn.functional`` superset (an extra ``inplace=False``), so ``hookgrad.relu`` also accepts
``inplace``, which ``torch.relu`` rejects.
"""

from __future__ import annotations

from typing import Any

from hookgrad._config import GLOBAL, STATE
from hookgrad._dispatch import bind, bind_inplace
from hookgrad._functional._pw_util import float_cast, inplace_unary, require_float
from hookgrad._ops._checks import check_number, check_tensor, not_tensor
from hookgrad._ops.activation import SELU_ALPHA, SELU_SCALE
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

_EMPTY: dict = {}
_RELU, _HARDTANH, _ELU = P["relu"], P["hardtanh"], P["elu"]


def _run(prim: Any, input: Tensor, params: dict, inplace: bool, inplace_prim: Any = None) -> Any:
    if inplace:
        return bind_inplace(inplace_prim or prim, input, (input,), params)
    return bind(prim, (input,), params)


# ---------------------------------------------------------------- relu family
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)`` (``ReluBackward0``, saving the result; gradient 0 at 0).

    Mirrors: ``torch.relu`` / ``torch.nn.functional.relu``.
    """
    try:
        kind = input._data.dtype.kind
    except AttributeError:
        raise not_tensor("relu", input) from None
    if kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    if inplace:
        return bind_inplace(_RELU, input, (input,))
    return bind(_RELU, (input,))


def relu_(input: Tensor) -> Tensor:
    """Mirrors: ``torch.relu_`` / ``torch.Tensor.relu_``."""
    return relu(input, inplace=True)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` if ``x > 0`` else ``negative_slope * x`` (in place: ``LeakyReluBackward1``).

    Mirrors: ``torch.nn.functional.leaky_relu``.
    """
    require_float(input, "leaky_relu_cpu")
    check_number(negative_slope, "leaky_relu", "negative_slope", 2)
    return _run(P["leaky_relu"], input, {"negative_slope": negative_slope}, inplace,
                P["leaky_relu_"])


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """Mirrors: ``torch.nn.functional.leaky_relu_``."""
    return leaky_relu(input, negative_slope, inplace=True)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """`value` where ``input <= threshold``, else `input`.

    Mirrors: ``torch.nn.functional.threshold`` (and ``torch.threshold``, without ``inplace``).
    """
    if input._data.dtype.kind == "b":
        raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
    check_number(threshold, "threshold", "threshold", 2)
    check_number(value, "threshold", "value", 3)
    return _run(P["threshold"], input, {"threshold": threshold, "value": value}, inplace,
                P["threshold_"])


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """Mirrors: ``torch.nn.functional.threshold_``."""
    return globals()["threshold"](input, threshold, value, inplace=True)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """Clamp to ``[min_val, max_val]`` with zero gradient at and beyond the bounds.

    Mirrors: ``torch.nn.functional.hardtanh``.
    """
    check_tensor(input, "hardtanh")
    if input._data.dtype.kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _run(_HARDTANH, input, {"min_val": min_val, "max_val": max_val}, inplace)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """Mirrors: ``torch.nn.functional.hardtanh_``."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """``hardtanh(input, 0, 6)`` (PyTorch records ``HardtanhBackward0``).

    Mirrors: ``torch.nn.functional.relu6``.
    """
    return hardtanh(input, 0.0, 6.0, inplace)


# ---------------------------------------------------------------- elu family
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` if ``x > 0`` else ``alpha * (exp(x) - 1)`` (in place: ``EluBackward1``).

    Mirrors: ``torch.nn.functional.elu``.
    """
    require_float(input, "elu_cpu")
    params = {"alpha": alpha, "scale": 1.0, "input_scale": 1.0}
    return _run(_ELU, input, params, inplace, P["elu_"])


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """Mirrors: ``torch.nn.functional.elu_``."""
    return elu(input, alpha, inplace=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """Scaled elu with the self-normalizing constants (PyTorch records ``EluBackward0``).

    Mirrors: ``torch.selu`` / ``torch.nn.functional.selu``.
    """
    require_float(input, "elu_cpu")
    params = {"alpha": SELU_ALPHA, "scale": SELU_SCALE, "input_scale": 1.0}
    return _run(_ELU, input, params, inplace, P["elu_"])


def selu_(input: Tensor) -> Tensor:
    """Mirrors: ``torch.selu_``."""
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Mirrors: ``torch.celu`` / ``torch.nn.functional.celu``.
    """
    require_float(input, "elu_cpu")
    return _run(P["celu"], input, {"alpha": alpha}, inplace, P["celu_"])


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """Mirrors: ``torch.celu_``."""
    return celu(input, alpha, inplace=True)


# ---------------------------------------------------------------- smooth activations
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit (exact with erf, or the tanh approximation).

    Mirrors: ``torch.nn.functional.gelu``.
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    require_float(input, "GeluKernelImpl")
    return bind(P["gelu"], (input,), {"approximate": approximate})


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)``.

    Mirrors: ``torch.nn.functional.silu``.
    """
    if not (isinstance(input, Tensor) and input._data.dtype.kind == "c"):  # (complex SiLU exists)
        require_float(input, "silu_cpu")
    elif input.requires_grad and STATE.grad_enabled:  # ... without a complex derivative
        raise RuntimeError("silu does not support automatic differentiation for outputs with "
                           "complex dtype.")
    return _run(P["silu"], input, _EMPTY, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``.

    Mirrors: ``torch.nn.functional.mish``.
    """
    require_float(input, "mish_cpu")
    return _run(P["mish"], input, _EMPTY, inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, linear above `threshold` (in ``beta * x``).

    Mirrors: ``torch.nn.functional.softplus``.
    """
    require_float(input, "softplus_cpu")
    check_number(beta, "softplus", "beta", 2)
    check_number(threshold, "softplus", "threshold", 3)
    return bind(P["softplus"], (input,), {"beta": beta, "threshold": threshold})


def sigmoid(input: Tensor) -> Tensor:
    """``1 / (1 + exp(-x))`` (``SigmoidBackward0``, saving the result).

    Mirrors: ``torch.sigmoid`` / ``torch.nn.functional.sigmoid``.
    """
    try:
        kind = input._data.dtype.kind
    except AttributeError:
        raise not_tensor("sigmoid", input) from None
    if kind in "fcV":
        return bind(P["sigmoid"], (input,))
    return bind(P["sigmoid"], (input,), _EMPTY, GLOBAL.default_dtype)


def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(p / (1 - p))``, with `p` clamped to ``[eps, 1 - eps]`` when `eps` is given.

    Mirrors: ``torch.logit``.
    """
    return bind(P["logit"], (input,), {"eps": eps}, float_cast(input))


def logit_(self: Tensor, eps: float | None = None) -> Tensor:
    """Mirrors: ``torch.Tensor.logit_``."""
    return bind_inplace(P["logit"], self, (self,), {"eps": eps}, float_cast(self))


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``.

    Mirrors: ``torch.nn.functional.hardsigmoid``.
    """
    require_float(input, "hardsigmoid_cpu")
    return _run(P["hardsigmoid"], input, _EMPTY, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``.

    Mirrors: ``torch.nn.functional.hardswish``.
    """
    require_float(input, "hardswish_cpu")
    return _run(P["hardswish"], input, _EMPTY, inplace)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """`input` outside ``[-lambd, lambd]``, zero inside.

    Mirrors: ``torch.nn.functional.hardshrink``.
    """
    require_float(input, "hardshrink_cpu")
    return bind(P["hardshrink"], (input,), {"lambd": lambd})


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """Shrink toward zero by `lambd`, zero inside ``[-lambd, lambd]``.

    Mirrors: ``torch.nn.functional.softshrink``.
    """
    require_float(input, "softshrink_check")
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return bind(P["softshrink"], (input,), {"lambd": lambd})


def logsigmoid(input: Tensor) -> Tensor:
    """``log(sigmoid(x))``, computed stably (``LogSigmoidBackward0``).

    Mirrors: ``torch.nn.functional.logsigmoid`` (PyTorch also saves a forward buffer; hookgrad
    recomputes it in backward, so saved-tensor hooks see one pack instead of two).
    """
    require_float(input, "log_sigmoid_cpu")
    return bind(P["log_sigmoid"], (input,))


# ---------------------------------------------------------------- composites
def softsign(input: Tensor) -> Tensor:
    """``x / (1 + |x|)`` (a composite: ``DivBackward0`` as in PyTorch).

    Mirrors: ``torch.nn.functional.softsign``.
    """
    return input / (input.abs() + 1)  # type: ignore[attr-defined]


def tanhshrink(input: Tensor) -> Tensor:
    """``x - tanh(x)`` (a composite: ``SubBackward0`` as in PyTorch).

    Mirrors: ``torch.nn.functional.tanhshrink``.
    """
    return input - input.tanh()  # type: ignore[attr-defined]


# ---------------------------------------------------------------- tables
NN_FUNCTIONAL = (
    "relu", "relu_", "leaky_relu", "leaky_relu_", "threshold", "threshold_", "hardtanh",
    "hardtanh_", "relu6", "elu", "elu_", "selu", "celu", "gelu", "silu", "mish", "softplus",
    "sigmoid", "hardsigmoid", "hardswish", "hardshrink", "softshrink", "softsign", "tanhshrink",
    "logsigmoid",
)

__all__ = ["relu", "relu_", "threshold", "threshold_", "selu", "selu_", "celu", "celu_",
           "sigmoid", "sigmoid_", "logit", "hardshrink"]

sigmoid_ = inplace_unary("sigmoid", float_op=True)

METHODS = {
    "relu": lambda self: relu(self), "relu_": relu_, "sigmoid": sigmoid, "sigmoid_": sigmoid_,
    "logit": logit, "logit_": logit_, "hardshrink": hardshrink,
}
