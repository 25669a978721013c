"""Custom differentiable operations: `Function`, its context object and `once_differentiable`.

NOTE [Custom Function nodes]
As in PyTorch, the ``ctx`` handed to ``forward``/``setup_context``/``backward`` *is* the backward
node: ``y.grad_fn is ctx``, so attributes set on ``ctx`` are readable on ``y.grad_fn``. Each
`Function` subclass ``Fn`` gets a node class ``FnBackward`` (a `Node` subclass), so the engine,
node hooks, tensor hooks and saved-tensor hooks treat custom nodes exactly like the op table's
nodes. ``apply`` follows PyTorch's ``THPFunction_apply``:

1. create the node (this always consumes a sequence number, even when nothing requires grad);
2. collect one gradient edge per *tensor* argument (non-tensor arguments get no edge);
3. run ``forward`` (and ``setup_context``) with grad mode off;
4. wrap the outputs (``_wrap_outputs``): dirty inputs move onto the node, inputs returned as-is
   come back as views of themselves, non-differentiable outputs are detached;
5. save ``ctx.save_for_backward`` tensors as `SavedTensor`s (pack hooks run here, after forward).

NOTE [Custom Function views]
An output that is a view (an input returned as-is, or a view made inside ``forward``) may not be
modified in place: the in-place op's autograd handling would bypass the custom backward. Such
outputs get the view creation meta ``"in_custom_function"`` (``"multi_output"`` when the Function
has more than one differentiable output), so the shared view checks (NOTE [View creation meta]
in ``_functional/_views.py``) raise PyTorch's errors, also for views of these views and when the
base is modified later. The node's ``_forbid_inplace_view`` and `inplace_view_error` give the
same text to code that checks the node rather than the tensor.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import re
import warnings
from collections.abc import Callable
from typing import Any

from hookgrad._backend import namespace_of
from hookgrad._config import GLOBAL, STATE, remove_recorder, set_grad_mode, set_recorders
from hookgrad._dispatch import mark_views, note_write, record_function
from hookgrad._ops.registry import PRIMITIVES
from hookgrad._tensor import Tensor
from hookgrad.autograd._edges import gradient_edge, move_autograd_identity
from hookgrad.autograd._node import Node
from hookgrad.autograd._saved import FREED_ERROR, SavedTensor

__all__ = [
    "Function", "FunctionCtx", "BackwardCFunction", "once_differentiable", "InplaceFunction",
    "NestedIOFunction", "inplace_view_error", "base_modified_view_error", "FunctionMeta",
    "AUTOGRAD_FUNCTION_COUNTER",
]

_CUSTOM_VIEW = (
    "This view was created inside a custom Function (or because an input was returned as-is) "
    "and the autograd logic to handle view+inplace would override the custom backward "
    "associated with the custom Function, leading to incorrect gradients. This behavior is "
    "forbidden. You can fix this by cloning the output of the custom Function."
)
_MULTI_VIEW = (
    "This view is the output of a function that returns multiple views. Such functions do not "
    "allow the output views to be modified inplace. You should replace the inplace operation "
    "by an out-of-place one."
)
_DIRTY_NOT_RETURNED = (
    "Some elements marked as dirty during the forward method were not returned as output. The "
    "inputs that are modified inplace must all be outputs of the Function."
)
_DIRTY_VIEW_MULTI = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function "
    "cannot return more than one Tensor. This is not supported by the current autograd engine. "
    "You should either make sure the input is not a view (using .clone() for example) or make "
    "your Function only return one Tensor (potentially splitting it into two Functions: one "
    "doing the inplace that returns a single Tensor and a second one that does the other "
    "operations). You can ask on the forum https://discuss.pytorch.org/ if you need help to do "
    "this change."
)


def _short_name(node: Any) -> str:
    return re.sub(r"Backward\d*$", "", node.name())


def _view_advice(node: Any) -> str:
    return _MULTI_VIEW if getattr(node, "_num_diff_outputs", 1) > 1 else _CUSTOM_VIEW


def inplace_view_error(node: Any, output_nr: int) -> str:
    """PyTorch's text for an in-place op on a view output of a custom Function (spec E34)."""
    return (
        f"Output {output_nr} of {_short_name(node)} is a view and is being modified inplace. "
        + _view_advice(node)
    )


def base_modified_view_error(node: Any, output_nr: int) -> str:
    """PyTorch's text when such a view is used after its base was modified in place."""
    return (
        f"Output {output_nr} of {_short_name(node)} is a view and its base or another view of "
        "its base has been modified inplace. " + _view_advice(node)
    )


# ---------------------------------------------------------------------------------- ctx
class FunctionCtx:
    """The methods available on ``ctx`` inside a custom Function.

    Mirrors: ``torch.autograd.function.FunctionCtx``.
    """

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Save tensors for ``backward`` (read them back with ``ctx.saved_tensors``).

        Saved tensors go through saved-tensor hooks and the version-counter check, like the
        values built-in ops save.

        Mirrors: ``torch.autograd.function.FunctionCtx.save_for_backward``.
        """
        self.to_save = tensors  # type: ignore[attr-defined]

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Save tensors for ``jvp`` (read back with ``ctx.saved_tensors`` inside ``jvp``).

        Mirrors: ``torch.autograd.function.FunctionCtx.save_for_forward``.
        """
        self.saved_for_forward = tensors  # type: ignore[attr-defined]

    def mark_dirty(self, *args: Tensor) -> None:
        """Declare inputs that ``forward`` modified in place (they must also be returned).

        Mirrors: ``torch.autograd.function.FunctionCtx.mark_dirty``.
        """
        self.dirty_tensors = args  # type: ignore[attr-defined]

    def mark_non_differentiable(self, *args: Tensor) -> None:
        """Declare outputs that are not differentiable (they get ``requires_grad=False``).

        Mirrors: ``torch.autograd.function.FunctionCtx.mark_non_differentiable``.
        """
        self.non_differentiable = args  # type: ignore[attr-defined]

    def set_materialize_grads(self, value: bool) -> None:
        """Whether ``backward`` receives zeros (True, default) or None for missing gradients.

        Mirrors: ``torch.autograd.function.FunctionCtx.set_materialize_grads``.
        """
        self._materialize = bool(value)  # type: ignore[attr-defined]


class BackwardCFunction(Node, FunctionCtx):
    """The node (and ``ctx``) of one custom Function call; see NOTE [Custom Function nodes].

    Subclasses named ``<Fn>Backward`` are generated per `Function` subclass. Instances have a
    ``__dict__``, so user code may store arbitrary attributes on ``ctx``.

    Mirrors: ``torch.autograd.function.BackwardCFunction``.
    """

    _forward_cls: type
    _forbid_inplace_view = True  # only consulted for view outputs, NOTE [Custom Function views]

    def __init__(self) -> None:
        super().__init__(())
        self.to_save: tuple | None = None
        self.dirty_tensors: tuple | None = None
        self.non_differentiable: tuple | None = None
        self.needs_input_grad: tuple = ()
        self._materialize = True
        self._saved: tuple = ()
        self._freed = False
        self._is_tensor_input: tuple = ()
        self._input_meta: list = []
        self._output_info: list = []
        self._num_diff_outputs = 0

    # ------------------------------------------------------------------ saved values
    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward`` (unpacked, version-checked).

        Mirrors: ``torch.autograd.function.FunctionCtx.saved_tensors``.
        """
        forward_saved = self.__dict__.get("saved_for_forward")
        if forward_saved is not None:  # inside ``jvp``: what ``save_for_forward`` kept
            return forward_saved
        if self._freed:
            raise RuntimeError(FREED_ERROR)
        return tuple(None if s is None else s.unpack(self) for s in self._saved)

    @property
    def saved_variables(self) -> tuple:
        """Deprecated alias of ``saved_tensors``. Mirrors: ``ctx.saved_variables``."""
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'",
                      DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    @property
    def _raw_saved_tensors(self) -> tuple:
        if self._freed:
            raise RuntimeError(FREED_ERROR)
        return self._saved

    def release_saved(self) -> None:
        self._freed = True
        for s in self._saved:
            if s is not None:
                s.release()

    # ------------------------------------------------------------------ engine protocol
    def _num_slots(self) -> int:
        return len(self._output_info)

    def input_metadata(self) -> list:
        return self._input_meta

    def apply(self, grads: tuple, needed: tuple | None = None) -> tuple:  # type: ignore[override]
        """Run the user's ``backward`` (or ``vjp``) and check what it returned."""
        if self._materialize:
            grads = tuple(_materialized(g, info) for g, info in zip(grads, self._output_info))
        cls = self._forward_cls
        backward_fn, vjp_fn = cls.backward, cls.vjp
        if backward_fn is not Function.backward and vjp_fn is not Function.vjp:
            raise RuntimeError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                "You should only implement one of them."
            )
        user_fn = vjp_fn if vjp_fn is not Function.vjp else backward_fn
        result = user_fn(self, *grads)
        return self._check_grads(result if isinstance(result, tuple) else (result,))

    def _check_grads(self, result: tuple) -> tuple:
        """PyTorch's ``PyNode::apply`` checks: count, None for non-tensors, types."""
        is_tensor = self._is_tensor_input
        n = len(is_tensor)
        if len(result) > n and all(r is None for r in result[n:]):
            result = result[:n]
        if len(result) != n:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected "
                f"{n}, got {len(result)})"
            )
        out = []
        for i, g in enumerate(result):
            if not is_tensor[i]:
                if g is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at "
                        f"position {i + 1}, but the corresponding forward input was not a "
                        "Variable"
                    )
                continue
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            out.append(g)
        return tuple(out)


def _materialized(g: Any, info: Any) -> Any:
    """Zeros for a missing gradient of a tensor output (non-tensor outputs stay None)."""
    if g is not None or info is None:
        return g
    shape, np_dtype, xp = info
    return Tensor._make(xp.zeros(shape, dtype=np_dtype))


# ---------------------------------------------------------------------------------- Function
# ``check(function_class, args)`` callables run first by `Function.apply`: the functorch
# transforms (a layer above) register what they refuse, so this module does not import them.
TRANSFORM_CHECKS: list[Callable[[type, tuple], None]] = []


def _is_setup_context_defined(fn: Any) -> bool:
    return fn is not _SingleLevelFunction.setup_context


# Numbers the Backward classes in creation order (PyTorch keys per-Function caches on it).
AUTOGRAD_FUNCTION_COUNTER = itertools.count()


class FunctionMeta(type):
    """Metaclass of `Function`: gives every Function class its own Backward node class.

    ``cls._backward_cls`` is ``<Name>Backward`` (a `BackwardCFunction` with ``_forward_cls``), its
    ``_autograd_function_id`` drawn from `AUTOGRAD_FUNCTION_COUNTER`.

    Mirrors: ``torch.autograd.function.FunctionMeta``.
    """

    def __init__(cls, name: str, bases: tuple, attrs: dict) -> None:
        backward_fn = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        backward_fn._autograd_function_id = next(AUTOGRAD_FUNCTION_COUNTER)
        cls._backward_cls = backward_fn
        super().__init__(name, bases, attrs)


class _SingleLevelFunction(metaclass=FunctionMeta):
    """Base of `Function`: the static methods a user overrides."""

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        """Compute the outputs (``forward(ctx, *args)`` or, with ``setup_context``, without ctx).

        Mirrors: ``torch.autograd.Function.forward``.
        """
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        """Optional: fill ``ctx`` from ``inputs`` and ``output`` (the newer style).

        Mirrors: ``torch.autograd.Function.setup_context``.
        """
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """Gradients w.r.t. each forward input (None for non-tensors / no gradient).

        Mirrors: ``torch.autograd.Function.backward``.
        """
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """Output tangents from input tangents (forward-mode AD through this Function).

        Mirrors: ``torch.autograd.Function.jvp``.
        """
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )


class Function(_SingleLevelFunction):
    """Base class for custom differentiable operations (see NOTE [Custom Function nodes]).

    Example:
        >>> import hookgrad as torch
        >>> class Double(torch.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         return x * 2
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         return g * 2
        >>> x = torch.ones(2, requires_grad=True)
        >>> y = Double.apply(x)
        >>> y.grad_fn.name()
        'DoubleBackward'

    Mirrors: ``torch.autograd.Function`` (no vmap / functorch transforms).
    """

    _backward_cls: type
    generate_vmap_rule = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are "
            "all static, so you should invoke them on the class itself. Instantiating an "
            "autograd function will raise an error in a future version of PyTorch.",
            DeprecationWarning, stacklevel=2,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def vmap(info: Any, in_dims: Any, *args: Any) -> Any:
        """Mirrors: ``torch.autograd.Function.vmap`` (not supported)."""
        raise NotImplementedError("hookgrad does not support vmap for autograd.Function")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run the Function and record its node when an input needs a gradient.

        Mirrors: ``torch.autograd.Function.apply``.
        """
        for check in TRANSFORM_CHECKS:  # transforms above this layer refuse Functions they
            check(cls, args)            # cannot apply (vmap without a vmap rule, ...)
        setup = _is_setup_context_defined(cls.setup_context)
        if setup:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = tuple(bound.args), {}
        ctx = cls._backward_cls()
        is_tensor = tuple(isinstance(a, Tensor) for a in args)
        ctx.needs_input_grad = tuple(t and a._requires_grad for t, a in zip(is_tensor, args))
        executable = STATE.grad_enabled and any(ctx.needs_input_grad)
        if executable:
            ctx._is_tensor_input = is_tensor
            tensors = [a for a in args if isinstance(a, Tensor)]
            ctx._next_edges = tuple(gradient_edge(t) for t in tensors)
            ctx._input_meta = [(t._data.shape, t._data.dtype) for t in tensors]
        tangents = _input_tangents(args)
        prev, recorders = STATE.grad_enabled, STATE.stack
        set_grad_mode(False)
        if GLOBAL.dual_level >= 0:  # forward AD is off inside forward, as in PyTorch
            from hookgrad.autograd.forward_ad import FORWARD_RECORDER

            remove_recorder(FORWARD_RECORDER)
        try:
            if setup:
                raw = cls.forward(*args)
                cls.setup_context(ctx, args, raw)
            else:
                raw = cls.forward(ctx, *args, **kwargs)
        finally:
            set_grad_mode(prev)
            set_recorders(recorders)
        is_tuple = isinstance(raw, tuple)
        outs = _wrap_outputs(ctx, args, raw if is_tuple else (raw,), executable)
        _save_variables(ctx, executable)
        if tangents is not None:
            _apply_jvp(cls, ctx, args, tangents, outs)
        ctx.saved_for_forward = None
        record_function(cls, tuple(a for a in args if isinstance(a, Tensor)), tuple(outs))
        return outs if is_tuple else outs[0]


class InplaceFunction(Function):
    """Mirrors: ``torch.autograd.function.InplaceFunction`` (stores ``inplace``)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """Legacy API kept only as a name. Mirrors: ``torch.autograd.function.NestedIOFunction``."""


# ---------------------------------------------------------------------------------- forward AD
def _input_tangents(args: tuple) -> list | None:
    """Tangents of the tensor arguments at the current dual level; None if there are none."""
    if GLOBAL.dual_level < 0:
        return None
    from hookgrad.autograd.forward_ad import get_tangent

    tangents = [get_tangent(a, GLOBAL.dual_level) if isinstance(a, Tensor) else None for a in args]
    return tangents if any(t is not None for t in tangents) else None


def _apply_jvp(cls: Any, ctx: Any, args: tuple, tangents: list, outs: tuple) -> None:
    """Call the user's ``jvp`` and give its results to the outputs as tangents."""
    from hookgrad.autograd.forward_ad import _set_tangent

    if ctx._materialize:  # tensor inputs without a tangent get zeros
        tangents = [Tensor._make(namespace_of(a._data).zeros_like(a._data))
                    if t is None and isinstance(a, Tensor) else t for a, t in zip(args, tangents)]
    result = cls.jvp(ctx, *tangents)
    result = result if isinstance(result, tuple) else (result,)
    if len(result) != len(outs):
        raise RuntimeError(
            "Function's jvp returned an invalid number of forward gradients (expected "
            f"{len(outs)} but got {len(result)})"
        )
    for out, tangent in zip(outs, result):
        if tangent is None or not isinstance(out, Tensor) or out._data.dtype.kind not in "fcV":
            continue
        if tangent._data.shape != out._data.shape:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size {list(out.shape)} "
                f"while the given forward gradient is of size {list(tangent.shape)}."
            )
        _set_tangent(out, GLOBAL.dual_level, tangent)


# ---------------------------------------------------------------------------------- outputs
def _ids(ctx: Any, attr: str, who: str) -> set:
    values = getattr(ctx, attr) or ()
    for v in values:
        if not isinstance(v, Tensor):
            raise RuntimeError(who)
    setattr(ctx, attr, None)  # PyTorch drops these references once they are used
    return {id(v) for v in values}


def _wrap_outputs(ctx: Any, args: tuple, outs: tuple, executable: bool) -> tuple:
    """Give outputs their autograd identity (PyTorch's ``_wrap_outputs``)."""
    dirty_list = [d for d in (ctx.dirty_tensors or ()) if isinstance(d, Tensor)]
    dirty = _ids(ctx, "dirty_tensors", "mark_dirty can only accept variables, but argument ")
    nondiff = _ids(ctx, "non_differentiable",
                   "mark_non_differentiable only accepts variable arguments, but got ")
    for d in dirty_list:
        note_write(d)
    out_ids = {id(o) for o in outs if isinstance(o, Tensor)}
    if not dirty <= out_ids:
        raise RuntimeError(_DIRTY_NOT_RETURNED)
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    n_tensors = sum(isinstance(o, Tensor) for o in outs)
    node = ctx if executable else None
    info: list = []
    results = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            info.append(None)
            results.append(o)
            continue
        info.append((o._data.shape, o._data.dtype, namespace_of(o._data)))
        diff = node is not None and id(o) not in nondiff and o._data.dtype.kind in "fcV"
        ctx._num_diff_outputs += diff
        results.append(_set_history(node, o, i, id(o) in input_ids, id(o) in dirty, diff,
                                    n_tensors))
    if executable:
        ctx._output_info = info
    meta = "multi_output" if ctx._num_diff_outputs > 1 else "in_custom_function"
    for o, r in zip(outs, results):
        if isinstance(r, Tensor) and r._base is not None and not (r is o and id(o) in dirty):
            r._creation_meta = meta  # type: ignore[attr-defined]
    return tuple(results)


def _set_history(node: Any, var: Tensor, i: int, is_input: bool, is_modified: bool,
                 is_diff: bool, n_outputs: int) -> Tensor:
    """One output's graph identity (the ``set_history`` lambda of PyTorch)."""
    if not is_diff:
        if not var._requires_grad:
            return _view_as_self(var) if is_input and not is_modified else var
        if is_input:
            return var.detach()
        if var._base is None:
            var.detach_()
        return var
    if is_modified:
        if var._grad_fn is None and var._base is None and var._requires_grad:
            raise RuntimeError(
                "a leaf Variable that requires grad has been used in an in-place operation."
            )
        if not is_input:
            warnings.warn(
                "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors "
                "that have been mutated should be passed to ctx.mark_dirty().",
                UserWarning, stacklevel=4,
            )
        if var._base is not None:
            if n_outputs > 1:
                raise RuntimeError(_DIRTY_VIEW_MULTI)
            from hookgrad.autograd._copy_slices import rebase_view_inplace

            rebase_view_inplace(var, node)
            return var
        move_autograd_identity(var, node, i)
        var._requires_grad = True
        return var
    if is_input:
        var = _view_as_self(var)
    var._grad_fn = node
    var._output_nr = i
    var._requires_grad = True
    if var._base is not None:
        var._view_version = var._vc().value  # fresh: not stale (NOTE [Views and in-place])
    return var


def _view_as_self(var: Tensor) -> Tensor:
    """A new tensor viewing all of `var` (PyTorch returns inputs as ``view_as(self)``)."""
    out = Tensor._make(var._data.view())
    mark_views(var, (out,), PRIMITIVES["view"], {"size": tuple(var._data.shape)})
    return out


def _save_variables(ctx: Any, executable: bool) -> None:
    to_save = ctx.to_save
    ctx.to_save = None
    if not executable or not to_save:
        return
    saved = []
    for i, t in enumerate(to_save):
        if t is None:
            saved.append(None)
        elif not isinstance(t, Tensor):
            raise TypeError(
                "save_for_backward can only save variables, but argument "
                f"{i} is of type {type(t).__name__}"
            )
        else:
            is_output = t._grad_fn is ctx
            saved.append(SavedTensor(t, is_output, ctx))
    ctx._saved = tuple(saved)


# ------------------------------------------------------------------------ once_differentiable
class Error(Node):
    """A node whose backward raises: the graph of ``@once_differentiable`` results.

    Mirrors: ``torch::autograd::Error`` (Python type ``Error``).
    """

    __slots__ = ("_msg", "_nslots")

    def __init__(self, msg: str, edges: tuple, nslots: int) -> None:
        super().__init__(edges)
        self._msg = msg
        self._nslots = nslots

    def name(self) -> str:
        return "torch::autograd::Error"

    def _num_slots(self) -> int:
        return self._nslots

    def apply(self, grads: tuple, needed: tuple | None = None) -> tuple:  # type: ignore[override]
        raise RuntimeError(self._msg)


_ONCE_MSG = "trying to differentiate twice a function that was marked with @once_differentiable"


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run a ``backward`` under no_grad; differentiating its result again raises.

    Mirrors: ``torch.autograd.function.once_differentiable``.
    """

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        prev = STATE.grad_enabled
        set_grad_mode(False)
        try:
            outputs = fn(ctx, *args)
        finally:
            set_grad_mode(prev)
        if not prev:
            return outputs
        if not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        return _delayed_error(outputs)

    return wrapper


def _delayed_error(outputs: tuple) -> tuple:
    """Aliases of `outputs` whose ``grad_fn`` is an `Error` node (PyTorch's DelayedError)."""
    leaves = []
    for v in outputs:
        if v is not None:
            v = v.detach()
            v._requires_grad = True
        leaves.append(v)
    edges = tuple(gradient_edge(v) if v is not None else (None, 0) for v in leaves)
    node = Error(_ONCE_MSG, edges, len(leaves))
    results = []
    for i, v in enumerate(leaves):
        if v is None:
            results.append(None)
            continue
        out = Tensor._make(v._data)
        out._requires_grad = True
        out._grad_fn = node
        out._output_nr = i
        results.append(out)
    return tuple(results)
