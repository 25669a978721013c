"""Higher-level differentiation API: vjp, jvp, jacobian, hessian, hvp, vhp.

Mirrors: ``torch.autograd.functional``. Argument handling (a Tensor or a tuple of Tensors;
results un-tupled when the caller passed a single Tensor), ``create_graph`` and ``strict``
behave as in PyTorch. ``jvp``/``hvp`` use PyTorch's double-backward trick so they give the same
results and errors; ``jacobian(strategy="forward-mode")`` uses forward AD.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad._functional.shape import stack
from hookgrad._tensor import Tensor
from hookgrad.autograd import forward_ad as fwad
from hookgrad.autograd.forward_ad import constant_zeros_like, one_hot_like
from hookgrad.autograd._api import grad as _grad
from hookgrad.autograd.grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(x: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple]:
    is_tuple = isinstance(x, tuple)
    xs = x if is_tuple else (x,)
    for i, el in enumerate(xs):
        if not isinstance(el, Tensor):
            if is_tuple:
                raise TypeError(
                    f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                    f"Tensors but the value at index {i} has type {type(el)}."
                )
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                f"but the given {arg_name} has type {type(el)}."
            )
    return is_tuple, xs


def _untuple(is_tuple: bool, xs: Any) -> Any:
    return xs if is_tuple else xs[0]


def _pre(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    out = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            out.append(inp.view_as(inp))  # type: ignore[attr-defined]
        else:
            out.append(inp.detach().requires_grad_(need_graph))
    return tuple(out)


def _post(xs: Any, create_graph: bool) -> Any:
    if isinstance(xs, Tensor):
        return xs if create_graph else xs.detach()
    if isinstance(xs, tuple):
        return tuple(_post(x, create_graph) for x in xs)
    return xs


def _autograd_grad(outputs: tuple, inputs: tuple, grad_outputs: tuple | None = None,
                   create_graph: bool = False, retain_graph: bool | None = None) -> tuple:
    """PyTorch's helper: skip outputs that do not require grad; None where unused."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad([o for o, _ in pairs], inputs, [g for _, g in pairs], allow_unused=True,
                 create_graph=create_graph, retain_graph=retain_graph)


def _fill(grads: tuple, refs: tuple, strict: bool, create_graph: bool, stage: str) -> tuple:
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_strict_message(stage, i))
            g = constant_zeros_like(ref)
        out.append(g)
    return tuple(out)


def _strict_message(stage: str, i: int) -> str:
    if stage == "back":
        return (f"The output of the user-provided function is independent of input {i}. This "
                "is not allowed in strict mode.")
    if stage == "double_back":
        return (f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode.")
    return (f"The jacobian of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.")


def _check_outputs(outputs: Any, fn_name: str) -> tuple[bool, tuple]:
    if not isinstance(outputs, (Tensor, tuple)) or (
        isinstance(outputs, tuple) and not all(isinstance(o, Tensor) for o in outputs)
    ):
        raise TypeError(
            f"The outputs of the user-provided function given to {fn_name} must be either a "
            "Tensor or a tuple of Tensors but the given outputs of the user-provided function "
            f"has type {type(outputs)}."
        )
    return _as_tuple(outputs, "outputs of the user-provided function", fn_name)


def _check_requires_grad(outputs: tuple, strict: bool) -> None:
    if not strict:
        return
    for i, o in enumerate(outputs):
        if not o.requires_grad:
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when running "
                "in strict mode."
            )


def _validate_v(v: tuple, other: tuple, is_other_tuple: bool) -> None:
    if len(v) != len(other):
        raise RuntimeError(
            f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
        )
    for i, (el_v, el_o) in enumerate(zip(v, other)):
        if el_v.shape != el_o.shape:
            prefix = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(
                f"{prefix}v has invalid size: should be {el_o.shape} but got {el_v.shape}."
            )


def _prepare_v(v: Any, like: tuple, is_like_tuple: bool, fn_name: str,
               create_graph: bool) -> tuple | None:
    """The vector `v` as a tuple of detached tensors shaped like `like` (the outputs for
    ``vjp``, the inputs otherwise); ``None`` only if `like` is one single-element tensor."""
    if v is not None:
        _, vs = _as_tuple(v, "v", fn_name)
        vs = _pre(vs, create_graph, False)
        _validate_v(vs, like, is_like_tuple)
        return vs
    if len(like) != 1 or like[0].numel() != 1:
        what = ("the user-provided function returns" if fn_name == "vjp"
                else "the input to the user-provided function is")
        raise RuntimeError(
            f"The vector v can only be None if {what} a single Tensor with a single element."
        )
    return None


def _check_single_output(out: Any, fn_name: str, strict: bool) -> tuple:
    """`out` as a 1-tuple, checked to be a single one-element Tensor (hessian, hvp, vhp)."""
    is_out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outs, strict)
    if is_out_tuple or not isinstance(out, Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if out.numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a single "
            "element"
        )
    return outs


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), vᵀ J)``. Mirrors: ``torch.autograd.functional.vjp``."""
    with enable_grad():
        is_in_tuple, ins = _as_tuple(inputs, "inputs", "vjp")
        ins = _pre(ins, create_graph, True)
        is_out_tuple, outs = _check_outputs(func(*ins), "vjp")
        _check_requires_grad(outs, strict)
        vs = _prepare_v(v, outs, is_out_tuple, "vjp", create_graph)
        grads = _autograd_grad(outs, ins, vs, create_graph=create_graph)
        res = _fill(grads, ins, strict, create_graph, "back")
    return _untuple(is_out_tuple, _post(outs, create_graph)), _untuple(
        is_in_tuple, _post(res, create_graph))


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), J v)`` by the double-backward trick. Mirrors: ``functional.jvp``."""
    with enable_grad():
        is_in_tuple, ins = _as_tuple(inputs, "inputs", "jvp")
        ins = _pre(ins, create_graph, True)
        vs = _prepare_v(v, ins, is_in_tuple, "jvp", create_graph)
        is_out_tuple, outs = _check_outputs(func(*ins), "jvp")
        _check_requires_grad(outs, strict)
        grad_outs = tuple(constant_zeros_like(o).requires_grad_(True) for o in outs)
        grad_ins = _autograd_grad(outs, ins, grad_outs, create_graph=True)
        _fill(grad_ins, ins, strict, create_graph, "back")
        if create_graph:
            res = _autograd_grad(grad_ins, grad_outs, vs, create_graph=True)
        else:
            res = _autograd_grad(grad_ins, grad_outs, vs, create_graph=False)
        res = _fill(res, outs, strict, create_graph, "back_trick")
    return _untuple(is_out_tuple, _post(outs, create_graph)), _untuple(
        is_out_tuple, _post(res, create_graph))


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
             strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """The Jacobian of `func` at `inputs`. Mirrors: ``torch.autograd.functional.jacobian``.

    ``vectorize=True`` gives the same result as the loop (hookgrad has no vmap).
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.'
            )
        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                "only implemented for `vectorize=True`."
            )
        return _jacobian_forward(func, inputs, strict)
    with enable_grad():
        is_in_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
        ins = _pre(ins, create_graph, True)
        is_out_tuple, outs = _check_outputs(func(*ins), "jacobian")
        _check_requires_grad(outs, strict)
        jac: list = []
        for out in outs:
            rows: list[list] = [[] for _ in ins]
            for j in range(out.numel()):
                # A one-hot cotangent selects row j without needing indexing ops.
                onehot = one_hot_like(out, j)
                g = _autograd_grad((out,), ins, (onehot,), retain_graph=True,
                                   create_graph=create_graph)
                for k, (gk, inp) in enumerate(zip(g, ins)):
                    if gk is None:
                        if strict:
                            raise RuntimeError(_strict_message("jac", k))
                        gk = constant_zeros_like(inp)
                    rows[k].append(gk)
            jac.append(tuple(_stack_rows(r, out, inp) for r, inp in zip(rows, ins)))
        res = _post(tuple(jac), create_graph)
    return _shape_result(res, is_in_tuple, is_out_tuple)


def _stack_rows(rows: list, out: Tensor, inp: Tensor) -> Tensor:
    from hookgrad._functional.creation import zeros

    if not rows:
        return zeros(*(tuple(out.shape) + tuple(inp.shape)), dtype=inp.dtype)
    stacked = rows[0].unsqueeze(0) if len(rows) == 1 else _cat0(rows)  # type: ignore[attr-defined]
    return stacked.reshape(*(tuple(out.shape) + tuple(inp.shape)))  # type: ignore[attr-defined]


def _cat0(rows: list) -> Tensor:
    return stack(rows, 0)


def _shape_result(res: tuple, is_in_tuple: bool, is_out_tuple: bool) -> Any:
    if not is_out_tuple:
        res = res[0]
        return res if is_in_tuple else res[0]
    return tuple(r if is_in_tuple else r[0] for r in res)


def _jacobian_forward(func: Callable[..., Any], inputs: Any, strict: bool) -> Any:
    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` "
            "are not supported together (yet). Please either set `strict=False` or "
            "`strategy=\"reverse-mode\"`."
        )
    is_in_tuple, ins = _as_tuple(inputs, "inputs", "jacobian")
    ins = tuple(i.detach() for i in ins)
    cols: list | None = None
    is_out_tuple = False
    for k, inp in enumerate(ins):
        for j in range(inp.numel()):
            basis = one_hot_like(inp, j)
            with fwad.dual_level():
                duals = tuple(fwad.make_dual(x, basis) if i == k else x for i, x in enumerate(ins))
                is_out_tuple, outs = _check_outputs(func(*duals), "jacobian")
                tans = [fwad.unpack_dual(o).tangent for o in outs]
                prim = [fwad.unpack_dual(o).primal for o in outs]
            if cols is None:
                cols = [[[] for _ in ins] for _ in outs]
            for o, (t, p) in enumerate(zip(tans, prim)):
                cols[o][k].append(t if t is not None else constant_zeros_like(p))
    res = []
    for o, per_in in enumerate(cols or []):
        res.append(tuple(_stack_cols(c, inp) for c, inp in zip(per_in, ins)))
    return _shape_result(tuple(res), is_in_tuple, is_out_tuple)


def _stack_cols(cols: list, inp: Tensor) -> Tensor:
    out_shape = tuple(cols[0].shape)
    stacked = stack([c.detach() for c in cols], -1)
    return stacked.reshape(*(out_shape + tuple(inp.shape)))


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False,
            strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function. Mirrors: ``torch.autograd.functional.hessian``."""
    is_in_tuple, ins = _as_tuple(inputs, "inputs", "hessian")

    def ensure_single(*inp: Tensor) -> Tensor:
        out = func(*inp)
        _check_single_output(out, "hessian", strict)
        return out.squeeze()  # type: ignore[attr-defined]

    def jac_func(*inp: Tensor) -> Any:
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        return jacobian(ensure_single, inp, create_graph=True, strict=strict)

    res = jacobian(jac_func, ins, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _shape_result(res, is_in_tuple, is_in_tuple)


def _second_order(name: str, func: Callable[..., Any], inputs: Any, v: Any,
                  create_graph: bool, strict: bool) -> tuple:
    with enable_grad():
        is_in_tuple, ins = _as_tuple(inputs, "inputs", name)
        ins = _pre(ins, create_graph, True)
        vs = _prepare_v(v, ins, is_in_tuple, name, create_graph)
        out = func(*ins)
        outs = _check_single_output(out, name, strict)
        jac = _autograd_grad(outs, ins, create_graph=True)
        _fill(jac, ins, strict, create_graph, "double_back")
        if name == "vhp":
            res = _autograd_grad(jac, ins, vs, create_graph=create_graph)
        else:
            grad_jac = tuple(constant_zeros_like(i).requires_grad_(True) for i in ins)
            double_back = _autograd_grad(jac, ins, grad_jac, create_graph=True)
            _fill(double_back, ins, strict, create_graph, "double_back")
            res = _autograd_grad(double_back, grad_jac, vs, create_graph=create_graph)
        res = _fill(res, ins, strict, create_graph, "double_back")
    return _post(out, create_graph), _untuple(is_in_tuple, _post(res, create_graph))


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), vᵀ H)``. Mirrors: ``torch.autograd.functional.vhp``."""
    return _second_order("vhp", func, inputs, v, create_graph, strict)


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple:
    """``(func(inputs), H v)``. Mirrors: ``torch.autograd.functional.hvp``."""
    return _second_order("hvp", func, inputs, v, create_graph, strict)
