"""The ``torch._foreach_*`` family: one op applied to every tensor of a list.

Mirrors: PyTorch's ``torch._foreach_<op>`` / ``torch._foreach_<op>_`` functions, which optimizer
libraries (schedule-free, Lion, timm's and pytorch-optimizer's optimizers, EMA helpers) call
directly. NumPy has no fused multi-tensor kernels, so each function loops over the list calling
the tensor op of the same name; values, gradients and version counters are those of the per-tensor
ops. The overloads and their checks are PyTorch's: a second operand may be a tensor list, a
scalar, a list of scalars or a 0-dim tensor (``add``/``sub`` take ``alpha``); out-of-place forms
return a tuple, in-place forms update the tensors and return them as a list. A function whose
tensor op hookgrad lacks (``lgamma``) is not defined.

Example:
    >>> import hookgrad as torch
    >>> torch._foreach_add([torch.ones(2), torch.zeros(1)], [1.0, 2.0])
    (tensor([2., 2.]), tensor([2.]))
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

from hookgrad._tensor import Tensor

__all__ = ["functions"]

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
          "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
          "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
_BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "clamp_max", "clamp_min", "pow")
_TENSOR_OVERLOAD = ("add", "mul", "div")  # the ops PyTorch gives a (list, Tensor) overload
_SCALAR_FORM = {"maximum": "clamp_min", "minimum": "clamp_max"}  # tensor.maximum(3) is an error


def _check(self: Any, *others: Any) -> list:
    self = list(self)
    if not self:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for other in others:
        if isinstance(other, (list, tuple)) and len(other) != len(self):
            if other and not isinstance(other[0], Tensor):
                raise RuntimeError(
                    "Tensor list must have same number of elements as scalar list.")
            raise RuntimeError("Tensor lists must have the same number of tensors, got "
                               f"{len(self)} and {len(other)}")
    return self


def _operands(other: Any, n: int) -> list:
    """`other` spread over `n` tensors (list, scalar or 0-dim tensor)."""
    if isinstance(other, (list, tuple)):
        return list(other)
    if isinstance(other, Tensor) and other.dim() != 0:
        raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.dim()} "
                           f"dimensions and {other.numel()} elements.")
    return [other] * n


def _apply(name: str, t: Tensor, o: Any, inplace: bool, **kw: Any) -> Tensor:
    scalar = isinstance(o, numbers.Number) or (isinstance(o, Tensor) and o.dim() == 0
                                               and name in _SCALAR_FORM)
    op = _SCALAR_FORM[name] if scalar and name in _SCALAR_FORM else name
    if inplace:
        method = getattr(t, op + "_", None)
        if method is not None:
            return method(o, **kw)
        return t.copy_(getattr(t, op)(o, **kw))
    return getattr(t, op)(o, **kw)


def _unary(name: str, inplace: bool) -> Callable[..., Any]:
    def fn(self: Any) -> Any:
        self = _check(self)
        if inplace:
            return [getattr(t, name + "_")() for t in self]
        return tuple(getattr(t, name)() for t in self)
    return fn


def _binary(name: str, inplace: bool) -> Callable[..., Any]:
    def fn(self: Any, other: Any, *, alpha: Any = None) -> Any:
        if name == "pow" and isinstance(self, numbers.Number) and not inplace:
            exps = _check(other)  # _foreach_pow(scalar, tensors): scalar ** each
            return tuple(t.__rpow__(self) for t in exps)
        # a 0-dim tensor passes as a Number; a bigger one only has the add/mul/div overload
        if isinstance(other, Tensor) and other.dim() != 0 and name not in _TENSOR_OVERLOAD:
            raise TypeError(f"_foreach_{name}{'_' if inplace else ''}() received an invalid "
                            f"combination of arguments - got (list, Tensor)")
        self = _check(self, other)
        kw = {} if alpha is None else {"alpha": alpha}
        out = [_apply(name, t, o, inplace, **kw) for t, o in zip(self, _operands(other,
                                                                                 len(self)))]
        return out if inplace else tuple(out)
    return fn


def _pointwise3(name: str, inplace: bool) -> Callable[..., Any]:
    def fn(self: Any, tensor1: Any, tensor2: Any, value: Any = 1) -> Any:
        self = _check(self, tensor1, tensor2)
        if isinstance(value, Tensor):
            value = value.tolist() if value.dim() else [value.item()] * len(self)
        values = _operands(value, len(self))
        if len(values) != len(self):
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        op = name + "_" if inplace else name
        out = [getattr(t, op)(a, b, value=v) for t, a, b, v in zip(self, tensor1, tensor2,
                                                                     values)]
        return out if inplace else tuple(out)
    return fn


def _lerp(inplace: bool) -> Callable[..., Any]:
    def fn(self: Any, tensors1: Any, weight: Any) -> Any:
        self = _check(self, tensors1, weight)
        weights = _operands(weight, len(self))
        op = "lerp_" if inplace else "lerp"
        out = [getattr(t, op)(e, w) for t, e, w in zip(self, tensors1, weights)]
        return out if inplace else tuple(out)
    return fn


def _extras() -> dict[str, Callable[..., Any]]:
    def _foreach_zero_(self: Any) -> list:
        return [t.zero_() for t in _check(self)]

    def _foreach_copy_(self: Any, src: Any, non_blocking: bool = False) -> list:
        self = _check(self, src)
        return [t.copy_(s, non_blocking) for t, s in zip(self, src)]

    def _foreach_clone(self: Any) -> tuple:
        return tuple(t.clone() for t in _check(self))

    def _foreach_max(self: Any) -> tuple:
        return tuple(t.max() for t in _check(self))

    def _foreach_powsum(self: Any, ord: float = 2, dtype: Any = None) -> tuple:
        return tuple((t.abs() ** ord).sum(dtype=dtype) for t in _check(self))

    def _foreach_mm(self: Any, mat2: Any) -> tuple:
        self = _check(self, mat2)
        return tuple(a.mm(b) for a, b in zip(self, mat2))

    return {f.__name__: f for f in (_foreach_zero_, _foreach_copy_, _foreach_clone,
                                    _foreach_max, _foreach_powsum, _foreach_mm)}


def functions() -> dict[str, Callable[..., Any]]:
    """Every ``_foreach_*`` function whose tensor op exists, by name."""
    out: dict[str, Callable[..., Any]] = {}
    for names, make in ((_UNARY, _unary), (_BINARY, _binary),
                        (("addcmul", "addcdiv"), _pointwise3)):
        for name in names:
            if not hasattr(Tensor, name):
                continue
            for inplace in (False, True):
                out[f"_foreach_{name}{'_' if inplace else ''}"] = make(name, inplace)
    out["_foreach_lerp"], out["_foreach_lerp_"] = _lerp(False), _lerp(True)
    out.update(_extras())
    for name, fn in out.items():
        fn.__name__ = fn.__qualname__ = name
        fn.__module__ = "hookgrad"
        fn.__doc__ = f"Mirrors: ``torch.{name}`` (see `hookgrad._surface.foreach`)."
    return out
