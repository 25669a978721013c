"""Forward-mode AD with dual levels, built on the op table's JVP rules.

Mirrors: ``torch.autograd.forward_ad`` (``dual_level``, ``enter_dual_level``,
``exit_dual_level``, ``make_dual``, ``unpack_dual``, ``UnpackedDualTensor``).

NOTE [Forward AD]
`ForwardADRecorder` is a recorder that `bind` notifies after every primitive, like the grad
recorder. When an input carries a tangent at the current level it computes the output tangents
from the primitive's JVP decision:
- ``"linear"``: the op applied to the input tangents (zeros where an input has none);
- ``"elementwise"``: the VJP formula with the tangent in place of ``grad``;
- a mapping: the sum over inputs with tangents of ``jvp[input](tangent, <named values>)``.
Tangent formulas see *primal aliases* (same data and grad identity, no tangent), so computing a
tangent never recurses into second-order terms, and because they are ordinary hookgrad ops they
are recorded for backward when the primals require grad: forward-over-reverse for free.
Tangents are stored per level in ``tensor._fw_grads``. A view's tangent is the same view of its
base's tangent, so an in-place op on a view updates the base's tangent as PyTorch does.
Like PyTorch 2.13, only one level may be active ("Nested forward mode AD is not supported").
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from hookgrad._backend import namespace_of
from hookgrad._config import GLOBAL, add_recorder, remove_recorder
from hookgrad._dispatch import bind
from hookgrad._functional import creation as _creation
from hookgrad._ops._rule_ops import TENSOR_OPS
from hookgrad._ops.registry import Primitive
from hookgrad._tensor import STATE_HOOKS, Tensor
from hookgrad.autograd._saved import SavedTensor

__all__ = [
    "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual",
    "UnpackedDualTensor",
]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = """Mirrors: ``torch.autograd.forward_ad.UnpackedDualTensor``."""

_NO_LEVEL = (
    "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
    "enter_dual_level() first."
)
_BAD_LEVEL = (
    "Trying to access a forward AD level with an invalid index. This index was either not "
    "created or is already deleted."
)


def enter_dual_level() -> int:
    """Open a new forward AD level and return its index. Mirrors: ``enter_dual_level``."""
    if GLOBAL.dual_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    GLOBAL.dual_level = 0
    add_recorder(FORWARD_RECORDER)
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the innermost level; its tangents are dropped. Mirrors: ``exit_dual_level``."""
    if level is None:
        level = GLOBAL.dual_level
    if GLOBAL.dual_level < 0 or level != GLOBAL.dual_level:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    GLOBAL.dual_level = -1
    FORWARD_RECORDER.clear_level(level)
    remove_recorder(FORWARD_RECORDER)  # no per-op cost outside dual levels


class dual_level:
    """Context manager for one forward AD level. Mirrors: ``torch.autograd.forward_ad.dual_level``."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()


def _level(level: int | None) -> int:
    if level is None:
        level = GLOBAL.dual_level
        if level < 0:
            raise RuntimeError(_NO_LEVEL)
    elif level != GLOBAL.dual_level:
        raise RuntimeError(_BAD_LEVEL)
    return level


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of `tensor` carrying `tangent` at `level`. Mirrors: ``forward_ad.make_dual``."""
    lvl = _level(level)
    if tensor._data.shape != tangent._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )
    if tensor._data.dtype.kind not in "fc":
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    dual = tensor.view_as(tensor)  # type: ignore[attr-defined]
    if tangent._data.dtype != tensor._data.dtype:
        tangent = tangent.to(tensor.dtype)  # type: ignore[attr-defined]
    _set_tangent(dual, lvl, tangent)
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal view, tangent or None)``. Mirrors: ``forward_ad.unpack_dual``."""
    if level is None:
        level = GLOBAL.dual_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    tangent = get_tangent(tensor, level)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(primal_alias(tensor), tangent)


def constant_zeros_like(t: Tensor) -> Tensor:
    """A zero tensor shaped like `t` with no graph (an array, never a NumPy scalar)."""
    return Tensor._make(namespace_of(t._data).zeros_like(t._data))


def one_hot_like(t: Tensor, j: int) -> Tensor:
    """Zeros shaped like `t` with a 1 at flat position `j` (a Jacobian row/column selector)."""
    out = constant_zeros_like(t)
    out._data.reshape(-1)[j] = 1  # zeros_like is contiguous, so reshape is a view
    return out


# ---------------------------------------------------------------------------- tangent storage
def get_tangent(t: Tensor, level: int) -> Tensor | None:
    grads = t._fw_grads
    if grads is not None:
        tan = grads.get(level)
        if tan is not None:
            return tan
    base = t._base
    if base is not None and base._fw_grads and level in base._fw_grads:
        # A view made before its base got a tangent sees the same view of the base tangent.
        tan = _replay_view(base._fw_grads[level], t)
        _set_tangent(t, level, tan)
        return tan
    return None


def _set_tangent(t: Tensor, level: int, tangent: Tensor) -> None:
    if t._fw_grads is None:
        t._fw_grads = {}
    t._fw_grads[level] = tangent
    FORWARD_RECORDER.dual_tensors.append(t)


def _replay_view(base_tangent: Tensor, view: Tensor) -> Tensor:
    out = base_tangent
    for prim, params, idx in view._view_chain:
        res = bind(prim, (out,), params)
        out = res[idx] if isinstance(res, tuple) else res
    return out


def primal_alias(t: Tensor) -> Tensor:
    """Same data and gradient identity as `t`, without tangents (NOTE [Forward AD])."""
    a = t.__class__._make(t._data, t._requires_grad)
    if t.__class__ is not Tensor and getattr(t, "_saved_whole", False):  # a vmap BatchedTensor
        a._bt_value, a._bt_level = t._bt_value, t._bt_level  # type: ignore[attr-defined]
    a._grad_fn = t._grad_fn
    a._output_nr = t._output_nr
    a._version_counter = t._vc()
    if t._requires_grad and t._grad_fn is None:
        a._leaf_alias_of = t.__dict__.get("_leaf_alias_of", t)  # type: ignore[attr-defined]
    return a


def _share_with_saved_output(o: Tensor) -> None:
    """A node that saved `o` must unpack it *with* its tangent (forward-over-reverse)."""
    node = o._grad_fn
    saved = getattr(node, "_saved", None) if node is not None else None
    if not saved:
        return
    for entry in saved.values():
        for st in entry if isinstance(entry, tuple) else (entry,):
            if isinstance(st, SavedTensor) and st._is_output and st._output_nr == o._output_nr:
                st._fw_grads = o._fw_grads


# ---------------------------------------------------------------------------- the recorder
class ForwardADRecorder:
    """Computes output tangents inside `bind` (see NOTE [Forward AD])."""

    # Tangents flow through backward rules too (forward-over-reverse), so rules must run on
    # hookgrad ops while a level is open.
    sees_backward = True

    def __init__(self) -> None:
        self.dual_tensors: list = []
        # in-place calls between record_inplace and rebase, keyed by id(out): per call, so
        # threads and nested in-place ops never take each other's entries
        self._pending: dict = {}

    def clear_level(self, level: int) -> None:
        for t in self.dual_tensors:
            if t._fw_grads:
                t._fw_grads.pop(level, None)
        self.dual_tensors = []

    def _tangents(self, prim: Primitive, inputs: tuple) -> list | None:
        level = GLOBAL.dual_level
        if level < 0:
            return None
        tans = None
        for i, t in enumerate(inputs):
            if t._fw_grads is None and t._base is None:
                continue
            tan = get_tangent(t, level)
            if tan is not None:
                if tans is None:
                    tans = [None] * len(inputs)
                tans[i] = tan
        return tans

    def record(self, prim: Primitive, inputs: tuple, params: dict, outs: tuple,
               cast: Any = None) -> None:
        tans = self._tangents(prim, inputs)
        if tans is None or not any(o._data.dtype.kind in "fc" for o in outs):
            return  # integer/bool results (comparisons, argmax) carry no tangent in PyTorch
        out_tans = (JVP_INTERPRETER[0] or compute_jvp)(prim, inputs, params, outs, tans)
        for o, tan in zip(outs, out_tans):
            if tan is not None and o._data.dtype.kind in "fc":
                if tan._data.dtype.kind == "c" and o._data.dtype.kind != "c":
                    tan = tan.real  # (a complex tangent of a real output: its real part)
                if tan._data.dtype != o._data.dtype:
                    tan = tan.to(o.dtype)  # type: ignore[attr-defined]
                _set_tangent(o, GLOBAL.dual_level, tan)
                _share_with_saved_output(o)


    def record_inplace(self, prim: Primitive, inputs: tuple, params: dict, out: Tensor,
                       target: Tensor, cast: Any = None) -> None:
        tans = self._tangents(prim, inputs)
        if tans is not None:
            run = JVP_INTERPRETER[0] or compute_jvp
            self._pending[id(out)] = run(prim, inputs, params, (out,), tans)[0]

    def record_write(self, target: Tensor) -> None:
        return None

    def record_function(self, fn_cls: Any, inputs: tuple, outputs: tuple) -> None:
        return None  # `Function.apply` runs the Function's own jvp

    def rebase(self, target: Tensor, out: Tensor) -> None:
        tan = self._pending.pop(id(out), None)
        if tan is None:
            return
        level = GLOBAL.dual_level
        current = get_tangent(target, level)
        if current is not None:
            current.copy_(tan)  # type: ignore[attr-defined]
            return
        base = target._base
        if base is not None:
            zeros = _creation.zeros_like(base)  # batched like a vmap-batched base (no graph)
            _set_tangent(base, level, zeros)
            view_tan = _replay_view(zeros, target)
            view_tan.copy_(tan)  # type: ignore[attr-defined]
            _set_tangent(target, level, view_tan)
            return
        _set_tangent(target, level, tan.to(target.dtype))  # type: ignore[attr-defined]


# Set while a vmap level is open (hookgrad/_functorch/_rules.py): `compute_jvp`, falling back
# to one call per sample for JVP rules that read values (NOTE [vmap and rules]).
JVP_INTERPRETER: list = [None]


def compute_jvp(prim: Primitive, inputs: tuple, params: dict, outs: tuple,
                tans: list) -> tuple:
    """Output tangents of one primitive call from the input tangents `tans` (None = zero)."""
    primals = tuple(primal_alias(t) if tan is not None else t for t, tan in zip(inputs, tans))
    rule = prim.jvp
    if rule == "linear":
        args = []
        for i, (p, tan) in enumerate(zip(primals, tans)):
            if i in prim.diff_inputs:
                args.append(tan if tan is not None else constant_zeros_like(p))
            else:
                args.append(p)
        res = bind(prim, tuple(args), params)
        return res if isinstance(res, tuple) else (res,)
    values = _Values(prim, primals, params, outs)
    if rule == "elementwise":
        name = prim.inputs[0]
        kwargs = {a: values.get(a, tans[0]) for a in prim.rule_args[name]}
        return (prim.vjp[name](**kwargs),)
    if rule is None:
        raise RuntimeError(
            f"Trying to use forward AD with {prim.name} that does not support it because it has "
            "not been implemented yet."
        )
    total = None
    for i, tan in enumerate(tans):
        name = prim.inputs[i]
        if tan is None or name not in rule:
            continue
        kwargs = {a: values.get(a, None) for a in prim.rule_args["jvp:" + name]}
        part = rule[name](tan, **kwargs)
        total = part if total is None else total + part
    if prim.multi_output and not isinstance(total, tuple):
        return (total,) + (None,) * (len(outs) - 1)
    return total if isinstance(total, tuple) else (total,)


class _Values:
    """Named values for JVP rules (NOTE [Rule arguments] of the registry)."""

    def __init__(self, prim: Primitive, primals: tuple, params: dict, outs: tuple) -> None:
        self.prim, self.primals, self.params, self.outs = prim, primals, params, outs

    def get(self, name: str, grad: Any) -> Any:
        prim = self.prim
        if name == "grad":
            return grad
        if name == "grads":
            return (grad,) if not isinstance(grad, tuple) else grad
        if name == "ops":  # a tangent is a tensor: forward AD reuses rules on hookgrad ops
            return TENSOR_OPS
        if name == "result":
            return primal_alias(self.outs[0])
        if name == "results":
            return tuple(primal_alias(o) for o in self.outs)
        if name.startswith("result") and name[6:].isdigit():
            return primal_alias(self.outs[int(name[6:])])
        if name in prim.inputs:
            return self.primals[prim.inputs.index(name)]
        if name in self.params:
            return self.params[name]
        if name in prim.defaults:
            return prim.defaults[name]
        if name.endswith("_shape"):
            return self.primals[prim.inputs.index(name[:-6])]._data.shape
        if name.endswith("_dtype"):
            return self.primals[prim.inputs.index(name[:-6])].dtype
        raise KeyError(name)


FORWARD_RECORDER = ForwardADRecorder()
# Let layer-2 code (the tensor repr) see tangents of views too.
STATE_HOOKS.get_tangent = get_tangent  # type: ignore[method-assign]
