"""Python operators for array classes that route every operation through NumPy's ufuncs.

Backends whose arrays are not NumPy arrays (the shape-only `meta` backend, the strict test
backend) implement ``__array_ufunc__``; `install` gives such a class ``+``, ``-``, ``@``, the
comparisons, the reflected and in-place forms and the unary operators, each one ufunc call, so
the backend sees every operator as the ufunc it is.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["install"]

_BINARY = (("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
           ("truediv", np.true_divide), ("floordiv", np.floor_divide), ("mod", np.remainder),
           ("pow", np.power), ("matmul", np.matmul), ("and", np.bitwise_and),
           ("or", np.bitwise_or), ("xor", np.bitwise_xor), ("lshift", np.left_shift),
           ("rshift", np.right_shift))
_COMPARE = (("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
            ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal))
_UNARY = (("neg", np.negative), ("pos", np.positive), ("abs", np.absolute),
          ("invert", np.invert))


def _operator(ufunc: Any, reflected: bool = False, inplace: bool = False) -> Any:
    if inplace:
        def op(self: Any, other: Any) -> Any:
            ufunc(self, other, out=(self,))
            return self
    elif reflected:
        def op(self: Any, other: Any) -> Any:
            return ufunc(other, self)
    else:
        def op(self: Any, other: Any) -> Any:
            return ufunc(self, other)
    return op


def install(cls: type) -> None:
    """Give `cls` the operator methods (see the module docstring)."""
    for name, ufunc in _BINARY:
        setattr(cls, f"__{name}__", _operator(ufunc))
        setattr(cls, f"__r{name}__", _operator(ufunc, reflected=True))
        setattr(cls, f"__i{name}__", _operator(ufunc, inplace=True))
    for name, ufunc in _COMPARE:
        setattr(cls, f"__{name}__", _operator(ufunc))
    for name, ufunc in _UNARY:
        setattr(cls, f"__{name}__", lambda self, _u=ufunc: _u(self))
