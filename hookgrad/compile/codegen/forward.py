"""Straight-line NumPy source for the forward of a captured graph.

Each primitive node becomes one call of the primitive's array implementation (the function
eager's `bind` calls, so values are eager's bit for bit), ``F.linear`` one matrix product plus
the bias added in place (as eager's ``addmm``). With fused groups (`fusion`), each group is one
call of its kernel, and the values inside a group that nothing outside it reads are not
materialised (``None`` in the returned environment).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._tensor import Tensor
from hookgrad.compile.codegen.hooks import is_hook_op, new_hooks
from hookgrad.compile.codegen.modhooks import is_setup, make_setup
from hookgrad.compile.codegen.nnkernels import fast_impl
from hookgrad.compile.core.graph import GraphModule, Node
from hookgrad.compile.trace.recorder import PrimCall, getitem
from hookgrad.nn import functional as _F

__all__ = ["numpy_source", "linear_np", "as_array"]

_ndarray = np.ndarray
_LINEAR = _F.linear


def as_array(value: Any) -> Any:
    """`value` as an ndarray (NumPy returns scalars for 0-d results; tensors hold arrays)."""
    return value if type(value) is _ndarray else np.asarray(value)


def _as_arrays(values: Any) -> tuple:
    return tuple(as_array(v) for v in values)


def linear_np(x: Any, w: Any, b: Any = None) -> Any:
    """``F.linear`` on arrays, as eager's ``addmm``: the product, then the bias in place. An
    input of more dims is flattened to rows first, as eager's linear (and ``matmul``'s fold)
    does, so the product is the same single matrix product."""
    if x.ndim > 2:
        lead = x.shape[:-1]
        return linear_np(x.reshape(-1, x.shape[-1]), w, b).reshape(*lead, w.shape[0])
    out = x @ w.T
    if b is not None:
        if type(out) is not _ndarray or not out.flags.writeable:
            return out + b
        out += b
    return out


def numpy_source(gm: GraphModule, joint: bool = False, groups: list | None = None,
                 requires: set | None = None) -> tuple[str, dict[str, Any]]:
    """The generated array-level source of `gm` and its namespace.

    `joint`: take and return arrays, plus a tuple of every node value (for the backward).
    `groups`: fused groups (`fusion.Group`), each run as one kernel call.
    `requires`: the names of the values that require grad (for module hook operators).
    """
    ns: dict[str, Any] = {"_arr": as_array, "_make": Tensor._make, "_linear": linear_np,
                          "_arrs": _as_arrays}
    nodes = gm.graph.nodes
    params = [n.name for n in nodes if n.op == "placeholder"]
    lines = [f"def forward({', '.join(params + ['_hooks=True'])}):"]
    if not joint:
        lines += [f"    {p} = {p}._data" for p in params]
    first = {id(g.nodes[0]): g for g in groups or ()}
    inside = {id(n) for g in groups or () for n in g.nodes}
    for node in nodes:
        if node.op == "get_attr":
            attr = getattr(gm, node.target)
            ns[f"_c_{node.name}"] = attr._data if isinstance(attr, Tensor) else attr
            lines.append(f"    {node.name} = _c_{node.name}")
        elif is_hook_op(node):  # NOTE [Hooks in the generated backward]
            ns["_new_hooks"] = new_hooks
            body, *free = [_name(a) for a in node.args[1:]]
            call = ", ".join([body, str(node.kwargs.get("handle_slot", -1)), *free])
            lines += [f"    {node.name} = {_name(node.args[0])}",
                      f"    _hk_{node.name} = _new_hooks({call}) if _hooks else None"]
        elif is_setup(node):  # NOTE [Module hooks in the generated backward]
            lines += _setup_lines(node, ns, requires or set())
        elif node.op == "call_function" and id(node) in first:
            lines.append(first[id(node)].forward_line(ns))
        elif node.op == "call_function" and id(node) not in inside:
            lines.append(f"    {node.name} = {_call(node, ns)}")
        elif node.op == "output":
            lines.append(_return_line(node, nodes, joint, first, inside))
    return "\n".join(lines) + "\n", ns


def _return_line(node: Node, nodes: list, joint: bool, first: dict, inside: set) -> str:
    if not joint:
        outs = "".join(f"_make(_arr({_name(v)})), " for v in node.args[0])
        return f"    return ({outs})"
    outs = "".join(f"_arr({_name(v)}), " for v in node.args[0])
    kept = {id(n) for g in first.values() for n in g.outputs}
    env = "".join(f"_hk_{n.name}, " if is_hook_op(n) or is_setup(n) else
                  f"{n.name}, " if id(n) not in inside or id(n) in kept else "None, "
                  for n in nodes if n.op != "output")
    return f"    return ({outs}), ({env})"


def _setup_lines(node: Node, ns: dict[str, Any], requires: set) -> list[str]:
    slot, kind, single = node.args[:3]
    tensors = [_name(a) for a in node.args[3:]]
    req = tuple(a.name in requires for a in node.args[3:])
    ns["_make_setup"] = make_setup
    value = tensors[0] if single else f"({''.join(t + ', ' for t in tensors)})"
    return [f"    {node.name} = {value}",
            f"    _hk_{node.name} = _make_setup({slot}, {kind!r}, {req!r}) if _hooks else "
            f"(None, {kind!r}, {req!r})"]


def _name(value: Any) -> str:
    return value.name if isinstance(value, Node) else repr(value)


def _call(node: Node, ns: dict[str, Any]) -> str:
    args = [_name(a) for a in node.args]
    if node.target is getitem:
        return f"{args[0]}[{args[1]}]"
    if node.target is _LINEAR:
        return f"_linear({', '.join(args)})"
    call: PrimCall = node.target
    fn = f"_impl_{len(ns)}"
    ns[fn] = fast_impl(call.prim)  # the impl, or its kernel (NOTE [Primitive kernels])
    if call.cast is not None:
        ns[f"{fn}_dt"] = call.cast.np
        args = [f"{a}.astype({fn}_dt, copy=False)" for a in args]
    kw = "".join(f", {k}={fn}_p[{k!r}]" for k in call.params)
    if call.params:
        ns[f"{fn}_p"] = call.params
        if not args:
            kw = kw[2:]
    if call.prim.num_outputs != 1:  # a tuple of arrays (``native_layer_norm``)
        return f"_arrs({fn}({', '.join(args)}{kw}))"
    return f"_arr({fn}({', '.join(args)}{kw}))"
