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
Like PyTorch 2.13, the public API opens one level at a time ("Nested forward mode AD is not
supported"); ``torch.func.jvp`` nests (``jvp`` of ``jvp``, ``jacfwd(jacfwd(f))``), so its
levels open through `nested_level` (NOTE [Nested forward levels]).

NOTE [Nested forward levels]
Levels are numbered from the outermost (0). A primitive whose inputs carry tangents at several
levels gets one tangent per level, outermost first. The rule for level L sees primal aliases
that keep the tangents of the levels below L and drop L and above: its ops are recorded at the
outer levels (the tangent at L gets its own outer tangents, a derivative of a derivative) and
never at the inner ones (for level L the inner perturbations do not exist, as functorch's
wrappers hide them). Outermost first, so that an inner rule reading `result` sees the outer
tangents of the output.
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


OPEN: list = []  # the open levels, outermost first (NOTE [Nested forward levels])


def enter_dual_level() -> int:
    """Open a new forward AD level and return its index. Mirrors: ``enter_dual_level``."""
    if OPEN:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    return _push()


def _push() -> int:
    level = len(OPEN)
    OPEN.append(level)
    GLOBAL.dual_level = level
    if level == 0:
        add_recorder(FORWARD_RECORDER)
    return level


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the innermost level; its tangents are dropped. Mirrors: ``exit_dual_level``."""
    if level is None:
        level = GLOBAL.dual_level
    if not OPEN or level != OPEN[-1]:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    OPEN.pop()
    GLOBAL.dual_level = OPEN[-1] if OPEN else -1
    FORWARD_RECORDER.clear_level(level)
    if not OPEN:
        remove_recorder(FORWARD_RECORDER)  # no per-op cost outside dual levels


class dual_level:
    """Context manager for one forward AD level. Mirrors: ``torch.autograd.forward_ad.dual_level``."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()


class nested_level:
    """A level that may open inside another (``torch.func.jvp``; NOTE [Nested forward
    levels]). The public `dual_level` keeps PyTorch's refusal of nesting."""

    def __enter__(self) -> int:
        return _push()

    def __exit__(self, *exc: Any) -> None:
        exit_dual_level()


def tangents_of(t: Tensor) -> dict:
    """``{level: tangent}`` of `t` at every open level it carries one at."""
    out = {}
    for level in OPEN:
        tan = get_tangent(t, level)
        if tan is not None:
            out[level] = tan
    return out


def _level(level: int | None) -> int:
    if level is None:
        level = GLOBAL.dual_level
        if level < 0:
            raise RuntimeError(_NO_LEVEL)
    elif level not in OPEN:
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
    if tensor._data.dtype.kind not in "fcV":
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
    return UnpackedDualTensor(primal_alias(tensor, level), tangent)


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


def primal_alias(t: Tensor, below: int | None = None) -> Tensor:
    """Same data and gradient identity as `t`, without tangents (NOTE [Forward AD]); with
    `below`, keeping those of the levels below it (NOTE [Nested forward levels])."""
    a = t.__class__._make(t._data, t._requires_grad)
    if t.__class__ is not Tensor and getattr(t, "_saved_whole", False):  # a vmap BatchedTensor
        a._bt_value, a._bt_level = t._bt_value, t._bt_level  # type: ignore[attr-defined]
    a._grad_fn = t._grad_fn
    a._output_nr = t._output_nr
    a._version_counter = t._vc()
    if t._requires_grad and t._grad_fn is None:
        a._leaf_alias_of = t.__dict__.get("_leaf_alias_of", t)  # type: ignore[attr-defined]
    if below:
        for level in OPEN[:below]:
            tan = get_tangent(t, level)
            if tan is not None:
                _set_tangent(a, level, tan)
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
        keep = []
        for t in self.dual_tensors:
            if t._fw_grads:
                t._fw_grads.pop(level, None)
                if t._fw_grads and OPEN:
                    keep.append(t)
        self.dual_tensors = keep

    def _tangents(self, prim: Primitive, inputs: tuple, level: int) -> list | None:
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
        for level in OPEN:  # outermost first (NOTE [Nested forward levels])
            tans = self._tangents(prim, inputs, level)
            if tans is None or not any(o._data.dtype.kind in "fcV" for o in outs):
                continue  # integer/bool results (comparisons, argmax) carry no tangent
            out_tans = (JVP_INTERPRETER[0] or compute_jvp)(prim, inputs, params, outs, tans,
                                                           level)
            for o, tan in zip(outs, out_tans):
                if tan is not None and o._data.dtype.kind in "fcV":
                    if tan._data.dtype.kind == "c" and o._data.dtype.kind != "c":
                        tan = tan.real  # (a complex tangent of a real output: its real part)
                    if tan._data.dtype != o._data.dtype:
                        tan = tan.to(o.dtype)  # type: ignore[attr-defined]
                    if not prim.view:
                        mark_fresh(tan)
                    _set_tangent(o, level, tan)
                    _share_with_saved_output(o)


    def record_inplace(self, prim: Primitive, inputs: tuple, params: dict, out: Tensor,
                       target: Tensor, cast: Any = None) -> None:
        pending = {}
        for level in OPEN:
            tans = self._tangents(prim, inputs, level)
            if tans is not None:
                run = JVP_INTERPRETER[0] or compute_jvp
                pending[level] = run(prim, inputs, params, (out,), tans, level)[0]
        if pending:
            self._pending[id(out)] = pending

    def record_write(self, target: Tensor) -> None:
        return None

    def record_function(self, fn_cls: Any, inputs: tuple, outputs: tuple) -> None:
        return None  # `Function.apply` runs the Function's own jvp

    def rebase(self, target: Tensor, out: Tensor) -> None:
        for level, tan in self._pending.pop(id(out), {}).items():
            self._rebase_level(target, level, tan)

    def _rebase_level(self, target: Tensor, level: int, tan: Tensor) -> None:
        current = get_tangent(target, level)
        if current is not None:
            current.copy_(tan)  # type: ignore[attr-defined]
            return
        base = target._base
        if base is not None:
            zeros = _creation.zeros_like(base)  # batched like a vmap-batched base (no graph)
            mark_fresh(zeros)
            _set_tangent(base, level, zeros)
            view_tan = _replay_view(zeros, target)
            view_tan.copy_(tan)  # type: ignore[attr-defined]
            _set_tangent(target, level, view_tan)
            return
        _set_tangent(target, level, tan.to(target.dtype))  # type: ignore[attr-defined]


def mark_fresh(t: Tensor) -> None:
    """`t` is a tangent forward AD made (not a view of one it was given): an in-place write
    of a value batched at more vmap levels may give it (every level) those batch dims, as
    PyTorch's tangents take the batch dims of what is written into them."""
    fresh: Any = t
    while fresh is not None:
        fresh.__dict__["_fresh_buffer"] = True
        fresh = getattr(fresh, "_bt_value", None)


# Set while a vmap level is open (hookgrad/_functorch/_rules.py): `compute_jvp`, falling back
# to one call per sample for JVP rules that read values (NOTE [vmap and rules]).
JVP_INTERPRETER: list = [None]


def compute_jvp(prim: Primitive, inputs: tuple, params: dict, outs: tuple,
                tans: list, level: int = 0) -> tuple:
    """Output tangents of one primitive call from the input tangents `tans` (None = zero) at
    `level`."""
    primals = tuple(primal_alias(t, level) if tan is not None or t._fw_grads else t
                    for t, tan in zip(inputs, tans))
    rule = prim.jvp
    if rule == "linear":
        args = []
        for i, (p, tan) in enumerate(zip(primals, tans)):
            if i in prim.diff_inputs:
                if tan is not None and prim.name == "view" and not tan.is_contiguous():
                    # PyTorch lays a tangent out like its primal; hookgrad's may differ, and
                    # `view` needs a compatible layout
                    tan = tan.contiguous()  # type: ignore[attr-defined]
                args.append(tan if tan is not None else constant_zeros_like(p))
            else:
                args.append(p)
        res = bind(prim, tuple(args), params)
        return res if isinstance(res, tuple) else (res,)
    values = _Values(prim, primals, params, outs, level)
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

    def __init__(self, prim: Primitive, primals: tuple, params: dict, outs: tuple,
                 level: int) -> None:
        self.prim, self.primals, self.params, self.outs = prim, primals, params, outs
        self.level = level

    def get(self, name: str, grad: Any) -> Any:
        prim = self.prim
        if name == "grad":
            return grad
        if name == "grads":
            return (grad,) if not isinstance(grad, tuple) else grad
        if name == "ops":  # a tangent is a tensor: forward AD reuses rules on hookgrad ops
            return TENSOR_OPS
        if name == "result":
            return primal_alias(self.outs[0], self.level)
        if name == "results":
            return tuple(primal_alias(o, self.level) for o in self.outs)
        if name.startswith("result") and name[6:].isdigit():
            return primal_alias(self.outs[int(name[6:])], self.level)
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
