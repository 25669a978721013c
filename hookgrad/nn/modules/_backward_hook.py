"""Module backward hooks: full hooks via an identity node, and legacy hooks (spec §8).

NOTE [Module backward hooks]
PyTorch implements ``register_full_backward_hook`` and ``register_full_backward_pre_hook``
without any engine support: the module's Tensor inputs, and later its Tensor outputs, are passed
through an identity autograd Function (node name ``BackwardHookFunctionBackward``) and plain node
post-hooks are registered on the two identity nodes. hookgrad does exactly the same, so the hook
timing against tensor hooks, node hooks and other modules falls out of the engine's order:
- the *output hook* runs when gradients w.r.t. the outputs are complete: it builds
  ``grad_output``, runs the backward pre-hooks (which may replace it) and stores it;
- the *input hook* runs when gradients w.r.t. the inputs are complete: it builds
  ``grad_input`` and runs the full backward hooks with the stored ``grad_output``.
The identity node materialises missing gradients as zeros (custom Functions do), which is why
a Tensor argument that does not require grad shows up as a zero tensor in ``grad_input``.
Its outputs are views of its inputs with PyTorch's creation meta (``in_custom_function``, or
``multi_output`` for several differentiable outputs), so an in-place op on one of them or on a
view of one, and a later use after its base was modified in place, raise PyTorch's errors through
the shared view checks; the meta carries advice on what to change, appended to PyTorch's text
(pytorch/pytorch#61519).
"""

from __future__ import annotations

import functools
import warnings
import weakref
from typing import Any

from hookgrad._backend import namespace_of
from hookgrad._config import STATE
from hookgrad._dispatch import record_function
from hookgrad._ops.registry import PRIMITIVES
from hookgrad._tensor import Tensor
from hookgrad.autograd._edges import gradient_edge
from hookgrad.autograd._node import Node
from hookgrad.nn.modules._paths import publish

__all__ = ["BackwardHook", "BackwardHookFunctionBackward", "_WrappedHook", "attach_legacy_hooks"]

_ADVICE_OUTPUT = (
    " [hookgrad] This tensor (or a view of it) is an output of {mod}, which has backward "
    "hooks: modifying it, or the tensor it views, in place would bypass them. Use "
    "inplace=False for the module following {mod} (e.g. nn.ReLU(inplace=False)), or clone the "
    "output of {mod} before modifying it in place."
)
_ADVICE_INPUT = (
    " [hookgrad] This tensor (or a view of it) is an input of {mod}, which has backward "
    "hooks, and it is modified in place inside {mod}.forward. Use inplace=False for the "
    "in-place layer inside {mod} (e.g. nn.ReLU(inplace=False)), or clone the input at the "
    "start of forward."
)


class _HookViewMeta(str):
    """View creation meta of identity outputs: PyTorch's ``"in_custom_function"`` or
    ``"multi_output"`` (equal to those strings for the shared view checks) plus the advice
    appended to their error text; derived views inherit it (NOTE [Module backward hooks])."""

    advice: str = ""


@functools.lru_cache(maxsize=256)
def _view_meta(multi: bool, advice: str, module_name: str) -> _HookViewMeta:
    meta = _HookViewMeta("multi_output" if multi else "in_custom_function")
    meta.advice = advice.replace("{mod}", module_name)
    return meta


_NO_INPUT_GRAD_WARNING = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See "
    "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
    "#torch.nn.Module.register_full_backward_hook for more details."
)


class BackwardHookFunctionBackward(Node):
    """The identity node that module backward hooks hang on (NOTE [Module backward hooks]).

    Mirrors: the node of ``torch.nn.modules._functions.BackwardHookFunction``.
    """

    __slots__ = ("_metas",)

    _forbid_inplace_view = True  # its outputs are custom-Function views (creation meta)

    def __init__(self, edges: tuple, metas: list) -> None:
        super().__init__(edges)
        self._metas = metas

    def _num_slots(self) -> int:
        return len(self._metas)

    def apply(self, grads: tuple, needed: tuple | None = None) -> tuple:
        # Custom Functions materialise missing gradients as zeros before calling backward.
        for g in grads:
            if g is None:
                break
        else:
            return tuple(grads)
        out = []
        for g, (shape, np_dtype, xp) in zip(grads, self._metas):
            out.append(Tensor._make(xp.zeros(shape, np_dtype)) if g is None else g)
        return tuple(out)


def identity_views(tensors: list, advice: str, module_name: str) -> tuple:
    """Pass `tensors` through one `BackwardHookFunctionBackward` node; return the views."""
    view = PRIMITIVES["view"]
    edges = []
    metas = []
    n_diff = 0
    for t in tensors:
        edges.append(gradient_edge(t))
        data = t._data
        metas.append((data.shape, data.dtype, namespace_of(data)))
        n_diff += t._requires_grad
    node = BackwardHookFunctionBackward(tuple(edges), metas)
    meta = _view_meta(n_diff > 1, advice, module_name)
    outs = []
    for i, t in enumerate(tensors):
        data = t._data
        out = Tensor._make(data)
        vc = t._vc()
        out._base = t if t._base is None else t._base
        out._version_counter = vc
        out._view_chain = t._view_chain + ((view, {"size": data.shape}, 0),)
        out._view_version = vc.value
        out._creation_meta = meta  # in-place on it (or a view of it) is forbidden
        if t._requires_grad:  # others are marked non-differentiable
            out._requires_grad = True
            out._grad_fn = node
            out._output_nr = i
        outs.append(out)
    record_function(BackwardHookFunctionBackward, tuple(tensors), tuple(outs))
    return node, outs


def _pack_with_none(indices: list, values: Any, size: int) -> tuple:
    res: list = [None] * size
    for idx, val in zip(indices, values):
        res[idx] = val
    return tuple(res)


class BackwardHook:
    """Per-call state linking a module's output gradients to its input gradients.

    Mirrors: ``torch.utils.hooks.BackwardHook``.
    """

    def __init__(self, module: Any, user_hooks: list, user_pre_hooks: list) -> None:
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs: Any = None
        self.n_outputs = -1
        self.output_tensors_index: list | None = None
        self.n_inputs = -1
        self.input_tensors_index: list | None = None

    def _apply_on_tensors(self, args: tuple, advice: str) -> tuple:
        idx = []
        tensors = []
        requires_grad = False
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                idx.append(i)
                tensors.append(a)
                requires_grad = requires_grad or a._requires_grad
        if not (requires_grad and STATE.grad_enabled):
            return args, None, None
        node, views = identity_views(tensors, advice, type(self.module).__name__)
        arg_list = list(args)
        for i, v in zip(idx, views):
            arg_list[i] = v
        out = tuple(arg_list) if type(args) is tuple else type(args)(*arg_list)
        return out, idx, node

    def setup_input_hook(self, args: tuple) -> tuple:
        """Wrap the Tensor positional args; register the input hook (NOTE above)."""
        res, idx, node = self._apply_on_tensors(args, _ADVICE_INPUT)
        self.n_inputs = len(args)
        self.input_tensors_index = idx
        if node is not None:
            node.register_hook(self._input_hook())
        return res

    def setup_output_hook(self, result: Any) -> Any:
        """Wrap the Tensor outputs; register the output hook (NOTE above)."""
        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, idx, node = self._apply_on_tensors(args, _ADVICE_OUTPUT)
        self.n_outputs = len(args)
        self.output_tensors_index = idx
        if node is not None:
            node.register_hook(self._output_hook())
        return res if is_tuple else res[0]

    def _input_hook(self) -> Any:
        def hook(grad_input: tuple, _: Any) -> Any:
            if self.grad_outputs is None:
                # The gradient reached the inputs without passing through the outputs.
                return None
            res = _pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
            for user_hook in self.user_hooks:
                out = user_hook(self.module, res, self.grad_outputs)
                if out is None:
                    continue
                if len(out) != len(res):
                    raise RuntimeError(
                        "Backward hook returned an invalid number of grad_input, "
                        f"got {len(out)}, but expected {len(res)}"
                    )
                res = out
            self.grad_outputs = None
            return tuple(res[i] for i in self.input_tensors_index)

        return hook

    def _output_hook(self) -> Any:
        def hook(_: Any, grad_output: tuple) -> Any:
            self.grad_outputs = _pack_with_none(
                self.output_tensors_index, grad_output, self.n_outputs
            )
            self._run_pre_hooks()
            local_grad_outputs = self.grad_outputs
            if self.input_tensors_index is None:
                self._fire_without_input_grads()
            if local_grad_outputs is not None:
                return tuple(local_grad_outputs[i] for i in self.output_tensors_index)
            return None

        return hook

    def _run_pre_hooks(self) -> None:
        expected_len = len(self.grad_outputs)
        for user_pre_hook in self.user_pre_hooks:
            new = user_pre_hook(self.module, self.grad_outputs)
            if new is None:
                continue
            if len(new) != expected_len:
                raise RuntimeError(
                    "Backward pre hook returned an invalid number of grad_output, "
                    f"got {len(new)}, but expected {expected_len}"
                )
            self.grad_outputs = new

    def _fire_without_input_grads(self) -> None:
        warnings.warn(_NO_INPUT_GRAD_WARNING, UserWarning, stacklevel=5)
        grad_inputs = _pack_with_none([], [], self.n_inputs)
        for user_hook in self.user_hooks:
            res = user_hook(self.module, grad_inputs, self.grad_outputs)
            if res is not None and not (
                isinstance(res, tuple) and all(el is None for el in res)
            ):
                raise RuntimeError(
                    "Backward hook for Modules where no input requires gradient should always "
                    "return None or None for all gradients."
                )
        self.grad_outputs = None


class _WrappedHook:
    """A hook bound to its module through a weak reference.

    Mirrors: ``torch.nn.modules.module._WrappedHook``.
    """

    def __init__(self, hook: Any, module: Any = None) -> None:
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = False
        if module is not None:
            self.module = weakref.ref(module)
            self.with_module = True

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self) -> dict:
        result = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            result["module"] = self.module()
        return result

    def __setstate__(self, state: dict) -> None:
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


# ---------------------------------------------------------------- legacy hooks (spec §8.5)
_W_OUTPUT = (
    "Using non-full backward hooks on a Module that does not return a single Tensor or a tuple "
    "of Tensors is deprecated and will be removed in future versions. This hook will be missing "
    "some of the grad_output. Please use register_full_backward_hook to get the documented "
    "behavior."
)
_W_INPUT = (
    "Using non-full backward hooks on a Module that does not take as input a single Tensor or a "
    "tuple of Tensors is deprecated and will be removed in future versions. This hook will be "
    "missing some of the grad_input. Please use register_full_backward_hook to get the "
    "documented behavior."
)
_W_NESTED = (
    "Using a non-full backward hook when outputs are nested in python data structure is "
    "deprecated and will be removed in future versions. This hook will be missing some "
    "grad_output."
)
_W_MULTI_OUT = (
    "Using a non-full backward hook when outputs are generated by different autograd Nodes is "
    "deprecated and will be removed in future versions. This hook will be missing some "
    "grad_output. Please use register_full_backward_hook to get the documented behavior."
)
_W_MULTI_NODE = (
    "Using a non-full backward hook when the forward contains multiple autograd Nodes is "
    "deprecated and will be removed in future versions. This hook will be missing some "
    "grad_input. Please use register_full_backward_hook to get the documented behavior."
)


def attach_legacy_hooks(module: Any, hooks: list, args: tuple, result: Any) -> None:
    """Register legacy hooks on the first output's ``grad_fn`` (spec §8.5), then warn."""
    var = result
    while not isinstance(var, Tensor):
        if isinstance(var, dict):
            var = next(v for v in var.values() if isinstance(v, Tensor))
        else:
            var = var[0]
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    for hook in hooks:
        grad_fn.register_hook(_WrappedHook(hook, module))
    _maybe_warn_non_full(args, result, grad_fn)


def _maybe_warn_non_full(inputs: Any, result: Any, grad_fn: Any) -> None:
    if not isinstance(result, Tensor):
        if not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
            warnings.warn(_W_OUTPUT, FutureWarning, stacklevel=4)
            return
    else:
        result = (result,)
    if not isinstance(inputs, Tensor):
        if not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
            warnings.warn(_W_INPUT, FutureWarning, stacklevel=4)
            return
    else:
        inputs = (inputs,)
    out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
    if len(out_grad_fn) == 0 or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
        warnings.warn(_W_NESTED, FutureWarning, stacklevel=4)
    elif len(out_grad_fn) > 1:
        warnings.warn(_W_MULTI_OUT, FutureWarning, stacklevel=4)
    else:
        inputs_grad_fn = {i.grad_fn for i in inputs if i.grad_fn is not None}
        next_functions = {n[0] for n in grad_fn.next_functions}
        if inputs_grad_fn != next_functions:
            warnings.warn(_W_MULTI_NODE, FutureWarning, stacklevel=4)


# PyTorch's path: torch.utils.hooks.BackwardHook (hookgrad.utils.hooks sits below nn, so the class
# is published there from here rather than imported upward).
publish("hookgrad.utils.hooks", globals(), ["BackwardHook"])
