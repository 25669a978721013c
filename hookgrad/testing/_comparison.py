"""`assert_close`: PyTorch's tolerance-based comparison of tensors, numbers and containers.

The structure follows ``torch.testing._comparison``: containers are walked in step (sequences by
index, mappings by key), each leaf pair is handled by the first "pair" kind that accepts it
(None, booleans, numbers, tensor-likes), and the first failure becomes the error, with the
position of the failing item appended. Messages and default tolerances match PyTorch 2.13.
"""

from __future__ import annotations

import cmath
import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from hookgrad._backend import to_numpy
from hookgrad._dtypes import dtype as _dtype
from hookgrad._dtypes import from_numpy_dtype, promote_types
from hookgrad._tensor import Tensor

__all__ = ["assert_close"]

# (rtol, atol) per dtype name; other dtypes compare exactly (PyTorch's _DTYPE_PRECISIONS).
_PRECISIONS = {
    "float16": (0.001, 1e-5),
    "bfloat16": (0.016, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}
_NUMBER_DTYPES = {int: "int64", float: "float64", complex: "complex128"}


class _Mismatch(Exception):
    """One failed comparison: the exception type to raise, its text and the item path."""

    def __init__(self, kind: type[Exception], msg: str, path: tuple = ()) -> None:
        super().__init__(msg)
        self.kind = kind
        self.msg = msg
        self.path = path

    def to_error(self, msg: str | Callable[[str], str] | None) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.msg
        if self.path:
            text += "\n\nThe failure occurred for item " + "".join(str([p]) for p in self.path)
        return self.kind(msg(text) if callable(msg) else text)


class _NotSupported(Exception):
    """This pair kind does not handle these inputs: try the next one."""


def _tolerances(names: Sequence[str], rtol: float | None, atol: float | None,
                path: tuple) -> tuple[float, float]:
    if (rtol is None) ^ (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise _Mismatch(
            ValueError,
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.",
            path,
        )
    if rtol is not None and atol is not None:
        return rtol, atol
    pairs = [_PRECISIONS.get(n, (0.0, 0.0)) for n in names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _mismatch_msg(kind: str, *, extra: str, abs_diff: Any, abs_idx: Any, rel_diff: Any,
                  rel_idx: Any, rtol: float, atol: float) -> str:
    """PyTorch's ``_make_mismatch_msg``."""
    equality = rtol == 0 and atol == 0

    def diff_line(name: str, diff: Any, idx: Any, tol: float) -> str:
        line = (f"{name.title()} difference: {diff}" if idx is None
                else f"Greatest {name} difference: {diff} at index {idx}")
        return line + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{kind} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    msg += diff_line("absolute", abs_diff, abs_idx, atol)
    msg += diff_line("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual: Any, expected: Any, rtol: float, atol: float) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", extra=f"Expected {expected} but got {actual}.",
                         abs_diff=abs_diff, abs_idx=None, rel_diff=rel_diff, rel_idx=None,
                         rtol=rtol, atol=atol)


# ---------------------------------------------------------------------------------- pair kinds
# Each kind either declines the inputs (`_NotSupported`) or returns a thunk that compares them.
# Declining and the setup errors (tolerances) happen while pairs are originated, before any
# comparison runs; only comparison failures take the user's ``msg`` (PyTorch's two phases).
Thunk = Callable[[], None]


def _none_pair(actual: Any, expected: Any, path: tuple, **_: Any) -> Thunk:
    if not (actual is None or expected is None):
        raise _NotSupported

    def check() -> None:
        if not (actual is None and expected is None):
            raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}", path)

    return check


def _bool_pair(actual: Any, expected: Any, path: tuple, **_: Any) -> Thunk:
    kinds = (bool, np.bool_)
    if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
        raise _NotSupported

    def check() -> None:
        if bool(actual) is not bool(expected):
            raise _Mismatch(AssertionError,
                            f"Booleans mismatch: {bool(actual)} is not {bool(expected)}", path)

    return check


def _as_number(x: Any) -> Any:
    if isinstance(x, np.number):
        return x.item()
    if isinstance(x, (int, float, complex)) and not isinstance(x, (bool, np.bool_)):
        return x
    raise _NotSupported


def _number_pair(actual: Any, expected: Any, path: tuple, *, rtol: float | None,
                 atol: float | None, equal_nan: bool, check_dtype: bool, **_: Any) -> Thunk:
    a, e = _as_number(actual), _as_number(expected)
    rtol, atol = _tolerances([_NUMBER_DTYPES[type(a)], _NUMBER_DTYPES[type(e)]], rtol, atol, path)

    def check() -> None:
        if check_dtype and type(a) is not type(e):
            raise _Mismatch(AssertionError,
                            f"The (d)types do not match: {type(a)} != {type(e)}.", path)
        if a == e or (equal_nan and cmath.isnan(a) and cmath.isnan(e)):
            return
        abs_diff = abs(a - e)
        if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(e):
            return
        raise _Mismatch(AssertionError, _scalar_msg(a, e, rtol, atol), path)

    return check


def _tensor_parts(x: Any) -> tuple[np.ndarray, _dtype, Any]:
    if isinstance(x, Tensor):
        return np.asarray(to_numpy(x._data)), x.dtype, x.device
    return np.asarray(x), from_numpy_dtype(np.asarray(x).dtype), "cpu"


def _tensor_pair(actual: Any, expected: Any, path: tuple, *, rtol: float | None,
                 atol: float | None, allow_subclasses: bool, **options: Any) -> Thunk:
    kinds = (Tensor, np.ndarray)
    if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
        raise _NotSupported
    related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
    if not related or (not allow_subclasses and type(actual) is not type(expected)):
        raise _NotSupported
    a_parts, e_parts = _tensor_parts(actual), _tensor_parts(expected)
    tols = _tolerances([a_parts[1].name, e_parts[1].name], rtol, atol, path)
    return lambda: _compare_tensors(actual, expected, a_parts, e_parts, tols, path, **options)


def _compare_tensors(actual: Any, expected: Any, a_parts: tuple, e_parts: tuple, tols: tuple,
                     path: tuple, *, equal_nan: bool, check_dtype: bool, check_device: bool,
                     check_stride: bool) -> None:
    (a, a_dtype, a_dev), (e, e_dtype, e_dev) = a_parts, e_parts

    def attribute(name: str, x: Any, y: Any) -> None:
        raise _Mismatch(AssertionError,
                        f"The values for attribute '{name}' do not match: {x} != {y}.", path)

    if a.shape != e.shape:
        attribute("shape", _size(actual), _size(expected))
    if check_device and str(a_dev) != str(e_dev):
        attribute("device", a_dev, e_dev)
    if check_dtype and a_dtype != e_dtype:
        attribute("dtype", a_dtype, e_dtype)
    if check_stride and _strides(a) != _strides(e):
        attribute("stride()", _strides(a), _strides(e))
    if a_dtype != e_dtype:
        common = promote_types(a_dtype, e_dtype).np  # PyTorch's promotion: int64+float32=float32
        a, e = a.astype(common), e.astype(common)
    _compare_values(a, e, tols[0], tols[1], equal_nan, path)

def _size(x: Any) -> Any:
    if isinstance(x, Tensor):
        return x.shape
    from hookgrad._dtypes import Size

    return Size(np.asarray(x).shape)


def _strides(a: np.ndarray) -> tuple:
    return tuple(s // a.itemsize for s in a.strides)


def _isclose(a: np.ndarray, e: np.ndarray, rtol: float, atol: float,
             equal_nan: bool) -> np.ndarray:
    if a.dtype.kind not in "fcV":
        return np.asarray(a == e) if rtol == 0 and atol == 0 else np.isclose(a, e, rtol, atol)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _compare_values(a: np.ndarray, e: np.ndarray, rtol: float, atol: float, equal_nan: bool,
                    path: tuple) -> None:
    matches = _isclose(a, e, rtol, atol, equal_nan)
    if np.all(matches):
        return
    if a.ndim == 0:
        raise _Mismatch(AssertionError, _scalar_msg(a.item(), e.item(), rtol, atol), path)
    raise _Mismatch(AssertionError, _tensor_msg(a, e, matches, rtol, atol), path)


def _tensor_msg(a: np.ndarray, e: np.ndarray, matches: np.ndarray, rtol: float,
                atol: float) -> str:
    """PyTorch's ``_make_tensor_mismatch_msg`` (differences computed in the compared dtype)."""
    total = matches.size
    mismatches = total - int(np.sum(matches))
    extra = f"Mismatched elements: {mismatches} / {total} ({mismatches / total:.1%})"
    af, ef, mf = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    if af.dtype.kind not in "fcV":
        af, ef = af.astype(np.int64), ef.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(af - ef)
        abs_diff[mf] = 0
        abs_i = int(np.argmax(abs_diff))
        if af.dtype.kind in "fcV":
            rel_diff = abs_diff / np.abs(ef)
        else:  # PyTorch's int64 / int64 true division gives the default float dtype
            rel_diff = abs_diff.astype(np.float32) / np.abs(ef).astype(np.float32)
        rel_diff[mf] = 0
        rel_i = int(np.argmax(rel_diff))
    return _mismatch_msg(
        "Tensor-likes", extra=extra, abs_diff=abs_diff[abs_i].item(),
        abs_idx=_unravel(abs_i, matches.shape), rel_diff=rel_diff[rel_i].item(),
        rel_idx=_unravel(rel_i, matches.shape), rtol=rtol, atol=atol,
    )


def _unravel(flat: int, shape: tuple) -> tuple:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


_PAIRS = (_none_pair, _bool_pair, _number_pair, _tensor_pair)


def _is_sequence(x: Any) -> bool:
    return isinstance(x, Sequence) and not isinstance(x, str)


def _originate(actual: Any, expected: Any, path: tuple, options: dict, out: list) -> None:
    """Walk containers in step, appending one comparison thunk per leaf pair to `out`."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(
                AssertionError,
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", path)
        for i, (x, y) in enumerate(zip(actual, expected)):
            _originate(x, y, path + (i,), options, out)
        return
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        a_keys, e_keys = set(actual.keys()), set(expected.keys())
        if a_keys != e_keys:
            raise _Mismatch(
                AssertionError,
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(e_keys - a_keys)}\n"
                f"Additional keys in the actual mapping: {sorted(a_keys - e_keys)}", path)
        keys: Any = actual.keys()
        with contextlib.suppress(Exception):  # deterministic order when keys are sortable
            keys = sorted(keys)
        for k in keys:
            _originate(actual[k], expected[k], path + (k,), options, out)
        return
    for pair in _PAIRS:
        try:
            out.append(pair(actual, expected, path, **options))
        except _NotSupported:
            continue
        return
    raise _Mismatch(
        TypeError,
        f"No comparison pair was able to handle inputs of type {type(actual)} and "
        f"{type(expected)}.", path)


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg: str | Callable[[str], str] | None = None,
) -> None:
    """Assert that `actual` and `expected` are close: ``|actual - expected| <= atol + rtol*|e|``.

    Args:
        actual, expected: tensors (hookgrad or NumPy arrays), Python/NumPy numbers, booleans,
            None, or sequences/mappings of those (compared element by element).
        rtol, atol: tolerances; give both or neither. Omitted: PyTorch's defaults for the
            dtypes (float32 ``1.3e-6``/``1e-5``, float64 ``1e-7``/``1e-7``, float16
            ``1e-3``/``1e-5``, exact for integers and booleans).
        equal_nan: treat two NaNs as equal.
        check_dtype: require equal dtypes (else both are promoted before comparing).
        check_device, check_stride: also compare devices / strides. check_layout and
            allow_subclasses: as in PyTorch (hookgrad has one layout).
        msg: replaces the generated message (a str), or maps it (a callable).

    Raises:
        AssertionError: the values (or an attribute: shape, dtype, ...) differ; the message
            lists the number of mismatches and the greatest absolute and relative differences.
        TypeError: inputs of a kind that cannot be compared.
        ValueError: only one of `rtol` / `atol` was given.

    Example:
        >>> import hookgrad as torch
        >>> torch.testing.assert_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0]))

    Mirrors: ``torch.testing.assert_close``.
    """
    __tracebackhide__ = True
    options = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan, "check_dtype": check_dtype,
               "check_device": check_device, "check_stride": check_stride,
               "allow_subclasses": allow_subclasses}
    thunks: list[Thunk] = []
    try:
        _originate(actual, expected, (), options, thunks)
    except _Mismatch as m:
        raise m.to_error(None) from None  # setup errors ignore `msg`, as in PyTorch
    for check in thunks:
        try:
            check()
        except _Mismatch as m:
            raise m.to_error(msg) from None

