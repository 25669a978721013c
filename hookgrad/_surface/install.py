"""Attach the census composites to `Tensor` as methods and in-place ``<name>_`` variants.

Mirrors: the ``torch.Tensor`` methods of the same names. A method calls the namespace function
with ``self`` first; an in-place variant computes out of place and writes back with ``copy_``
(so its values, gradients and version bump are PyTorch's; the graph node is ``CopyBackwards``
rather than the op's own node).
"""

from __future__ import annotations

from typing import Any, Callable

from hookgrad._dtypes import can_cast
from hookgrad._surface import (
    autocast_state,
    checks,
    linalg_ops,
    math_ops,
    nn_aliases,
    nn_extra,
    private,
    reduce_ops,
    runtime,
    shape_ops,
    tensor_ops,
)
from hookgrad._tensor import Tensor
from hookgrad import return_types

MODULES = (math_ops, shape_ops, reduce_ops, runtime, nn_aliases, autocast_state, private,
           linalg_ops, tensor_ops, nn_extra, checks)

METHODS = [
    "deg2rad", "rad2deg", "sgn", "signbit", "copysign", "heaviside", "hypot", "logaddexp",
    "logaddexp2", "xlogy", "sinc", "isposinf", "isneginf", "isreal", "positive", "ldexp", "gcd",
    "lcm", "nextafter", "conj_physical", "resolve_conj", "resolve_neg", "is_conj", "is_neg",
    "is_signed", "is_nonzero", "is_same_size", "diag_embed", "diagflat", "kron", "cross", "vdot",
    "hsplit", "vsplit", "dsplit", "addmv", "addr", "addbmm", "matrix_power", "argwhere",
    "split_with_sizes", "unsafe_split", "unsafe_chunk", "adjoint", "kthvalue", "median",
    "quantile", "aminmax", "cummax", "cummin", "logcumsumexp", "dist", "renorm", "cov",
    "corrcoef", "rot90", "inverse", "det", "logdet", "slogdet", "cholesky",
]
INPLACE = [
    "deg2rad", "rad2deg", "sgn", "copysign", "heaviside", "hypot", "xlogy", "sinc", "ldexp",
    "gcd", "lcm", "nextafter", "addmv", "addr", "addbmm", "renorm", "conj_physical",
]


def _method(fn: Callable, name: str) -> Callable:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Tensor method form of ``torch.{name}``. Mirrors: ``torch.Tensor.{name}``."
    return method


def _inplace(fn: Callable, name: str) -> Callable:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        result = fn(self, *args, **kwargs)
        if not can_cast(result.dtype, self.dtype):
            raise RuntimeError(f"result type {_type_name(result.dtype)} can't be cast to the "
                               f"desired output type {_type_name(self.dtype)}")
        if tuple(result.shape) != tuple(self.shape):
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(result.shape)}")
        return self.copy_(result)
    method.__name__ = method.__qualname__ = name + "_"
    method.__doc__ = f"In-place ``{name}``. Mirrors: ``torch.Tensor.{name}_``."
    return method


def _type_name(dt: Any) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(str(dt).replace("torch.", ""), str(dt))


def namespace() -> dict[str, Any]:
    """Every function and constant the census modules add to ``hookgrad``."""
    names: dict[str, Any] = {}
    for mod in MODULES:
        names.update({n: getattr(mod, n) for n in mod.__all__})
    names.update(nn_aliases.ALIASES)
    names.update(tensor_ops.FUNCTIONS_OF_METHODS)
    names.update({f"{n}_": _inplace(names[n], n) for n in INPLACE})
    return names


def install() -> None:
    """Attach methods to `Tensor` and the new return types to ``return_types``."""
    names = namespace()
    for name in METHODS:
        if name not in Tensor.__dict__:
            setattr(Tensor, name, _method(names[name], name))
    for name in INPLACE:
        if name + "_" not in Tensor.__dict__:
            setattr(Tensor, name + "_", names[name + "_"])
    linalg_ops.install_linalg()
    tensor_ops.install()
    for name, cls in reduce_ops.RETURN_TYPES.items():
        setattr(return_types, name, cls)
