"""``out=`` for the ``torch.*`` functions that take it (not their Tensor methods).

Layer 4. `install` wraps the listed functions of the ``hookgrad`` namespace that do not take
``out`` themselves; `install_result_writes` wraps those (of ``torch``, ``linalg``, ``special``)
that take it in their signature but computed without it. The call computes as without ``out``, then writes into `out` as PyTorch's
out-variants do:
- an argument (or `out`) requiring grad while grad mode is on is PyTorch's RuntimeError
  ("functions with out=... arguments don't support automatic differentiation");
- elementwise results must be castable to `out`'s dtype (``canCast``: no float into an integral
  tensor, nothing but bool into bool); reductions and scans compute in `out`'s dtype;
- an `out` of another shape is resized (a ``UserWarning`` when it held elements), then the
  result is copied in (one version bump, as ``copy_``).
"""

from __future__ import annotations

import functools
import inspect
import sys
import warnings
from typing import Any

from hookgrad._config import STATE
from hookgrad._tensor import Tensor

# reductions and scans: computed in out's dtype (ATen passes it as the result type)
_REDUCTIONS = frozenset({"sum", "mean", "prod", "cumsum", "cumprod", "nansum", "logsumexp",
                         "amax", "amin"})
# these refuse out= without a dim (their dim-less overloads have no out variant)
_NO_DIM_OUT = frozenset({"sum", "mean", "prod", "nansum"})
_ELEMENTWISE = ("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
                "maximum", "minimum", "atan2", "remainder", "fmod", "exp", "log", "sin", "cos",
                "tanh", "sigmoid", "abs", "neg", "sqrt", "rsqrt", "pow", "clamp", "lerp",
                "addcmul", "addcdiv", "matmul", "mm", "bmm", "mv", "dot", "floor_divide",
                "logical_and", "logical_or", "bitwise_and", "eq", "lt", "gt", "le", "ge", "ne")


def can_cast(src: Any, dst: Any) -> bool:
    """PyTorch's ``canCast`` (may a result of dtype `src` be written into `dst`)."""
    if src.is_floating_point and not (dst.is_floating_point or dst.is_complex):
        return False
    if src.is_complex and not dst.is_complex:
        return False
    return not (src.scalar_type != "Bool" and dst.scalar_type == "Bool")


def joined_out(name: str, ts: list, result: Tensor, out: Any) -> Tensor:
    """``out=`` of cat/stack: PyTorch's argument, autograd and ``canCast`` checks, the write."""
    from hookgrad._functional.creation import _write_out  # (creation is above this module)

    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if STATE.grad_enabled and any(t.requires_grad for t in (*ts, out)):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    if not can_cast(result.dtype, out.dtype):  # stack is cat underneath, in its message too
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                        f"{out.dtype.scalar_type}")
    return _write_out(out, result)


def _tensors(args: tuple, kwargs: dict) -> list:
    out = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(x for x in a if isinstance(x, Tensor))
    return out


def _write(name: str, result: Tensor, out: Tensor) -> Tensor:
    if name not in _REDUCTIONS and not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {result.dtype.scalar_type} can't be cast to the "
                           f"desired output type {out.dtype.scalar_type}")
    if tuple(out.shape) != tuple(result.shape):
        if out.numel():
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape "
                f"{list(result.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                "with t.resize_(0).", UserWarning, stacklevel=3)
        out.resize_(tuple(result.shape))
    out.copy_(result)  # (nothing requires grad here, or grad mode is off: no node)
    return out


def _params(fn: Any) -> Any:
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}


def with_out(name: str, fn: Any) -> Any:
    """`fn` taking an ``out=`` keyword (see the module docstring)."""
    @functools.wraps(fn)
    def call(*args: Any, out: Tensor | None = None, **kwargs: Any) -> Any:
        if out is None:
            return fn(*args, **kwargs)
        if not isinstance(out, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
        if name in _NO_DIM_OUT and len(args) < 2 and "dim" not in kwargs:
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            "(Tensor, out=Tensor), but expected one of:\n * (Tensor input, *, "
                            "torch.dtype dtype = None)\n")
        if STATE.grad_enabled and any(t.requires_grad for t in (*_tensors(args, kwargs), out)):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires "
                               "grad.")
        if name in ("cumsum", "cumprod") and out.dtype.scalar_type == "Bool":  # no such kernel
            raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")
        if name in _REDUCTIONS and "dtype" in _params(fn) and kwargs.get("dtype") is None:
            kwargs["dtype"] = out.dtype  # ATen reduces in out's dtype
        return _write(name, fn(*args, **kwargs), out)
    return call


def install(namespace: dict) -> None:
    """Give the ``torch.*`` functions in `namespace` that lack it an ``out=`` keyword."""
    for name in (*_REDUCTIONS, *_ELEMENTWISE):
        fn = namespace.get(name)
        if fn is None:
            continue
        if "out" not in _params(fn):
            namespace[name] = with_out(name, fn)


# Functions whose signature takes ``out=`` but whose body computed without it: they returned a
# fresh tensor and left `out` untouched, where PyTorch writes the result into it (and returns
# `out`). `install_result_writes` wraps them. Factories take `out`'s dtype when none is given;
# functions returning several tensors take a tuple of as many `out` tensors.
_RESULT_WRITES = {
    "torch": ("addbmm", "addmv", "addr", "alias_copy", "as_strided_copy", "bernoulli",
              "chain_matmul", "cholesky", "cholesky_inverse", "cholesky_solve",
              "detach_copy", "diagonal_copy", "expand_copy", "frexp", "geqrf", "i0", "inverse",
              "logspace", "lu_solve", "lu_unpack", "mode", "multinomial", "nanmedian",
              "nanquantile", "narrow_copy", "normal", "ormqr", "permute_copy", "qr", "quantile",
              "rand", "randint", "randn", "randperm", "range", "select_copy", "slice_copy",
              "slogdet", "squeeze_copy", "svd", "t_copy", "tensordot", "transpose_copy",
              "unfold_copy", "unsqueeze_copy", "view_copy"),
    "linalg": ("cholesky", "cholesky_ex", "cond", "eigh", "eigvalsh", "inv", "inv_ex",
               "ldl_factor", "ldl_factor_ex", "ldl_solve", "lu", "lu_factor", "lu_factor_ex",
               "lu_solve", "matrix_rank", "multi_dot", "pinv", "qr", "solve_ex",
               "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve"),
    "special": ("airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "erfcx", "i0e",
                "i1", "i1e", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
                "modified_bessel_k1", "ndtri", "scaled_modified_bessel_k0",
                "scaled_modified_bessel_k1", "spherical_bessel_j0"),
}
_FACTORIES = frozenset({"logspace", "rand", "randint", "randn", "randperm", "range", "normal"})


def writes_result(name: str, fn: Any) -> Any:
    """`fn` (which takes and ignores ``out``) writing its result into ``out`` as PyTorch does."""
    @functools.wraps(fn)
    def call(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if out is None:
            return fn(*args, **kwargs)
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        for o in outs:
            if not isinstance(o, Tensor):
                raise TypeError(f"{name}(): argument 'out' must be Tensor, not "
                                f"{type(o).__name__}")
        if STATE.grad_enabled and any(t.requires_grad for t in (*_tensors(args, kwargs),
                                                                *outs)):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires "
                               "grad.")
        if name in _FACTORIES and kwargs.get("dtype") is None and "dtype" in _params(fn):
            kwargs["dtype"] = outs[0].dtype  # a factory's out= sets the result's dtype
        result = fn(*args, **kwargs)
        if isinstance(result, Tensor):
            if isinstance(out, (tuple, list)):
                raise TypeError(f"{name}(): argument 'out' must be Tensor, not "
                                f"{type(out).__name__}")
            return _write(name, result, out)
        if not isinstance(out, (tuple, list)) or len(outs) != len(result):
            raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(result)} "
                            f"Tensors, not {type(out).__name__}")
        written = [_write(name, r, o) for r, o in zip(result, outs, strict=True)]
        return type(result)(written) if hasattr(result, "_fields") or type(result) is not \
            tuple else tuple(written)
    return call


def install_result_writes(**namespaces: dict) -> None:
    """Wrap the functions of `_RESULT_WRITES` in each namespace (``torch=``, ``linalg=``,
    ``special=``: their module dicts) with `writes_result`."""
    wrapped: dict[int, Any] = {}
    for key, names in _RESULT_WRITES.items():
        namespace = namespaces[key]
        for name in names:
            fn = namespace.get(name)
            if fn is not None and "out" in _params(fn):
                namespace[name] = wrapped.setdefault(id(fn), writes_result(name, fn))
    # modules that re-export one of them (``utils.data.dataset.randperm``, ...) get the same
    # wrapped object, so ``a is b`` between namespaces stays as in PyTorch
    for module in [m for n, m in sys.modules.items() if n.startswith("hookgrad.") and m]:
        names = getattr(module, "__dict__", {})
        for attr, value in list(names.items()):
            if callable(value) and id(value) in wrapped and not attr.startswith("_"):
                names[attr] = wrapped[id(value)]
