"""dtype objects, PyTorch's type promotion and default dtypes.

Layer 1 (NumPy only). Reprs read ``torch.float32`` and ``torch.Size([2])`` exactly as PyTorch's,
because printed values and error texts are compared against PyTorch.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from hookgrad._config import GLOBAL

_BOOL, _INT, _FLOAT = 0, 1, 2
_COMPLEX = 3


class dtype:
    """A tensor element type.

    Mirrors: ``torch.dtype`` (repr ``torch.float32``).
    """

    __slots__ = ("name", "np", "category", "itemsize", "legacy_name", "scalar_type",
                 "__weakref__")

    def __init__(self, name: str, np_dtype: Any, category: int, legacy_name: str) -> None:
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category
        self.itemsize = self.np.itemsize
        self.legacy_name = legacy_name
        # PyTorch's ScalarType name, as error texts spell it ("Long" in "... for 'Long'")
        self.scalar_type = legacy_name[: -len("Tensor")]

    @property
    def is_floating_point(self) -> bool:
        return self.category == _FLOAT

    @property
    def is_complex(self) -> bool:
        return self.category == _COMPLEX

    @property
    def is_signed(self) -> bool:
        return self.name not in ("bool", "float8_e8m0fnu") and not self.name.startswith("uint")

    def to_real(self) -> dtype:
        """The real dtype of the same precision (``complex64`` -> ``float32``).

        Mirrors: ``torch.dtype.to_real``.
        """
        return _REAL_OF.get(self.name, self)

    def to_complex(self) -> dtype:
        """The complex dtype of the same precision (``float64`` -> ``complex128``).

        Mirrors: ``torch.dtype.to_complex``.
        """
        if self.category == _COMPLEX:
            return self
        try:
            return _COMPLEX_OF[self.name]
        except KeyError:
            raise TypeError(f"hookgrad: no complex dtype of the precision of {self}") from None

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self) -> str:
        # pickle stores the module-level name; `bool` is spelled `bool_` in this module
        return "bool_" if self.name == "bool" else self.name


float32 = dtype("float32", np.float32, _FLOAT, "FloatTensor")
float64 = dtype("float64", np.float64, _FLOAT, "DoubleTensor")
float16 = dtype("float16", np.float16, _FLOAT, "HalfTensor")
int64 = dtype("int64", np.int64, _INT, "LongTensor")
int32 = dtype("int32", np.int32, _INT, "IntTensor")
int16 = dtype("int16", np.int16, _INT, "ShortTensor")
int8 = dtype("int8", np.int8, _INT, "CharTensor")
uint8 = dtype("uint8", np.uint8, _INT, "ByteTensor")
bool_ = dtype("bool", np.bool_, _BOOL, "BoolTensor")

complex64 = dtype("complex64", np.complex64, _COMPLEX, "ComplexFloatTensor")
complex128 = dtype("complex128", np.complex128, _COMPLEX, "ComplexDoubleTensor")
# PyTorch's "barebones" unsigned types: few kernels, no promotion with other integral types
uint16 = dtype("uint16", np.uint16, _INT, "UInt16Tensor")
uint32 = dtype("uint32", np.uint32, _INT, "UInt32Tensor")
uint64 = dtype("uint64", np.uint64, _INT, "UInt64Tensor")
# NOTE [bfloat16]: arrays of ml_dtypes' NumPy extension dtype (2 bytes, round to nearest even
# on every cast into it); `bind` computes on them in float32 and rounds the result back.
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT, "BFloat16Tensor")

ALL_DTYPES = (float32, float64, float16, int64, int32, int16, int8, uint8, bool_, complex64,
              complex128, uint16, uint32, uint64, bfloat16)
# the NumPy dtype of bfloat16 arrays (kind "V": NumPy's own floating checks do not see it)
BF16_NP = bfloat16.np
WIDE_UNSIGNED = (uint16, uint32, uint64)
_REAL_OF = {"complex64": float32, "complex128": float64}
_COMPLEX_OF = {"float32": complex64, "float64": complex128}

# PyTorch's other dtypes exist as objects, because libraries name them at load time
# (transformers reads float8 limits). They are in no table of supported dtypes, so creating or
# converting a tensor to one raises TypeError.
# float8 formats (transformers' FP8 caches read finfo(torch.float8_e4m3fn).max at import);
# NumPy has none, so their limits come from `_FINFO` below
float8_e4m3fn = dtype("float8_e4m3fn", np.uint8, _FLOAT, "Float8_e4m3fnTensor")
float8_e5m2 = dtype("float8_e5m2", np.uint8, _FLOAT, "Float8_e5m2Tensor")
float8_e4m3fnuz = dtype("float8_e4m3fnuz", np.uint8, _FLOAT, "Float8_e4m3fnuzTensor")
float8_e5m2fnuz = dtype("float8_e5m2fnuz", np.uint8, _FLOAT, "Float8_e5m2fnuzTensor")
float8_e8m0fnu = dtype("float8_e8m0fnu", np.uint8, _FLOAT, "Float8_e8m0fnuTensor")
UNSUPPORTED_DTYPES = (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)
# PyTorch's finfo of the floating dtypes NumPy lacks: bits, max, min, eps, tiny, resolution
_FINFO = {
    "bfloat16": (16, 3.3895313892515355e+38, -3.3895313892515355e+38, 0.0078125,
                 1.1754943508222875e-38, 0.01),
    "float8_e4m3fn": (8, 448.0, -448.0, 0.125, 0.015625, 1.0),
    "float8_e5m2": (8, 57344.0, -57344.0, 0.25, 6.103515625e-05, 1.0),
    "float8_e4m3fnuz": (8, 240.0, -240.0, 0.125, 0.0078125, 1.0),
    "float8_e5m2fnuz": (8, 57344.0, -57344.0, 0.125, 3.0517578125e-05, 1.0),
    "float8_e8m0fnu": (8, 1.7014118346046923e+38, 5.877471754111438e-39, 1.0,
                       5.877471754111438e-39, 1.0),
}
_FROM_NP = {d.np: d for d in ALL_DTYPES}

GLOBAL.default_dtype = float32


def from_numpy_dtype(np_dtype: Any) -> dtype:
    """The hookgrad dtype for a NumPy dtype; raises TypeError for unsupported ones."""
    try:
        return _FROM_NP[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).type.__name__}. The only "
            "supported types are: float64, float32, float16, complex64, complex128, int64, int32, "
            "int16, int8, uint64, uint32, uint16, uint8, and bool."
        ) from None


def to_dtype(d: Any) -> dtype:
    """Accept a hookgrad dtype, a NumPy dtype, a Python type or a torch dtype name."""
    if isinstance(d, dtype):
        # stand-in dtypes (hookgrad._unsupported: sub-byte, quantized) carry a marker
        if d in UNSUPPORTED_DTYPES or hasattr(d, "__hookgrad_unsupported__"):
            raise TypeError(f"hookgrad: tensors of dtype {d} are not supported")
        return d
    if d is float:  # Python's float is a C double: float64 whatever the default dtype
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    if d is complex:  # Python's complex is two C doubles
        return complex128
    name = getattr(d, "name", None) if not isinstance(d, str) else d
    if isinstance(name, str):
        name = name.replace("torch.", "")
        for cand in ALL_DTYPES:
            if cand.name == name:
                return cand
    return from_numpy_dtype(d)


def get_default_dtype() -> dtype:
    """Mirrors: ``torch.get_default_dtype``."""
    return GLOBAL.default_dtype


def set_default_dtype(d: dtype) -> None:
    """Set the dtype of Python float literals and float factories.

    Mirrors: ``torch.set_default_dtype`` (only float32/float64/float16 accepted).
    """
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    GLOBAL.default_dtype = d


def default_complex_dtype() -> dtype:
    """The complex dtype of the default float dtype (Python complex numbers get it)."""
    return complex128 if GLOBAL.default_dtype is float64 else complex64


def _unsigned_error(a: dtype, b: dtype) -> RuntimeError:
    return RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted "
                        f"to promote {a.scalar_type} and {b.scalar_type}")


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """Mirrors: ``torch.promote_types`` for the supported dtypes."""
    a, b = type1, type2
    if a is b:
        return a
    if a in WIDE_UNSIGNED or b in WIDE_UNSIGNED:
        # PyTorch promotes the wide unsigned types only with floating types
        if a.category == _FLOAT:
            return a
        if b.category == _FLOAT:
            return b
        raise _unsigned_error(a, b)
    if a.category == _COMPLEX or b.category == _COMPLEX:
        wide = a.itemsize if a.category == _COMPLEX else 2 * a.itemsize
        wide = max(wide, b.itemsize if b.category == _COMPLEX else 2 * b.itemsize)
        if a.category != _FLOAT and b.category != _FLOAT:  # integral: the complex one's width
            return a if a.category == _COMPLEX and (b.category != _COMPLEX or
                                                   a.itemsize >= b.itemsize) else b
        return complex128 if wide >= 16 else complex64
    if a.category != b.category:
        return a if a.category > b.category else b
    if a.itemsize == 2 and b.itemsize == 2 and a.category == _FLOAT:
        return float32  # float16 and bfloat16: neither holds the other's values
    if a.category == _INT and {a.name, b.name} == {"uint8", "int8"}:
        return int16
    if a.name == "uint8":
        return b
    if b.name == "uint8":
        return a
    return a if a.itemsize >= b.itemsize else b


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether PyTorch's same-kind rule allows casting `from_` to `to` (for in-place results).

    Example:
        >>> import hookgrad as torch
        >>> torch.can_cast(torch.float64, torch.int32)
        False

    Mirrors: ``torch.can_cast``.
    """
    if from_.category == _COMPLEX and to.category != _COMPLEX:
        return False
    if from_.category == _FLOAT and to.category < _FLOAT:
        return False
    return not (from_.category != _BOOL and to.category == _BOOL)


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    # PyTorch's c10 combine_categories: a lower tier only wins when it is of a higher category.
    if higher is None:
        return lower
    if higher.category == _COMPLEX:
        return higher
    if lower is not None and lower.category == _COMPLEX:
        # a complex lower tier keeps a floating higher tier's precision (float32 -> complex64)
        return higher.to_complex() if higher.category == _FLOAT else lower
    if higher.category == _FLOAT:
        return higher
    if lower is not None and (higher.category == _BOOL or lower.category > higher.category):
        return promote_types(higher, lower)
    return higher


def result_type_of(dims: list, zero_dims: list, wrapped: list) -> dtype:
    """Promote across PyTorch's three priority tiers (dimensioned, 0-dim, Python scalars).

    Each list holds dtypes; `wrapped` holds the dtypes Python scalars map to before defaulting.
    """
    def tier(ds: list) -> dtype | None:
        out = None
        for d in ds:
            out = d if out is None else promote_types(out, d)
        return out

    wrapped_t = tier([GLOBAL.default_dtype if d.category == _FLOAT else
                      default_complex_dtype() if d.category == _COMPLEX else d for d in wrapped])
    res = _combine_categories(tier(dims), _combine_categories(tier(zero_dims), wrapped_t))
    return res if res is not None else GLOBAL.default_dtype


def scalar_dtype(value: Any) -> dtype:
    """dtype a Python scalar gets as a wrapped number (before default-dtype substitution)."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, complex):
        return complex128
    return float64


class Size(tuple):
    """A shape: a tuple of ints whose slices, sums and repeats stay `Size`.

    Example:
        >>> import hookgrad as torch
        >>> torch.Size([2, 3]) + (4,)
        torch.Size([2, 3, 4])

    Mirrors: ``torch.Size`` (repr ``torch.Size([2, 3])``).
    """

    def __new__(cls, sizes: Any = ()) -> Size:
        items = []
        for i, s in enumerate(sizes):
            if isinstance(s, int) and not isinstance(s, bool):
                items.append(s)
                continue
            try:
                if isinstance(s, (float, bool)) or not hasattr(s, "__index__"):
                    raise TypeError
                items.append(s.__index__())
            except TypeError:
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is "
                                f"'{type(s).__name__}')") from None
        return super().__new__(cls, items)

    def __repr__(self) -> str:
        return f"torch.Size({list(self)!r})"

    def numel(self) -> int:
        """Product of the sizes. Mirrors: ``torch.Size.numel``."""
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item: Any) -> Any:
        out = super().__getitem__(item)
        return Size(out) if isinstance(item, slice) else out

    def __add__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n: Any) -> Size:
        return Size(tuple(self) * n)

    __rmul__ = __mul__

    def __reduce__(self) -> Any:
        return (Size, (tuple(self),))


# ---------------------------------------------------------------------------- wide unsigned
# PyTorch compiles few CPU kernels for uint16/uint32/uint64: copies, views, casts, fills, sort,
# mul/div, eq/ne, bitwise and/or/xor, sum/prod/cumsum and the float-valued math. The primitives
# below have none there, so they raise PyTorch's NotImplementedError (probed op by op against
# torch 2.13); the name in the message is the PyTorch kernel's.
UNSIGNED_MISSING: dict[str, str] = {
    **{name: "add_stub" for name in ("add", "sub", "rsub", "_nn_add_scalar")},
    **{name: f"{name}_cpu" for name in (
        "lt", "le", "gt", "ge", "neg", "abs", "sign", "flip", "frac", "take", "topk_indices",
        "logical_and", "logical_or", "logical_xor", "logical_not", "nanmedian", "mode",
        "count_nonzero", "argmax", "argmin", "addcmul", "addcdiv", "lerp", "lerp_tensor")},
    **{name: "max_all" for name in ("max", "amax", "maximum", "fmax")},
    **{name: "min_all" for name in ("min", "amin", "minimum", "fmin")},
    "max_dim": "max_cpu", "min_dim": "min_cpu", "topk": "topk_cpu",
    **{name: "pow" for name in ("pow", "pow_scalar", "pow_tensor")},
    **{name: "clamp_scalar_cpu" for name in ("clamp", "clamp_tensor", "clamp_tensor_max",
                                             "clamp_tensor_min")},
    "clamp_min": "clamp_min_scalar_cpu", "clamp_min_tensor": "clamp_min_cpu", "relu":
    "clamp_min_scalar_cpu", "clamp_max": "clamp_max_scalar_cpu", "clamp_max_tensor":
    "clamp_max_cpu", "floor_divide": "div_floor_cpu", "div_mode": "div_trunc_cpu",
    **{name: "remainder_cpu" for name in ("remainder", "remainder_scalar", "remainder_tensor")},
    **{name: "fmod_cpu" for name in ("fmod", "fmod_tensor")},
    "where": "where_cpu", "masked_fill": "masked_fill", "masked_fill_tensor": "masked_fill",
    "bitwise_not": "bitwise_not_cpu", "tril": "tril", "triu": "triu", "put": "take_put_cpu",
    **{name: "scatter_gather_tensor_cpu" for name in (
        "gather", "scatter", "scatter_add", "scatter_value", "scatter_reduce", "index_add",
        "index_reduce")},
    "index_put": "index_put", "lshift": "lshift_cpu", "rshift": "rshift_cpu",
    "nonzero": "nonzero_count_cpu", "bincount": "bincount_cpu", "isin": "isin_default_cpu",
    "median": "median_cpu", "arange": "arange_cpu", "linspace": "linspace_cpu",
    "kthvalue": "kthvalue_cpu", "index_select_1d": "index_select", "hash_tensor": "xor_sum_cpu",
    "cummax": "cummax_cpu", "cummin": "cummin_cpu",
    **{name: "dot" for name in ("mm", "bmm", "dot", "mv", "addmm", "baddbmm")},
}
_NIE, _RTE = NotImplementedError, RuntimeError
# PyTorch's complex kernels skip ordering, rounding and most special functions; these
# primitives raise its exception (type and text) on complex inputs. "{}" is the scalar type.
COMPLEX_MISSING: dict[str, tuple[type, str]] = {
    **{name: (_NIE, f'"{name}_cpu" not implemented for \'{{}}\'') for name in (
        "lt", "le", "gt", "ge", "remainder", "fmod", "erf", "erfc", "erfinv", "lgamma",
        "digamma", "polygamma", "atan2", "hypot", "logit", "heaviside")},
    **{name: (_NIE, "\"max_all\" not implemented for '{}'") for name in ("max", "max_dim")},
    **{name: (_NIE, "\"min_all\" not implemented for '{}'") for name in ("min", "min_dim")},
    "amax": (_NIE, "\"max_values_cpu\" not implemented for '{}'"),
    "amin": (_NIE, "\"min_values_cpu\" not implemented for '{}'"),
    **{name: (_RTE, f"{name} not implemented for complex tensors.") for name in (
        "maximum", "minimum", "fmax", "fmin")},
    **{name: (_NIE, "clamp is not supported for complex types") for name in (
        "clamp", "clamp_tensor", "clamp_tensor_max", "clamp_tensor_min", "clamp_min",
        "clamp_min_tensor", "clamp_max", "clamp_max_tensor", "relu", "hardtanh", "threshold")},
    **{name: (_RTE, " Sort does not support complex dtypes on CPU") for name in (
        "sort", "sort_stable", "argsort")},
    "topk": (_RTE, " topk does not support complex dtypes on CPU"),
    "hash_tensor": (_NIE, "\"xor_sum_cpu\" not implemented for '{}'"),
    "unique": (_NIE, "\"unique\" not implemented for '{}'"),
    "mse_loss": (_NIE, "\"mse_cpu\" not implemented for '{}'"),
    "smooth_l1_loss": (_NIE, "\"smooth_l1_cpu\" not implemented for '{}'"),
    "huber_loss": (_NIE, "\"huber_cpu\" not implemented for '{}'"),
    "binary_cross_entropy": (_NIE, "\"binary_cross_entropy\" not implemented for '{}'"),
    "binary_cross_entropy_with_logits": (_NIE, "\"binary_cross_entropy\" not implemented for "
                                               "'{}'"),
    "native_layer_norm": (_NIE, "\"LayerNormKernelImpl\" not implemented for '{}'"),
    "native_group_norm": (_NIE, "\"GroupNormKernelImpl\" not implemented for '{}'"),
    "native_batch_norm": (_NIE, "\"batch_norm_cpu\" not implemented for '{}'"),
    "signbit": (_NIE, "signbit is not implemented for complex tensors."),
    "topk_indices": (_RTE, " topk does not support complex dtypes on CPU"),
    "argmax": (_RTE, "argmax(): does not support complex input"),
    "argmin": (_RTE, "argmin(): does not support complex input"),
    **{name: (_NIE, f"{name} is not supported for complex inputs") for name in (
        "floor", "ceil", "trunc", "frac", "round", "round_decimals")},
    "floor_divide": (_NIE, "\"div_floor_cpu\" not implemented for '{}'"),
    "sign": (_NIE, "Unlike NumPy, torch.sign is not intended to support complex numbers. "
                   "Please use torch.sgn instead."),
    "gelu": (_NIE, "\"GeluKernelImpl\" not implemented for '{}'"),
    **{name: (_NIE, f"\"{name}\" not implemented for '{{}}'") for name in (
        "leaky_relu", "elu", "celu", "softplus", "hardsigmoid", "hardswish", "mish",
        "log_sigmoid", "softshrink", "hardshrink")},
}
# PyTorch's CPU LAPACK and FFT kernels have no bfloat16 variant (probed against torch 2.13)
BF16_MISSING: dict[str, tuple[type, str]] = {
    **{name: (_NIE, '"lu_cpu" not implemented for \'BFloat16\'') for name in (
        "linalg_lu_factor_ex", "linalg_det", "_linalg_det_sign", "linalg_logabsdet",
        "linalg_solve_ex", "linalg_lu")},
    "linalg_inv_ex": (_RTE, "linalg.inv: Low precision dtypes not supported. Got BFloat16"),
    "linalg_svd": (_NIE, '"linalg_svd_cpu" not implemented for \'BFloat16\''),
    "linalg_cholesky_ex": (_NIE, '"cholesky_cpu" not implemented for \'BFloat16\''),
    "linalg_qr": (_NIE, '"geqrf_cpu" not implemented for \'BFloat16\''),
    "linalg_eigh": (_NIE, '"linalg_eigh_cpu" not implemented for \'BFloat16\''),
    **{name: (_RTE, "Unsupported dtype BFloat16") for name in ("_fft_c2c", "_fft_r2c",
                                                               "_fft_c2r")},
    "special_erfcx": (_NIE, '"erfcx_cpu" not implemented for \'BFloat16\''),
    "special_ndtri": (_NIE, '"ndtri_cpu" not implemented for \'BFloat16\''),
}
_WIDE_NP = frozenset(d.np for d in WIDE_UNSIGNED)
# the first operand dtypes `bind` checks (one set lookup per call: NOTE [Restricted kernels])
RESTRICTED_NP = _WIDE_NP | {complex64.np, complex128.np, BF16_NP}


def check_kernel(name: str, np_dtype: Any) -> None:
    """PyTorch's error when primitive `name` has no CPU kernel for `np_dtype`, else nothing."""
    if np_dtype.kind == "c":
        entry = COMPLEX_MISSING.get(name)
        if entry is not None:
            raise entry[0](entry[1].format(_FROM_NP[np_dtype].scalar_type))
    elif np_dtype is BF16_NP:
        entry = BF16_MISSING.get(name)
        if entry is not None:
            raise entry[0](entry[1])
    elif np_dtype in _WIDE_NP and name in UNSIGNED_MISSING:
        kernel, scalar = UNSIGNED_MISSING[name], _FROM_NP[np_dtype].scalar_type
        raise NotImplementedError(f'"{kernel}" not implemented for \'{scalar}\'')


# ---------------------------------------------------------------------------- legacy names
_LEGACY = {"torch." + d.legacy_name: d for d in ALL_DTYPES}


_C_TYPES = {"int64": "int64_t", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "float32": "float", "float16": "c10::Half",
            "float64": "double"}


def check_scalar_fits(value: Any, np_dtype: Any) -> None:
    """PyTorch's checked conversion of a number written into a tensor of `np_dtype`
    (``c10::checked_convert``): NaN, an infinity or a value out of an integral dtype's range,
    or a finite value beyond a floating dtype's, raise its RuntimeError.

    Mirrors the check ``fill_``, ``masked_fill_``, ``index_fill_`` and ``x[i] = v`` make.
    """
    np_dtype = np.dtype(np_dtype)
    if np_dtype.kind not in "iuf" or isinstance(value, (bool, np.bool_)) or \
            not isinstance(value, (int, float, np.integer, np.floating)):
        return
    if np_dtype.kind == "f":
        info = np.finfo(np_dtype)
        bad = isinstance(value, (float, np.floating)) and np.isfinite(value) and \
            abs(float(value)) > float(info.max)
    else:
        limits = np.iinfo(np_dtype)
        if isinstance(value, (float, np.floating)):
            bad = not np.isfinite(value) or not limits.min <= float(value) <= limits.max
        else:
            bad = not limits.min <= int(value) <= limits.max
    if bad:
        name = _C_TYPES.get(np_dtype.name, np_dtype.name)
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")


def legacy_dtype(value: Any) -> dtype:
    """A dtype from a dtype or a legacy type name (``'torch.DoubleTensor'``) for ``.type()``."""
    if isinstance(value, dtype):
        return value
    if isinstance(value, type) and isinstance(getattr(value, "dtype", None), dtype):
        return value.dtype  # a legacy type class (``torch.FloatTensor``)
    if isinstance(value, str) and value in _LEGACY:
        return _LEGACY[value]
    if isinstance(value, str) and value.startswith("torch.cuda."):
        raise RuntimeError("hookgrad: CUDA legacy tensor types are not supported")
    if not isinstance(value, (str, type)):  # PyTorch's parser, before any name lookup
        raise TypeError("dtype must be a type, str, or dtype object")
    name = value if isinstance(value, str) else getattr(value, "__name__", repr(value))
    raise ValueError(f"invalid type: '{name}'")


# ---------------------------------------------------------------------------- finfo / iinfo
class finfo:
    """Machine limits of a floating dtype (the default dtype when omitted).

    Example:
        >>> import hookgrad as torch
        >>> torch.finfo(torch.float16).max
        65504.0

    Mirrors: ``torch.finfo`` (fields bits, eps, max, min, tiny, smallest_normal, resolution,
    dtype), read from NumPy.
    """

    def __init__(self, type: dtype | None = None) -> None:  # noqa: A002 - torch's name
        d = GLOBAL.default_dtype if type is None else type
        if not isinstance(d, dtype):
            raise TypeError("finfo(): argument 'type' (position 1) must be torch.dtype, not "
                            f"{d.__class__.__name__}")
        if not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        if d.name in _FINFO:
            self.bits, self.max, self.min, self.eps, self.tiny, self.resolution = _FINFO[d.name]
            self.smallest_normal, self.dtype = self.tiny, d.name
            return
        info = np.finfo(d.np)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)
        self.dtype = d.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Machine limits of an integral dtype.

    Example:
        >>> import hookgrad as torch
        >>> torch.iinfo(torch.uint8).max
        255

    Mirrors: ``torch.iinfo`` (fields bits, max, min, dtype), read from NumPy.
    """

    def __init__(self, type: dtype) -> None:  # noqa: A002 - torch's name
        if not isinstance(type, dtype):
            raise TypeError("iinfo(): argument 'type' (position 1) must be torch.dtype, not "
                            f"{type.__class__.__name__}")
        if type.category == _BOOL:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.category != _INT:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        info = np.iinfo(type.np)
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = type.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        # PyTorch formats the limits as C++ doubles (%g), also for integers
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"


# torch.Size is a pytree node in PyTorch (its ints are leaves); register it where it is defined
from hookgrad.utils import _pytree as _pytree  # noqa: E402

_pytree.register_pytree_node(Size, lambda s: (list(s), None), lambda v, c: Size(v))
