"""The inputs of a trace: one placeholder per parameter of the traced function.

``concrete_args`` specialise parameters: the value is passed instead of a Proxy, the
placeholder stays (so the signature is unchanged) and the graph asserts at run time that the
caller passes the same value.
"""

from __future__ import annotations

import inspect
import operator
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hookgrad._tensor import Tensor
from hookgrad.fx._wrap import PHBase, _assert, _assert_is_none

if TYPE_CHECKING:
    from hookgrad.fx._symbolic_trace import Tracer
    from hookgrad.nn import Module

__all__ = ["bind_inputs", "collect_tensor_attrs", "type_hints"]

_SCALARS = (bool, int, float, complex, str)


def collect_tensor_attrs(root: Module) -> dict[int, str]:
    """``id(tensor) -> dotted path`` for tensors stored as plain attributes in the hierarchy."""
    out: dict[int, str] = {}

    def walk(m: Module, prefix: list[str]) -> None:
        for k, v in m.__dict__.items():
            if isinstance(v, Tensor):
                out[id(v)] = ".".join([*prefix, k])
        for k, child in m.named_children():
            walk(child, [*prefix, k])

    walk(root, [])
    return out


def type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """`fn`'s annotations, evaluated (modules using ``from __future__ import annotations``
    store strings); an annotation that cannot be evaluated is left out."""
    try:
        return typing.get_type_hints(fn)
    except Exception:  # noqa: BLE001 - names imported only under TYPE_CHECKING, etc.
        return {k: v for k, v in getattr(fn, "__annotations__", {}).items()
                if not isinstance(v, str)}


def _specialise(tracer: Tracer, name: str, value: Any, default: tuple) -> Any:
    out = tracer.create_proxy("placeholder", f"{name}_1", default, {})
    if isinstance(value, PHBase):
        return out
    if isinstance(value, _SCALARS):
        eq = tracer.create_proxy("call_function", operator.eq, (out, value), {})
        msg = f"{name} has been specialized to have value {value} but got another value"
        tracer.create_proxy("call_function", _assert, (eq, msg), {})
    elif value is None:
        tracer.create_proxy("call_function", _assert_is_none, (out, f"{name} has been "
                            "specialized to have value None but got another value"), {})
    return value


def _placeholder(tracer: Tracer, name: str, sig: inspect.Signature, concrete: dict,
                 annotations: dict) -> Any:
    bare = name.lstrip("*")
    param = sig.parameters.get(bare)
    has_default = param is not None and param.default is not inspect.Parameter.empty
    default = (param.default,) if has_default and not name.startswith("*") else ()
    if bare in concrete:
        return _specialise(tracer, bare, concrete[bare], default)
    return tracer.create_proxy("placeholder", name, default, {},
                               type_expr=annotations.get(bare))


def _flatten_varargs(fn: Callable[..., Any], nargs: int) -> Callable[..., Any]:
    """`fn` with ``*args``/``**kwargs`` turned into plain parameters (bound to Proxies)."""
    co = fn.__code__
    flags = co.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)
    code = co.replace(co_flags=flags, co_argcount=nargs, co_kwonlyargcount=0)
    return types.FunctionType(code, fn.__globals__, fn.__name__, None, fn.__closure__)


def bind_inputs(tracer: Tracer, root_fn: Callable[..., Any], is_module: bool,
                concrete_args: dict | tuple | None) -> tuple[Callable[..., Any], list]:
    """The function to run and its arguments: the root module, then one Proxy per parameter.

    Mirrors: ``torch.fx.Tracer.create_args_for_root``.
    """
    fn = inspect.unwrap(root_fn)
    co = fn.__code__
    total = co.co_argcount + co.co_kwonlyargcount
    names = list(co.co_varnames)
    skip = 1 if is_module else 0
    if is_module and total == 0:
        raise RuntimeError("``self`` argument cannot be part of *args expansion!")
    args: list[Any] = [tracer.root] if is_module else []
    sig = inspect.signature(fn)
    arg_names = names[skip:total]
    if isinstance(concrete_args, tuple):
        if len(concrete_args) != len(arg_names):
            raise RuntimeError(f"Tracing expected {len(arg_names)} arguments but got "
                               f"{len(concrete_args)} concrete arguments")
        concrete_args = dict(zip(arg_names, concrete_args, strict=True))
    concrete = dict(concrete_args or {})
    annotations = type_hints(fn)
    args.extend(_placeholder(tracer, n, sig, concrete, annotations) for n in arg_names)
    extra = total
    if co.co_flags & inspect.CO_VARARGS:
        args.append(_placeholder(tracer, "*" + names[extra], sig, concrete, annotations))
        extra += 1
    if co.co_flags & inspect.CO_VARKEYWORDS:
        args.append(_placeholder(tracer, "**" + names[extra], sig, concrete, annotations))
    if co.co_kwonlyargcount or co.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return _flatten_varargs(fn, len(args)), args
    return root_fn, args  # a decorated forward runs its decorator; only the signature is unwrapped
