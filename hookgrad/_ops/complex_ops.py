"""Primitives that exist for complex tensors: the real/complex views, conjugation, angle,
polar and complex construction, sgn (PyTorch docs: "Complex Numbers").

NOTE [Complex gradients]
PyTorch's gradient of a complex tensor is the conjugate Wirtinger derivative scaled by two:
for a real loss L of ``z = x + iy``, ``z.grad = dL/dx + i dL/dy``. Through a holomorphic op
``w = f(z)`` this is ``grad_z = grad_w * conj(f'(z))``, while the op table's real rules compute
``grad * f'(z)``. Every such rule is linear in ``grad``, so `PrimitiveNode.apply` runs it on
``conj(grad)`` and conjugates what it returns: ``conj(conj(g) * f') = g * conj(f')``. That one
step makes every holomorphic rule (mul, div, exp, matmul, sum, views...) right for complex
values without a second body. The primitives here are not holomorphic (or map between real
and complex), so their rules are written in PyTorch's convention directly and are listed in
`DIRECT_COMPLEX_RULES`, which the engine leaves alone. A real input that met a complex value
(``x * z`` with real ``x``) gets the real part of its gradient, as PyTorch's engine does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._ops._batching import batches, broadcasting
from hookgrad._ops._elementwise import unbroadcast
from hookgrad._ops.registry import defop

__all__ = ["DIRECT_COMPLEX_RULES", "view_as_real_array", "view_as_complex_array"]


def view_as_real_array(self: Any) -> Any:
    """A real array of shape ``(*self.shape, 2)`` over the memory of complex `self`."""
    re = self.real  # a view with the complex array's strides, half its item size
    return namespace_of(re).lib.stride_tricks.as_strided(re, shape=re.shape + (2,),
                                                         strides=re.strides + (re.itemsize,))


def view_as_complex_array(self: Any) -> Any:
    """A complex array over real `self` whose last dimension (size 2, stride 1) holds pairs."""
    target = np.complex64 if self.dtype == np.float32 else np.complex128
    return self.view(target)[..., 0]


def _where_nonzero(mask_of: Any, value: Any) -> Any:
    # (value where the input is non-zero, zero where it is: the derivative PyTorch picks at 0)
    return value.masked_fill(mask_of == 0, 0)


defop("view_as_real", impl=view_as_real_array, view=True,
      vjp={"self": lambda grad: grad.contiguous().view_as_complex()}, jvp="linear")
defop("view_as_complex", impl=view_as_complex_array, view=True,
      vjp={"self": lambda grad: grad.contiguous().view_as_real()}, jvp="linear")
defop("conj_physical", impl=np.conjugate, vjp={"self": lambda grad: grad.conj_physical()},
      jvp="linear")
# ``z.conj()``: PyTorch's lazily conjugated view; hookgrad conjugates eagerly (a copy) but
# records PyTorch's node and flags the result (``is_conj``), see hookgrad/_functional/complex.py
defop("_conj", impl=np.conjugate, node_name="ConjBackward0",
      vjp={"self": lambda grad: grad.conj_physical()}, jvp="linear")


def _angle_impl(self: Any) -> Any:
    if self.dtype.kind == "c":
        return np.angle(self).astype(self.real.dtype)
    # real input: pi for negative values, 0 otherwise, NaN kept (PyTorch's angle)
    return np.where(self < 0, np.pi, np.where(np.isnan(self), self, 0)).astype(self.dtype)


def _angle_vjp(grad: Any, self: Any) -> Any:
    if not self.is_complex():
        return grad * 0
    # d angle = (x dy - y dx) / |z|^2, so grad_z = grad * i z / |z|^2
    return _where_nonzero(self, grad * self * 1j / (self.abs() ** 2))


def _angle_jvp(t: Any, self: Any) -> Any:
    if not self.is_complex():
        return t * 0
    return _where_nonzero(self.abs(), (self.conj_physical() * t).imag / (self.abs() ** 2))


defop("angle", impl=_angle_impl, saves=("self",), vjp={"self": _angle_vjp},
      jvp={"self": _angle_jvp})


def _polar_impl(abs: Any, angle: Any) -> Any:  # noqa: A002 - PyTorch's argument name
    out = abs * (np.cos(angle) + 1j * np.sin(angle))
    return out.astype(np.complex64 if abs.dtype == np.float32 else np.complex128)


# grad_abs = Re(conj(g) sgn(w)) and grad_angle = Re(conj(g) i w) for w = abs * e^(i angle)
defop("polar", impl=_polar_impl, inputs=("abs", "angle"), saves=("result",),
      vjp={"abs": lambda grad, result, abs_shape: unbroadcast(
               (grad.conj_physical() * result.sgn()).real, abs_shape),
           "angle": lambda grad, result, angle_shape: unbroadcast(
               (grad.conj_physical() * result * 1j).real, angle_shape)},
      jvp={"abs": lambda t, result: t * result.sgn(),
           "angle": lambda t, result: result * 1j * t})


def _complex_impl(real: Any, imag: Any) -> Any:
    out = real + 1j * imag
    return out.astype(np.complex64 if real.dtype == np.float32 else np.complex128)


# (PyTorch saves both inputs, though its formulas read only the gradient)
defop("complex", impl=_complex_impl, inputs=("real", "imag"), saves=("real", "imag"),
      vjp={"real": lambda grad, real, imag, real_shape: unbroadcast(grad.real, real_shape),
           "imag": lambda grad, real, imag, imag_shape: unbroadcast(grad.imag, imag_shape)},
      jvp={"real": lambda t: t * (1 + 0j), "imag": lambda t: t * 1j})


def _sgn_impl(self: Any) -> Any:
    if self.dtype.kind != "c":  # real: ATen's sign kernel ((0 < x) - (x < 0): 0 for NaN)
        return ((self > 0).astype(self.dtype) - (self < 0)).astype(self.dtype)
    r = np.abs(self)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(r == 0, 0, self / np.where(r == 0, 1, r)).astype(self.dtype)


def _sgn_vjp(grad: Any, self: Any, result: Any) -> Any:
    if not self.is_complex():  # real: PyTorch's zeros (NaN inputs and gradients included)
        from hookgrad._ops.shape import zeros_of
        return zeros_of(grad, tuple(grad.shape))
    # s = z/|z|: ds/dz = 1/(2|z|), ds/dconj(z) = -s^2/(2|z|)
    return _where_nonzero(self, (grad - result * result * grad.conj_physical())
                          / (2 * self.abs()))


def _sgn_jvp(t: Any, self: Any, result: Any) -> Any:
    return _where_nonzero(self, (t - result * (result.conj_physical() * t).real) / self.abs())


defop("sgn", impl=_sgn_impl, saves=("self", "result"), vjp={"self": _sgn_vjp},
      jvp={"self": _sgn_jvp})

# rules written in PyTorch's complex convention (NOTE [Complex gradients])
DIRECT_COMPLEX_RULES = frozenset({"view_as_real", "view_as_complex", "conj_physical", "_conj",
                                  "angle", "polar", "complex", "sgn"})

# vmap: all of them are elementwise in the batch dimension (the views add or drop the last one)
batches(["view_as_real", "view_as_complex", "conj_physical", "_conj", "angle", "polar",
         "complex", "sgn"], broadcasting)
