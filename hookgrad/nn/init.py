"""Parameter initialisers. Mirrors: ``torch.nn.init``.

Every initialiser fills its tensor in place under ``no_grad`` and returns it. The random
streams differ from PyTorch's (NOTE [Random streams] in `_functional/random.py`); the
distributions, bounds and fan computations are PyTorch's.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from hookgrad._functional._pw_compare import where as _where
from hookgrad._functional.creation import empty_like as _empty_like
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad as _no_grad

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
    "eye_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
    "orthogonal_",
]


def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """The recommended gain for a nonlinearity.

    Raises:
        ValueError: for an unknown nonlinearity or an invalid ``leaky_relu`` slope.

    Mirrors: ``torch.nn.init.calculate_gain``.
    """
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight of at least 2 dims.

    Mirrors: ``torch.nn.init._calculate_fan_in_and_fan_out``.
    """
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    if tensor.dim() > 2:
        for s in tensor.shape[2:]:
            receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill from U(a, b). Mirrors: ``torch.nn.init.uniform_``."""
    with _no_grad():
        return tensor.uniform_(a, b, generator=generator)  # type: ignore[attr-defined]


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill from N(mean, std^2). Mirrors: ``torch.nn.init.normal_``."""
    with _no_grad():
        return tensor.normal_(mean, std, generator=generator)  # type: ignore[attr-defined]


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Any = None) -> Tensor:
    """Fill from N(mean, std^2) truncated to [a, b], by PyTorch's rejection sampling.

    When the window holds more than 30% of the mass, normal draws outside it are redrawn;
    otherwise uniform candidates in [a, b] are accepted against the normal density (log of a
    uniform below the log-density ratio to the peak). The same draws in the same order as
    PyTorch, so a seeded call gives PyTorch's values.

    Mirrors: ``torch.nn.init.trunc_normal_``.
    """
    if tensor.is_meta:
        return tensor

    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    with _no_grad():
        if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
            _trunc_by_redraw(tensor, mean, std, a, b, generator)
        else:
            _trunc_by_acceptance(tensor, mean, std, a, b, generator)
    return tensor


def _trunc_by_redraw(tensor: Tensor, mean: float, std: float, a: float, b: float,
                     generator: Any) -> None:
    # the bounds as the tensor's dtype holds them, so the test agrees with stored values
    lo, hi = (float(tensor._data.dtype.type(v)) for v in (a, b))
    result = tensor.normal_(mean, std, generator=generator)  # type: ignore[attr-defined]
    while True:
        mask = (result < lo) | (result > hi)
        if not bool(mask.any()):
            break
        fresh = _empty_like(result).normal_(mean, std, generator=generator)
        result = _where(mask, fresh, result)
    if result is not tensor:
        tensor.copy_(result)  # type: ignore[attr-defined]


def _trunc_by_acceptance(tensor: Tensor, mean: float, std: float, a: float, b: float,
                         generator: Any) -> None:
    mode = max(a, min(mean, b))
    log_peak = -0.5 * ((mode - mean) / std) ** 2

    def log_ratio(c: Tensor) -> Tensor:
        return c.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)  # type: ignore

    candidates, accept = _empty_like(tensor), _empty_like(tensor)
    tensor.uniform_(a, b, generator=generator)  # type: ignore[attr-defined]
    candidates.copy_(tensor)  # type: ignore[attr-defined]
    log_ratio(candidates)
    pending = accept.uniform_(generator=generator).log_().gt(candidates)  # type: ignore
    if not bool(pending.any()):
        return
    result = tensor
    while True:
        candidates.uniform_(a, b, generator=generator)  # type: ignore[attr-defined]
        result = _where(pending, candidates, result)
        log_ratio(candidates)
        redraw = accept.uniform_(generator=generator).log_().gt(candidates)  # type: ignore
        pending = _where(pending, redraw, pending)
        if not bool(pending.any()):
            break
    tensor.copy_(result)  # type: ignore[attr-defined]


def _no_grad_uniform_(tensor: Tensor, a: float, b: float, generator: Any = None) -> Tensor:
    """Mirrors: ``torch.nn.init._no_grad_uniform_`` (what `uniform_` runs)."""
    return uniform_(tensor, a, b, generator)


def _no_grad_normal_(tensor: Tensor, mean: float, std: float, generator: Any = None) -> Tensor:
    """Mirrors: ``torch.nn.init._no_grad_normal_``."""
    return normal_(tensor, mean, std, generator)


def _no_grad_trunc_normal_(tensor: Tensor, mean: float, std: float, a: float, b: float,
                           generator: Any = None) -> Tensor:
    """Mirrors: ``torch.nn.init._no_grad_trunc_normal_``."""
    return trunc_normal_(tensor, mean, std, a, b, generator)


def _no_grad_fill_(tensor: Tensor, val: float) -> Tensor:
    """Mirrors: ``torch.nn.init._no_grad_fill_``."""
    return constant_(tensor, val)


def _no_grad_zero_(tensor: Tensor) -> Tensor:
    """Mirrors: ``torch.nn.init._no_grad_zero_``."""
    return constant_(tensor, 0.0)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with `val`. Mirrors: ``torch.nn.init.constant_``."""
    with _no_grad():
        return tensor.fill_(val)  # type: ignore[attr-defined]


def ones_(tensor: Tensor) -> Tensor:
    """Fill with ones. Mirrors: ``torch.nn.init.ones_``."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with zeros. Mirrors: ``torch.nn.init.zeros_``."""
    return constant_(tensor, 0.0)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity. Mirrors: ``torch.nn.init.eye_``."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with _no_grad():
        _write(tensor, _xp(tensor).eye(*tensor.shape, dtype=tensor._data.dtype))
    return tensor


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot uniform: U(-a, a), ``a = gain * sqrt(6 / (fan_in + fan_out))``.

    Mirrors: ``torch.nn.init.xavier_uniform_``.
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot normal: N(0, std^2), ``std = gain * sqrt(2 / (fan_in + fan_out))``.

    Mirrors: ``torch.nn.init.xavier_normal_``.
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _warn_if_empty(tensor: Tensor) -> bool:
    """Whether `tensor` has no elements, which makes a kaiming init a no-op; if so, warn (at
    the initialiser's caller)."""
    if 0 not in tensor.shape:
        return False
    warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=3)
    return True


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """He uniform: U(-bound, bound), ``bound = gain * sqrt(3 / fan)``.

    Mirrors: ``torch.nn.init.kaiming_uniform_``.
    """
    if _warn_if_empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator: Any = None) -> Tensor:
    """He normal: N(0, std^2), ``std = gain / sqrt(fan)``.

    Mirrors: ``torch.nn.init.kaiming_normal_``.
    """
    if _warn_if_empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Any = None) -> Tensor:
    """Fill with a (semi-)orthogonal matrix (QR of a normal matrix, sign-corrected), times
    `gain`.

    Raises:
        ValueError: for tensors with fewer than 2 dimensions.

    Mirrors: ``torch.nn.init.orthogonal_``.
    """
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    xp = _xp(tensor)
    with _no_grad():
        from hookgrad._functional.creation import empty

        flat = empty(rows, cols, dtype=tensor.dtype).normal_(0, 1, generator=generator)
        m = flat._data.T if rows < cols else flat._data
        q, r = xp.linalg.qr(m)
        q = q * xp.sign(xp.diagonal(r))
        if rows < cols:
            q = q.T
        _write(tensor, (q * gain).reshape(tensor.shape))
    return tensor


def _xp(tensor: Tensor) -> Any:
    from hookgrad._backend import namespace_of

    return namespace_of(tensor._data)


def _write(tensor: Tensor, values: Any) -> None:
    """In-place copy of an array (no autograd: every caller runs under ``no_grad``)."""
    tensor.copy_(Tensor._make(values.astype(tensor._data.dtype)))  # type: ignore[attr-defined]


def _erfinv(xp: Any, y: Any) -> Any:
    """Inverse error function on an array (Giles' approximation refined by Newton steps)."""
    y = xp.clip(y.astype("float64"), -1 + 1e-15, 1 - 1e-15)
    w = -xp.log((1.0 - y) * (1.0 + y))
    x = xp.where(w < 5.0, _giles_small(xp, w - 2.5), _giles_large(xp, xp.sqrt(w) - 3.0)) * y
    erf = xp.vectorize(math.erf)
    for _ in range(2):
        x = x - (erf(x) - y) / (2.0 / math.sqrt(math.pi) * xp.exp(-x * x))
    return x


def _giles_small(xp: Any, w: Any) -> Any:
    p = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        p = c + p * w
    return p


def _giles_large(xp: Any, w: Any) -> Any:
    p = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        p = c + p * w
    return p

# typing helpers are not part of PyTorch's namespace (tools crawl dir() of it)
del Any, annotations

# PyTorch's ``__all__`` also lists these
__all__ += [
    "dirac_", "sparse_", "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform",
    "xavier_normal", "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"
]
