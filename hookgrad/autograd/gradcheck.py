"""Numerical gradient checks: `gradcheck` and `gradgradcheck` (float64 central differences).

NOTE [Gradcheck]
`gradcheck` compares two Jacobians per (differentiable output, input requiring grad) pair:
- *numerical*: central differences ``(f(x + eps e_k) - f(x - eps e_k)) / 2 eps``, perturbing each
  input element in place (as PyTorch does, so a function that closes over its inputs sees the
  perturbation too), then restoring it;
- *analytical*: one ``autograd.grad`` call per output element with a one-hot cotangent, twice, to
  also check that backward is deterministic ("reentrant").
``fast_mode=True`` compares the projections ``v^T J u`` for random unit vectors ``u``, ``v``
instead (one directional difference per input, one vector-Jacobian product per output) and, on a
mismatch, recomputes both Jacobians in slow mode for the error message. `gradgradcheck` runs
`gradcheck` on the function ``(inputs, v) -> autograd.grad(f(inputs), inputs, v,
create_graph=True)``. Arrays are handled with the tensors' array namespace (design §1 backends).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._backend import namespace_of, to_numpy
from hookgrad._tensor import Tensor
from hookgrad.autograd._api import grad as _grad
from hookgrad.autograd._gradcheck_legacy import (  # noqa: F401 - PyTorch's module exports them
    get_analytical_jacobian,
    get_numerical_jacobian,
    get_numerical_jacobian_wrt_specific_input,
    is_tensor_like,
)
from hookgrad.autograd._gradcheck_msgs import (  # noqa: F401 - PyTorch's module exports them
    FAILED_BATCHED_GRAD_MSG,
    FAILED_BATCHED_GRAD_MSG_FWD_AD,
    FAILED_NONDET_MSG,
    FAST_FAIL_SLOW_OK_MSG,
)
from hookgrad.autograd._node import Node

__all__ = [
    "gradcheck", "gradgradcheck", "GradcheckError", "get_numerical_jacobian",
    "get_analytical_jacobian"
]


class GradcheckError(RuntimeError):
    """Raised by `gradcheck` / `gradgradcheck` when a check fails.

    Mirrors: ``torch.autograd.gradcheck.GradcheckError``.
    """


_FAST_NOTE = (
    "\nThe above quantities relating the numerical and analytical jacobians are computed in fast "
    "mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background about fast "
    "mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
)
_UNDEFINED_NOTES = (
    'Please look at "Notes about undefined output gradients" in '
    '"tools/autograd/derivatives.yaml"'
)


# ---------------------------------------------------------------------------------- helpers
def _as_tuple(x: Any) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _diff_inputs(inputs: tuple) -> list[Tensor]:
    return [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]


def _differentiable_outputs(out: Any) -> tuple:
    return tuple(o for o in _as_tuple(out) if isinstance(o, Tensor) and o.requires_grad)


def _f64(t: Tensor) -> np.ndarray:
    # A copy: an output may alias an input that the numerical Jacobian perturbs in place.
    return np.array(to_numpy(t._data), dtype=np.float64)


def _wrap(arr: np.ndarray, np_dtype: Any = np.float64) -> Tensor:
    """A Jacobian for messages, in the checked input's dtype (as PyTorch allocates it)."""
    return Tensor._make(np.array(arr, dtype=np_dtype, order="C"))


def _check_inputs(inputs: tuple) -> None:
    any_grad = False
    for idx, inp in enumerate(inputs):
        if isinstance(inp, Tensor) and inp.requires_grad:
            if inp._data.dtype != np.float64:
                warnings.warn(
                    f"Input #{idx} requires gradient and is not a double precision floating "
                    "point or complex. This check will likely fail if all the inputs are not of "
                    "double precision floating point or complex. ", UserWarning, stacklevel=4)
            arr = inp._data
            # (an empty array's strides are arbitrary in NumPy: nothing can overlap)
            if arr.size and any(st == 0 and sz > 1 for st, sz in zip(arr.strides, arr.shape)):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only supports "
                    "inputs that are non-overlapping to be able to compute the numerical "
                    "gradients correctly. You should call .contiguous on the input before "
                    "passing it to gradcheck."
                )
            any_grad = True
    if not any_grad:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of "
            "them have requires_grad=True."
        )


def _eval(func: Callable[..., Any], inputs: tuple, out_idx: list[int]) -> list[np.ndarray]:
    """`func`'s selected outputs as float64 arrays (outputs that are not tensors give zeros)."""
    outs = _as_tuple(func(*inputs))
    return [_f64(outs[i]) if isinstance(outs[i], Tensor) else np.zeros(()) for i in out_idx]


def _output_positions(func_out: Any) -> list[int]:
    outs = _as_tuple(func_out)
    return [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]


# ---------------------------------------------------------------------------------- numerical
def _numerical_jacobians(func: Callable[..., Any], inputs: tuple, out_idx: list[int],
                         out_sizes: list[int], eps: float) -> list[list[np.ndarray]]:
    """``jac[i][j]``: (numel of input j, numel of output i), by central differences."""
    diff = _diff_inputs(inputs)
    jac = [[np.zeros((x._data.size, n)) for x in diff] for n in out_sizes]
    for j, x in enumerate(diff):
        arr = x._data  # perturbed in place, whatever its strides (C order = flat index k)
        for k, pos in enumerate(np.ndindex(*arr.shape)):
            orig = arr[pos].item()
            arr[pos] = orig - eps
            before = _eval(func, inputs, out_idx)
            arr[pos] = orig + eps
            after = _eval(func, inputs, out_idx)
            arr[pos] = orig
            for i in range(len(out_idx)):
                jac[i][j][k] = ((after[i] - before[i]) / (2 * eps)).reshape(-1)
    return jac


# ---------------------------------------------------------------------------------- analytical
def _vjp(output: Tensor, diff: list[Tensor], cotangent: Tensor) -> tuple:
    return _grad(output, diff, cotangent, retain_graph=True, allow_unused=True)


def _analytical_rows(output: Tensor, diff: list[Tensor]) -> tuple[list[np.ndarray], bool, bool]:
    """Jacobian of one output w.r.t. each input (columns = output elements); dtype/size flags."""
    xp = namespace_of(output._data)
    n = output._data.size
    jac = [np.zeros((x._data.size, n)) for x in diff]
    types_ok = sizes_ok = True
    for k in range(n):
        onehot = xp.zeros(n, dtype=output._data.dtype)
        onehot[k] = 1
        grads = _vjp(output, diff, Tensor._make(onehot.reshape(output._data.shape)))
        for j, (g, x) in enumerate(zip(grads, diff)):
            if g is None:
                continue
            types_ok &= g._data.dtype == x._data.dtype
            if g._data.size != x._data.size:
                sizes_ok = False
                continue
            jac[j][:, k] = _f64(g).reshape(-1)
    return jac, types_ok, sizes_ok


def _analytical_jacobians(output: Tensor, diff: list[Tensor], nondet_tol: float | None,
                          check_grad_dtypes: bool) -> list[np.ndarray]:
    """Jacobians of `output`; computed twice unless `nondet_tol` is None (reentrancy check)."""
    jac1, types_ok, sizes_ok = _analytical_rows(output, diff)
    jac2 = _analytical_rows(output, diff)[0] if nondet_tol is not None else jac1
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    for a, b in zip(jac1, jac2):
        if a is not b and a.size and not np.allclose(a, b, rtol=0, atol=nondet_tol):
            raise GradcheckError(
                "Backward is not reentrant, i.e., running backward with same input and "
                "grad_output multiple times gives different values, although analytical "
                "gradient matches numerical gradient.The tolerance for nondeterminism was "
                f"{nondet_tol}."
            )
    return jac1


def _notallclose_msg(analytical: np.ndarray, numerical: np.ndarray, i: int, j: int,
                     np_dtype: Any = np.float64) -> str:
    return (
        f"Jacobian mismatch for output {i:d} with respect to input {j:d},\n"
        f"numerical:{_wrap(numerical, np_dtype)!r}\nanalytical:{_wrap(analytical, np_dtype)!r}\n"
    )


def _allclose(a: np.ndarray, n: np.ndarray, rtol: float, atol: float) -> bool:
    return bool(np.allclose(a, n, rtol=rtol, atol=atol))


# ---------------------------------------------------------------------------------- slow mode
def _slow_jacobians(func: Callable[..., Any], inputs: tuple, func_out: Any, eps: float,
                    nondet_tol: float | None, check_grad_dtypes: bool) -> tuple[list, list]:
    outputs = _differentiable_outputs(func_out)
    diff = _diff_inputs(inputs)
    out_idx = _output_positions(func_out)
    numerical = _numerical_jacobians(func, inputs, out_idx, [o._data.size for o in outputs], eps)
    analytical = [_analytical_jacobians(o, diff, nondet_tol, check_grad_dtypes) for o in outputs]
    return numerical, analytical


def _slow_gradcheck(func: Callable[..., Any], inputs: tuple, func_out: Any, *, eps: float,
                    atol: float, rtol: float, nondet_tol: float,
                    check_grad_dtypes: bool) -> None:
    numerical, analytical = _slow_jacobians(func, inputs, func_out, eps, nondet_tol,
                                            check_grad_dtypes)
    dtypes = [x._data.dtype for x in _diff_inputs(inputs)]
    for i, (nums, anas) in enumerate(zip(numerical, analytical)):
        for j, (n, a) in enumerate(zip(nums, anas)):
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_notallclose_msg(a, n, i, j, dtypes[j]))


# ---------------------------------------------------------------------------------- fast mode
def _unit_vector(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    v = rng.random(shape)
    norm = np.linalg.norm(v)
    return v / norm if norm > 0 else v


def _fast_gradcheck(func: Callable[..., Any], inputs: tuple, func_out: Any, *, eps: float,
                    atol: float, rtol: float, nondet_tol: float,
                    check_grad_dtypes: bool) -> None:
    outputs = _differentiable_outputs(func_out)
    out_idx = _output_positions(func_out)
    diff = _diff_inputs(inputs)
    rng = np.random.default_rng(0)
    all_u = [_unit_vector(rng, x._data.shape) for x in diff]
    all_v = [_unit_vector(rng, o._data.shape) for o in outputs]
    # numerical[i][j] = v_i . (J_ij u_j), one directional central difference per input
    numerical = np.zeros((len(outputs), len(diff)))
    for j, (x, u) in enumerate(zip(diff, all_u)):
        orig = x._data.copy()
        x._data[...] = orig - eps * u
        before = _eval(func, inputs, out_idx)
        x._data[...] = orig + eps * u
        after = _eval(func, inputs, out_idx)
        x._data[...] = orig
        for i, v in enumerate(all_v):
            numerical[i, j] = np.sum(v * (after[i] - before[i]) / (2 * eps))
    analytical = np.zeros_like(numerical)
    for i, (o, v) in enumerate(zip(outputs, all_v)):
        cot = Tensor._make(np.asarray(v, dtype=o._data.dtype))
        grads1 = _vjp(o, diff, cot)
        grads2 = _vjp(o, diff, cot)
        for j, (g1, g2, u) in enumerate(zip(grads1, grads2, all_u)):
            if g1 is None:
                continue
            if g1._data.shape != u.shape:
                raise GradcheckError("Analytical gradient has incorrect size")
            if check_grad_dtypes and g1._data.dtype != diff[j]._data.dtype:
                raise GradcheckError("Gradient has dtype mismatch")
            if not np.allclose(_f64(g1), _f64(g2), rtol=0, atol=nondet_tol):
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with same input and "
                    "grad_output multiple times gives different values, although analytical "
                    "gradient matches numerical gradient.The tolerance for nondeterminism was "
                    f"{nondet_tol}."
                )
            analytical[i, j] = np.sum(_f64(g1) * u)
    for i in range(len(outputs)):
        for j in range(len(diff)):
            # atol is scaled by v^T M u (M all ones), as PyTorch does in fast mode.
            tol = atol * float(all_u[j].sum()) * float(all_v[i].sum())
            if not _allclose(analytical[i, j], numerical[i, j], rtol, tol):
                raise GradcheckError(_fast_msg(func, inputs, func_out, i, j, eps,
                                               numerical[i, j], analytical[i, j]))


def _fast_msg(func: Callable[..., Any], inputs: tuple, func_out: Any, i: int, j: int, eps: float,
              num: float, ana: float) -> str:
    np_dtype = _diff_inputs(inputs)[j]._data.dtype
    head = _notallclose_msg(np.asarray(ana), np.asarray(num), i, j, np_dtype)
    numerical, analytical = _slow_jacobians(func, inputs, func_out, eps, None, False)
    n, a = numerical[i][j], analytical[i][j]
    diff = float(np.max(np.abs(a - n))) if n.size else 0.0
    return (
        head + _FAST_NOTE
        + f"Numerical:\n {_wrap(n, np_dtype)!r}\nAnalytical:\n{_wrap(a, np_dtype)!r}\n\n"
        f"The max per-element difference (slow mode) is: {diff}.\n"
    )


# ---------------------------------------------------------------------------------- extras
class UndefinedGradBackward(Node):
    """Turns any incoming gradient into "undefined" (PyTorch's ``UndefinedGradBackward``)."""

    __slots__ = ()

    def apply(self, grads: tuple, needed: tuple | None = None) -> tuple:  # type: ignore[override]
        return (None,) * len(self._next_edges)


def _warn_bc_breaking() -> None:
    # PyTorch warns before failing the undefined-gradient check (it was added later and is on
    # by default, so existing callers are told how to opt out).
    warnings.warn(
        "Backwards compatibility: New undefined gradient support checking feature is enabled by "
        "default, but it may break existing callers of this function. If this is true for you, "
        'you can call this function with "check_undefined_grad=False" to disable the feature',
        UserWarning, stacklevel=4)


def _undefined_grad(o: Tensor) -> Tensor:
    from hookgrad.autograd._edges import gradient_edge

    node = UndefinedGradBackward((gradient_edge(o),))
    out = Tensor._make(o._data)
    out._requires_grad = True
    out._grad_fn = node
    return out


def _check_undefined_grad(func: Callable[..., Any], inputs: tuple) -> None:
    """Backward must cope with undefined output gradients (all of them, then one at a time)."""
    diff = _diff_inputs(inputs)
    outs = _differentiable_outputs(func(*inputs))
    cases = [[_undefined_grad(o) for o in outs]]
    if len(outs) > 1:
        for k in range(len(outs)):
            fresh = _differentiable_outputs(func(*inputs))
            cases.append([_undefined_grad(o) if i == k else o for i, o in enumerate(fresh)])
    for case in cases:
        zeros = [Tensor._make(namespace_of(o._data).zeros_like(o._data)) for o in case]
        try:
            grads = _grad(case, diff, zeros, allow_unused=True)
        except RuntimeError as e:
            _warn_bc_breaking()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. " + _UNDEFINED_NOTES
            ) from e
        for g in grads:
            if g is not None and np.any(_f64(g) != 0):
                _warn_bc_breaking()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are "
                    "undefined or zero. " + _UNDEFINED_NOTES
                )


def _check_no_differentiable_outputs(func: Callable[..., Any], inputs: tuple, func_out: Any,
                                     eps: float) -> None:
    outs = _as_tuple(func_out)
    idx = [i for i, o in enumerate(outs) if isinstance(o, Tensor)]
    sizes = [outs[i]._data.size for i in idx]
    for per_output in _numerical_jacobians(func, inputs, idx, sizes, eps):
        for jac in per_output:
            if np.any(jac != 0):
                raise GradcheckError("Numerical gradient for function expected to be zero")


# ---------------------------------------------------------------------------------- public API
def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """Check analytical gradients of `func` at `inputs` against finite differences.

    Args:
        func: takes the tensors (and other values) of `inputs`, returns a Tensor or a tuple.
        inputs: a Tensor or a tuple; tensors with ``requires_grad=True`` are checked. Use
            float64 tensors: in lower precision the finite differences are meaningless.
        eps: perturbation size. atol, rtol: ``|analytical - numerical| <= atol + rtol*|num|``.
        raise_exception: raise `GradcheckError` on failure (else return False).
        nondet_tol: tolerance between two identical backward passes.
        check_undefined_grad: also check backward with undefined (None) output gradients.
        check_grad_dtypes: require gradients to have their input's dtype.
        fast_mode: compare random projections ``v^T J u`` (see NOTE [Gradcheck]).
        check_batched_grad, check_batched_forward_grad, check_forward_ad, masked: accepted for
            signature compatibility; batched and forward-mode checks are not performed.
        check_backward_ad: False skips the backward check entirely (returns True).

    Returns:
        True when every check passes (False on failure with ``raise_exception=False``).

    Raises:
        GradcheckError: a Jacobian mismatch or another failed check.
        ValueError: no input requires grad.

    Example:
        >>> import hookgrad as torch
        >>> x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
        >>> torch.autograd.gradcheck(lambda t: (t * t).exp(), (x,))
        True

    Mirrors: ``torch.autograd.gradcheck``.
    """
    tupled = _as_tuple(inputs)
    try:
        _check_inputs(tupled)
        if not check_backward_ad:
            return True
        func_out = func(*tupled)
        if not _differentiable_outputs(func_out):
            _check_no_differentiable_outputs(func, tupled, func_out, eps)
            return True
        check = _fast_gradcheck if fast_mode else _slow_gradcheck
        check(func, tupled, func_out, eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol,
              check_grad_dtypes=check_grad_dtypes)
        if check_undefined_grad:
            _check_undefined_grad(func, tupled)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second derivatives: `gradcheck` of the vector-Jacobian product of `func`.

    Args:
        func, inputs, eps, atol, rtol, raise_exception, nondet_tol, check_undefined_grad,
            check_grad_dtypes, fast_mode: as in `gradcheck`.
        grad_outputs: cotangents for `func`'s differentiable outputs; random float64 values in
            ``[-1, 1)`` (fixed seed) requiring grad when omitted.
        gen_non_contig_grad_outputs, check_batched_grad, check_fwd_over_rev, masked: accepted
            for signature compatibility only.
        check_rev_over_rev: False skips the check (returns True).

    Returns:
        True when the check passes (False on failure with ``raise_exception=False``).

    Raises:
        GradcheckError: as `gradcheck`.

    Example:
        >>> import hookgrad as torch
        >>> x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
        >>> torch.autograd.gradgradcheck(lambda t: (t * t * t).sum(), (x,))
        True

    Mirrors: ``torch.autograd.gradgradcheck``.
    """
    tupled = _as_tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        outs = _differentiable_outputs(func(*tupled))
        grads: tuple = tuple(_random_cotangent(rng, o) for o in outs)
    else:
        grads = _as_tuple(grad_outputs)
    n = len(grads)
    diff_idx = [i for i, x in enumerate(tupled) if isinstance(x, Tensor) and x.requires_grad]

    def new_func(*args: Any) -> tuple:
        ins = args[:-n] if n else args
        outputs = _differentiable_outputs(func(*ins))
        diff = [ins[i] for i in diff_idx]
        got = _grad(outputs, diff, args[len(args) - n:], create_graph=True, allow_unused=True)
        return tuple(g for g in got if g is not None)

    return gradcheck(new_func, tupled + grads, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode,
                     check_backward_ad=check_rev_over_rev)


def _random_cotangent(rng: np.random.Generator, o: Tensor) -> Tensor:
    dtype = o._data.dtype if o._data.dtype.kind in "fcV" else np.float64
    values = rng.uniform(-1.0, 1.0, size=o._data.shape).astype(dtype)
    xp = namespace_of(o._data)
    return Tensor._make(xp.asarray(values), True)

# PyTorch's ``__all__`` also lists these
__all__ += ["get_numerical_jacobian_wrt_specific_input"]
