"""The Jacobian helpers PyTorch's gradcheck module still exports (deprecated but called).

`get_numerical_jacobian` / `get_numerical_jacobian_wrt_specific_input` use central differences,
perturbing each element of the input in place (a function that closes over its inputs sees it,
as in PyTorch); `get_analytical_jacobian` builds the Jacobian one vector-Jacobian product per
output element, twice, to report whether backward is deterministic. Jacobians are laid out as
PyTorch's: ``(input numel, output numel)``, in the output's dtype.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._backend import to_numpy
from hookgrad._tensor import Tensor
from hookgrad.autograd._api import grad as _grad
from hookgrad.autograd._torch_function import is_tensor_like

__all__ = ["get_numerical_jacobian", "get_analytical_jacobian",
           "get_numerical_jacobian_wrt_specific_input", "is_tensor_like"]

_DEPRECATED = ("`{}` was part of PyTorch's private API and not meant to be exposed. We are "
               "deprecating it and it will be removed in a future version of PyTorch. If you "
               "have a specific use for this or feature request for this to be a stable API, "
               "please file us an issue at https://github.com/pytorch/pytorch/issues/new")


def _tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _f64(t: Tensor) -> np.ndarray:
    return np.array(to_numpy(t._data), dtype=np.float64).reshape(-1)


def _tensor_outputs(fn: Callable[..., Any], inputs: tuple) -> list[np.ndarray]:
    return [_f64(o) for o in _tuple(fn(*inputs)) if isinstance(o, Tensor)]


def _column_jacobian(fn: Callable[..., Any], inputs: tuple, x: Tensor, outputs: list[Tensor],
                     eps: float) -> tuple[Tensor, ...]:
    """d outputs / d x by central differences: one (x.numel, out.numel) matrix per output."""
    jac = [np.zeros((x.numel(), o.numel())) for o in outputs]
    arr = x._data
    for k, pos in enumerate(np.ndindex(*arr.shape)):
        orig = arr[pos].item()
        arr[pos] = orig - eps
        before = _tensor_outputs(fn, inputs)
        arr[pos] = orig + eps
        after = _tensor_outputs(fn, inputs)
        arr[pos] = orig
        for i in range(len(outputs)):
            jac[i][k] = (after[i] - before[i]) / (2 * eps)
    return tuple(Tensor._make(j.astype(o._data.dtype)) for j, o in zip(jac, outputs))


def get_numerical_jacobian(fn: Callable[..., Any], inputs: Any, target: Any = None,
                           eps: float = 1e-3, grad_out: float = 1.0) -> tuple[Tensor, ...]:
    """Numerical Jacobians of `fn`'s first output w.r.t. each input (or each of `target`).

    `fn` takes the inputs as one tuple. Deprecated in PyTorch (``FutureWarning``).

    Mirrors: ``torch.autograd.gradcheck.get_numerical_jacobian``.
    """
    warnings.warn(_DEPRECATED.format("get_numerical_jacobian"), FutureWarning, stacklevel=2)
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_numerical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    inputs = _tuple(inputs)

    def packed(*inps: Any) -> Any:
        return fn(inps)

    outs = [o for o in _tuple(packed(*inputs)) if isinstance(o, Tensor)]
    wrt = [t for t in _tuple(inputs if target is None else target)
           if isinstance(t, Tensor) and t.requires_grad]
    return tuple(_column_jacobian(packed, inputs, x, outs, eps)[0] for x in wrt)


def get_numerical_jacobian_wrt_specific_input(fn: Callable[..., Any], input_idx: int,
                                              inputs: tuple, outputs: tuple, eps: float,
                                              input: Tensor | None = None,
                                              is_forward_ad: bool = False) -> tuple[Tensor, ...]:
    """Numerical Jacobians of every output of ``fn(*inputs)`` w.r.t. ``inputs[input_idx]``.

    Mirrors: ``torch.autograd.gradcheck.get_numerical_jacobian_wrt_specific_input``.
    """
    x = inputs[input_idx] if input is None else input
    if not x.requires_grad:
        raise AssertionError("Expected input to have requires_grad=True")
    return _column_jacobian(fn, tuple(inputs), x, list(_tuple(outputs)), eps)


def _vjp_rows(output: Tensor, diff: list[Tensor]) -> tuple[list[np.ndarray], bool, bool]:
    n = output.numel()
    jac = [np.zeros((x.numel(), n)) for x in diff]
    types_ok = sizes_ok = True
    for k in range(n):
        onehot = np.zeros(n, dtype=to_numpy(output._data).dtype)
        onehot[k] = 1
        cot = Tensor._make(onehot.reshape(tuple(output.shape)))
        grads = _grad(output, diff, cot, retain_graph=True, allow_unused=True)
        for j, (g, x) in enumerate(zip(grads, diff)):
            if g is None:
                continue
            types_ok &= g.dtype == x.dtype
            if g.numel() != x.numel():
                sizes_ok = False
                continue
            jac[j][:, k] = _f64(g)
    return jac, types_ok, sizes_ok


def get_analytical_jacobian(inputs: Any, output: Tensor, nondet_tol: float = 0.0,
                            grad_out: float = 1.0) -> tuple[tuple[Tensor, ...], bool, bool, bool]:
    """``(jacobians, reentrant, sizes_ok, types_ok)`` of `output` w.r.t. the inputs needing grad.

    Mirrors: ``torch.autograd.gradcheck.get_analytical_jacobian``.
    """
    warnings.warn(_DEPRECATED.format("get_analytical_jacobian"), FutureWarning, stacklevel=2)
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_analytical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    diff = [t for t in _tuple(inputs) if isinstance(t, Tensor) and t.requires_grad]
    jac1, types_ok, sizes_ok = _vjp_rows(output, diff)
    jac2 = _vjp_rows(output, diff)[0]
    reentrant = all(np.allclose(a, b, rtol=0, atol=nondet_tol) for a, b in zip(jac1, jac2))
    dtype = to_numpy(output._data).dtype
    return (tuple(Tensor._make(j.astype(dtype)) for j in jac1), reentrant, sizes_ok, types_ok)
