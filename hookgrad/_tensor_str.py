"""Tensor printing: ``repr(t)`` and ``str(t)`` character for character as PyTorch prints them.

Layer 4. A port of ``torch/_tensor_str.py`` (the dense, strided paths) that works
directly on the tensor's host array: printing never runs an op, so it never records a graph,
never bumps a version counter and never calls a hook. `install` plugs `tensor_repr` into
``STATE_HOOKS.format_tensor`` (the late-bound hook of `_tensor`).

NOTE [Printing quirks kept on purpose]
PyTorch's printer has a few oddities that users see and tests compare, so they are kept:
- the formatter measures widths only on the *summarised* values (the ``edgeitems`` corners);
- a floating tensor whose non-zero finite values are all integral prints in "int mode"
  (``tensor([1., 2.])``), also when it holds only zeros/inf/nan;
- `_add_suffixes` counts the last line's length one character long (``rfind`` + 1);
- with ``edgeitems=0`` a 1-D tensor still feeds every value to the formatter (``t[-0:]``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._config import GLOBAL
from hookgrad._dtypes import BF16_NP
from hookgrad._tensor import STATE_HOOKS, Tensor

__all__ = ["set_printoptions", "get_printoptions", "printoptions"]


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()

_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set options for printing tensors.

    Args:
        precision: Digits after the decimal point for floating values (default 4).
        threshold: Element count above which the repr is summarised with ``...`` (default 1000).
        edgeitems: Items shown at each end of a summarised dimension (default 3).
        linewidth: Characters per line before elements wrap (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``; explicit options override it.
        sci_mode: Force scientific notation on (True) or off (False); None chooses per tensor.
            Like PyTorch, every call resets it to the value passed (None when omitted).

    Example:
        >>> import hookgrad as torch
        >>> torch.set_printoptions(precision=2)
        >>> torch.tensor([1.12345])
        tensor([1.12])
        >>> torch.set_printoptions(profile="default")

    Mirrors: ``torch.set_printoptions``.
    """
    if profile is not None and profile in _PROFILES:
        for key, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, key, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as keyword arguments for `set_printoptions`.

    Mirrors: ``torch._tensor_str.get_printoptions``.
    """
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Temporarily change print options (same keywords as `set_printoptions`).

    Mirrors: ``torch._tensor_str.printoptions``.
    """
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """Chooses int/fixed/scientific mode and the common column width (torch's ``_Formatter``)."""

    def __init__(self, values: np.ndarray) -> None:
        self.floating_dtype = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not self.floating_dtype:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return
        nonzero = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero.size == 0:
            return
        absolute = np.abs(nonzero).astype(np.float64)
        lo, hi = float(absolute.min()), float(absolute.max())
        self.int_mode = bool(np.all(nonzero == np.ceil(nonzero)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        precision = PRINT_OPTS.precision
        pyvals = nonzero.tolist()
        if self.sci_mode:
            strs = [f"{v:.{precision}e}" for v in pyvals]
        elif self.int_mode:
            # int mode appends "." to every value, one more character than the digits
            strs = [f"{v:.0f}." for v in pyvals]
        else:
            strs = [f"{v:.{precision}f}" for v in pyvals]
        self.max_width = max(self.max_width, max(len(s) for s in strs))

    def format(self, value: Any) -> str:
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{PRINT_OPTS.precision}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


class _ComplexFormatter:
    """Two `_Formatter`s, one fed the real parts and one the imaginary parts (as PyTorch's
    printer does): ``1.0000+2.0000e+00j`` keeps each part's own mode and width."""

    def __init__(self, values: np.ndarray) -> None:
        self.real = _Formatter(values.real)
        self.imag = _Formatter(values.imag)
        # PyTorch's element length: both widths, and one for the "j"
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, value: Any) -> str:
        real = self.real.format(value.real)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        return real + imag if imag[0] in "+-" else real + "+" + imag


def _summarized_values(arr: np.ndarray) -> np.ndarray:
    """The values the formatter measures: the corners a summarised repr shows (flattened)."""
    edge = PRINT_OPTS.edgeitems
    if arr.ndim == 0:
        return arr.reshape(1)
    if arr.ndim == 1:
        if arr.shape[0] > 2 * edge:
            return np.concatenate((arr[:edge], arr[-edge:]))
        return arr
    if not edge:
        return arr.reshape(-1)[:0]
    n = arr.shape[0]
    rows = list(range(edge)) + list(range(n - edge, n)) if n > 2 * edge else range(n)
    return np.concatenate([_summarized_values(arr[i]) for i in rows])


def _vector_str(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    element_length = fmt.max_width + 2
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * edge:
        data = (
            [fmt.format(v) for v in arr[:edge].tolist()]
            + [" ..."]
            + [fmt.format(v) for v in arr[-edge:].tolist()]
        )
    else:
        data = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _array_str(arr: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    """Recursive body of the repr: nested brackets, one blank line per extra dimension."""
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    edge = PRINT_OPTS.edgeitems
    n = arr.shape[0]
    if summarize and n > 2 * edge:
        slices = (
            [_array_str(arr[i], indent + 1, summarize, fmt) for i in range(edge)]
            + ["..."]
            + [_array_str(arr[i], indent + 1, summarize, fmt) for i in range(n - edge, n)]
        )
    else:
        slices = [_array_str(arr[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _tensor_str(arr: np.ndarray, indent: int) -> str:
    if arr.size == 0:
        return "[]"
    if arr.dtype is BF16_NP:  # printed from its exact float32 values, as PyTorch does
        arr = arr.astype(np.float32)
    summarize = arr.size > PRINT_OPTS.threshold
    values = _summarized_values(arr) if summarize else arr
    fmt = _ComplexFormatter(values) if arr.dtype.kind == "c" else _Formatter(values)
    return _array_str(arr, indent, summarize, fmt)


def _add_suffixes(tensor_str: str, suffixes: list[str], indent: int) -> str:
    parts = [tensor_str]
    # PyTorch's count: one more than the last line's length (see NOTE [Printing quirks...]).
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _is_parameter(t: Tensor) -> bool:
    # nn.Parameter (layer 6) sets the class attribute ``_is_param``; this layer cannot import it.
    return bool(getattr(type(t), "_is_param", False))


def _autograd_suffixes(t: Tensor) -> list[str]:
    try:
        grad_fn = t.grad_fn
    except RuntimeError:
        # a view made in no-grad mode and changed in place raises here, as in PyTorch
        return ["grad_fn=<Invalid>"]
    if grad_fn is not None:
        return [f"grad_fn=<{type(grad_fn).__name__}>"]
    return ["requires_grad=True"] if t.requires_grad else []


def _tangent(t: Tensor) -> Any:
    # forward_ad.unpack_dual: no tangent outside a dual level
    if GLOBAL.dual_level < 0:
        return None
    return STATE_HOOKS.get_tangent(t, GLOBAL.dual_level)


def tensor_repr(t: Tensor, *, tensor_contents: str | None = None) -> str:
    """``repr(t)``: see the module docstring. `tensor_contents` replaces the printed values
    (tensor subclasses print their own contents inside PyTorch's frame).

    Mirrors: ``torch._tensor_str._str`` and ``_str_intern``.
    """
    plain = type(t) is Tensor or (_is_parameter(t) and type(t).__name__ == "Parameter")
    prefix = "tensor(" if plain else f"{type(t).__name__}("
    indent = len(prefix)
    dtype = t.dtype
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default = GLOBAL.default_dtype
    if t.device.type == "meta":  # no values: PyTorch prints "..." and always the size
        arr = None
        suffixes.append(f"size={tuple(t.shape)}")
        if dtype is not default:
            suffixes.append(f"dtype={dtype!r}")
        body = "..."
    elif (arr := _backend.to_numpy(t._data)).size == 0:
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
        if dtype is not default:
            suffixes.append(f"dtype={dtype!r}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(arr.shape)}")
        complex_default = "complex128" if default.name == "float64" else "complex64"
        if dtype is not default and dtype.name not in ("int64", "bool", complex_default):
            suffixes.append(f"dtype={dtype!r}")
        body = _tensor_str(arr, indent)
    if tensor_contents is not None:
        body = tensor_contents
    suffixes += _autograd_suffixes(t)
    tangent = _tangent(t)
    if tangent is not None:
        suffixes.append(f"tangent={tangent}")
    out = _add_suffixes(prefix + body, suffixes, indent)
    if _is_parameter(t) and not plain:
        out = f"Parameter({out})"
    return out


def install() -> None:
    """Make `tensor_repr` the formatter behind ``Tensor.__repr__``."""
    STATE_HOOKS.format_tensor = tensor_repr  # type: ignore[method-assign]


install()


_str = _str_intern = tensor_repr  # PyTorch's names (libraries call ``_str_intern`` directly)
