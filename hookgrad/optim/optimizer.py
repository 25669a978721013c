"""`Optimizer`: parameter groups, per-parameter state, state dicts and the optimizer hooks.

Layer 6. Subclasses implement ``step`` by doing their update math directly on the parameters'
arrays (see NOTE [In-place optimizer math]); this module owns everything around that math.

NOTE [Optimizer step hooks]
PyTorch patches ``type(self).step`` the first time an instance of a class is built. hookgrad
wraps it once, visibly, when the class is *created* (`Optimizer.__init_subclass__`), so a user
subclass overriding ``step`` fires hooks exactly like a built-in optimizer. The wrapper runs, in
this order (spec §11.1): global pre-hooks, the instance's pre-hooks, ``step`` itself, the
instance's post-hooks, then the global post-hooks (post is local-then-global, the asymmetry of
torch). ``args`` passed to hooks includes the optimizer itself as ``args[0]``. The wrapped
function carries ``hooked = True`` and ``__wrapped__`` (the original step function, whose repr
appears in the E41 error message).
A subclass step that calls ``super().step()`` reaches a second wrapper; it sees the instance is
already inside a hooked step and runs the parent's step without firing hooks again, so hooks
fire once per ``opt.step()``. (torch fires them twice there, but only once the parent class has
been patched by an earlier instance of it: a history-dependent result hookgrad does not copy.)

NOTE [In-place optimizer math]
An optimizer update is a ``no_grad`` in-place update: the built-in optimizers operate on
``tensor._data`` with NumPy ufuncs (``out=`` / augmented assignment) in the same order as
torch's single-tensor (for-loop) implementation, and bump each modified tensor's version counter
(``t._vc().value += 1``) exactly as an in-place op would. New arrays come from the array's own
namespace (``_backend.namespace_of``); NumPy ufuncs writing into existing arrays (``out=``,
``+=``) dispatch to CuPy for CuPy arrays, so the same code serves both backends. This avoids
one op-table dispatch per elementary operation and keeps float32 results within rounding of
torch's (torch fuses some multiply-adds on CPU, NumPy rounds each operation, so results agree
to a few ulps, not bits).
"""

from __future__ import annotations

import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any, TypeAlias

import numpy as np

from hookgrad._ops.complex_ops import view_as_complex_array, view_as_real_array
from hookgrad import _backend
from hookgrad._config import GLOBAL, STATE, set_grad_mode
from hookgrad._dispatch import note_write
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import enable_grad
from hookgrad.optim._kernel_choice import (  # noqa: F401 - PyTorch's module has them
    _default_to_fused_or_foreach, _get_capturable_supported_devices)
from hookgrad.utils import _foreach_utils
from hookgrad.nn.modules._registration import typename
from hookgrad.utils.hooks import HookRegistry, RemovableHandle

__all__ = [
    "Optimizer",
    "register_optimizer_step_pre_hook",
    "register_optimizer_step_post_hook",
]

Args: TypeAlias = tuple[Any, ...]
Kwargs: TypeAlias = dict[str, Any]
StateDict: TypeAlias = dict[str, Any]
OptimizerPreHook: TypeAlias = Callable[["Optimizer", Args, Kwargs], "tuple[Args, Kwargs] | None"]
OptimizerPostHook: TypeAlias = Callable[["Optimizer", Args, Kwargs], None]
GlobalOptimizerPreHook: TypeAlias = OptimizerPreHook
GlobalOptimizerPostHook: TypeAlias = OptimizerPostHook
ParamsT: TypeAlias = "Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]"
Indices: TypeAlias = list[int]
TensorListList: TypeAlias = list[list["Tensor | None"]]
DeviceDict: TypeAlias = dict[Any, Tensor]
DeviceDtypeDict: TypeAlias = dict[Any, Tensor]

_global_optimizer_pre_hooks: HookRegistry = HookRegistry()
_global_optimizer_post_hooks: HookRegistry = HookRegistry()


class _RequiredParameter:
    """Singleton marking a hyper-parameter every param group must give.

    Mirrors: ``torch.optim.optimizer.required``.
    """

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def register_optimizer_step_pre_hook(hook: OptimizerPreHook) -> RemovableHandle:
    """Register a step pre-hook shared by every optimizer instance.

    The hook is called as ``hook(optimizer, args, kwargs) -> None | (new_args, new_kwargs)``
    before each ``optimizer.step(...)``, before the instance's own pre-hooks. ``args`` includes
    the optimizer itself as ``args[0]``. Returning a 2-tuple replaces the arguments passed to
    later hooks and to ``step`` (keep the optimizer at position 0); any other non-``None`` value
    raises ``RuntimeError``.

    Args:
        hook: the callable to register.

    Returns:
        A handle whose ``remove()`` unregisters the hook.

    Mirrors: ``torch.optim.optimizer.register_optimizer_step_pre_hook``.
    """
    return _global_optimizer_pre_hooks.add(hook)


def register_optimizer_step_post_hook(hook: OptimizerPostHook) -> RemovableHandle:
    """Register a step post-hook shared by every optimizer instance.

    The hook is called as ``hook(optimizer, args, kwargs) -> None`` after each
    ``optimizer.step(...)``, after the instance's own post-hooks. Its return value is ignored.

    Args:
        hook: the callable to register.

    Returns:
        A handle whose ``remove()`` unregisters the hook.

    Mirrors: ``torch.optim.optimizer.register_optimizer_step_post_hook``.
    """
    return _global_optimizer_post_hooks.add(hook)


def _hook_step(func: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a ``step`` function with the hook protocol of NOTE [Optimizer step hooks]."""

    @functools.wraps(func)
    def step(*args: Any, **kwargs: Any) -> Any:
        self = args[0]
        # A subclass that never ran Optimizer.__init__ (wrappers delegating step to another
        # optimizer) has no hook state; PyTorch patches step per instance in __init__, so such an
        # instance's step runs bare there: no hooks, no profiling wrapper.
        if getattr(self, "_optimizer_step_pre_hooks", None) is None:
            self._opt_called = True  # the LR scheduler's step-order check still sees the call
            return func(*args, **kwargs)
        if self._in_hooked_step:  # a subclass's step calling super().step(): hooks ran already
            return func(*args, **kwargs)
        self._opt_called = True  # read by LRScheduler's "step order" warning
        self._in_hooked_step = True
        try:
            args, kwargs = _run_step_pre_hooks(func, self, args, kwargs)
            out = func(*args, **kwargs)
        finally:
            self._in_hooked_step = False
        local_post = self._optimizer_step_post_hooks
        if local_post or _global_optimizer_post_hooks:
            for post_hook in chain(local_post.snapshot(), _global_optimizer_post_hooks.snapshot()):
                post_hook(self, args, kwargs)
        return out

    step.hooked = True  # type: ignore[attr-defined]
    return step


def _run_step_pre_hooks(func: Callable[..., Any], self: Optimizer, args: Args, kwargs: Kwargs
                        ) -> tuple[Args, Kwargs]:
    """Global then local step pre-hooks; a 2-tuple result replaces ``(args, kwargs)``."""
    local_pre = self._optimizer_step_pre_hooks
    if not (_global_optimizer_pre_hooks or local_pre):
        return args, kwargs
    for pre_hook in chain(_global_optimizer_pre_hooks.snapshot(), local_pre.snapshot()):
        result = pre_hook(self, args, kwargs)
        if result is None:
            continue
        if isinstance(result, tuple) and len(result) == 2:
            args, kwargs = result
        else:
            raise RuntimeError(
                f"{func} must return None or a tuple of (new_args, new_kwargs), but got "
                f"{result}."
            )
    return args, kwargs


def _use_grad_for_differentiable(func: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``step`` with grad mode set to ``defaults["differentiable"]`` (always off here).

    Mirrors: ``torch.optim.optimizer._use_grad_for_differentiable``.
    """

    @functools.wraps(func)
    def _use_grad(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        prev = STATE.grad_enabled
        set_grad_mode(bool(self.defaults["differentiable"]))
        try:
            return func(self, *args, **kwargs)
        finally:
            set_grad_mode(prev)

    return _use_grad


def _get_scalar_dtype() -> Any:
    """NumPy dtype of ``state["step"]``: float64 under a float64 default dtype, else float32."""
    return np.float64 if GLOBAL.default_dtype.name == "float64" else np.float32


def _new_step(value: float = 0.0) -> Tensor:
    """A ``state["step"]``: a 0-d CPU tensor holding `value` (torch keeps it a tensor)."""
    return Tensor._make(np.asarray(value, dtype=_get_scalar_dtype()))


def _tensorize_steps(opt: Optimizer, group: dict) -> None:
    """Old state dicts may hold ``step`` as a number; torch converts it to a 0-d tensor."""
    for p in group["params"]:
        p_state = opt.state.get(p, [])
        if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
            p_state["step"] = _new_step(float(p_state["step"]))


def _zeros_like(p: Tensor) -> Tensor:
    """A new state tensor of zeros shaped like `p`, in `p`'s array namespace."""
    return Tensor._make(_backend.namespace_of(p._data).zeros_like(p._data))


def _arr(t: Tensor) -> Any:
    """`t`'s array, a 0-d one viewed as shape ``(1,)``.

    NumPy arithmetic on 0-d arrays returns scalars, which cannot be updated in place; the
    ``(1,)`` view keeps every intermediate an array and still writes through to `t`. A complex
    tensor is viewed as real (real, imaginary) pairs, as PyTorch's optimizers do
    (``view_as_real``): its parts are updated as independent real parameters.
    """
    a = t._data
    if a.dtype.kind == "c":
        return view_as_real_array(a)
    return a if a.ndim else a.reshape(1)


def _as_param_array(arr: Any, param: Tensor) -> Any:
    """An array computed from `_arr` views, in `param`'s shape (and complex dtype)."""
    if param._data.dtype.kind == "c":
        return view_as_complex_array(np.ascontiguousarray(arr)).reshape(param._data.shape)
    return arr.reshape(param._data.shape)


def _bump(t: Tensor) -> None:
    """Record an in-place write to `t` (NOTE [In-place optimizer math])."""
    note_write(t)


def _reject_unsupported(differentiable: bool, fused: Any, capturable: bool = False) -> None:
    """hookgrad optimizers run the single-tensor path under ``no_grad`` only."""
    for name, value in (("differentiable", differentiable), ("fused", fused),
                        ("capturable", capturable)):
        if value:
            raise NotImplementedError(f"hookgrad optimizers do not support {name}=True")


def _check_lr(lr: Any) -> None:
    """The learning-rate checks that open Adam's, RMSprop's and Adagrad's constructors."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not lr >= 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")


def _closure_loss(closure: Callable[[], Any]) -> Any:
    """Run a ``step`` closure with grad enabled and return its loss."""
    with enable_grad():
        return closure()


def _params_with_grad(group: dict[str, Any]) -> tuple[list[Tensor], list[Tensor]]:
    """The params of `group` that have a gradient, in group order, and those gradients."""
    params: list[Tensor] = []
    grads: list[Tensor] = []
    for p in group["params"]:
        grad = p._grad
        if grad is not None:
            params.append(p)
            grads.append(grad)
    return params, grads


class Optimizer:
    """Base class for all optimizers.

    Holds ``param_groups`` (a list of dicts, each with ``"params"`` and its hyper-parameters,
    missing ones filled from ``defaults``) and ``state`` (a ``defaultdict(dict)`` keyed by
    parameter). Subclasses implement ``step``; it is wrapped once per class for step hooks (NOTE
    [Optimizer step hooks]).

    Args:
        params: an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts defining
            parameter groups.
        defaults: default hyper-parameter values for groups that do not specify them.

    Raises:
        TypeError: `params` is a tensor, a set, or holds non-tensors.
        ValueError: `params` is empty, or a parameter appears in two groups.

    Mirrors: ``torch.optim.Optimizer`` (single-tensor path; no ``foreach``/``fused`` kernels).
    """

    _in_hooked_step = False  # see NOTE [Optimizer step hooks]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = _hook_step(step)  # type: ignore[method-assign]

    @staticmethod
    def _group_tensors_by_device_and_dtype(tensorlistlist: Any, with_indices: bool = False
                                           ) -> dict:
        """Mirrors: ``torch.optim.Optimizer._group_tensors_by_device_and_dtype``."""
        return _foreach_utils._group_tensors_by_device_and_dtype(tensorlistlist, with_indices)

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: HookRegistry = HookRegistry()
        self._optimizer_step_post_hooks: HookRegistry = HookRegistry()
        self._optimizer_state_dict_pre_hooks: HookRegistry = HookRegistry()
        self._optimizer_state_dict_post_hooks: HookRegistry = HookRegistry()
        self._optimizer_load_state_dict_pre_hooks: HookRegistry = HookRegistry()
        self._optimizer_load_state_dict_post_hooks: HookRegistry = HookRegistry()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                "dicts, but got " + typename(params)
            )
        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    # ------------------------------------------------------------------ pickling / repr
    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    # ``(key, value)`` pairs a group unpickled from an older PyTorch may lack (each subclass
    # lists its own, as torch's ``__setstate__`` methods do); with `_TENSOR_STEPS`, numeric
    # ``step`` values of such state are turned into 0-d tensors.
    _GROUP_DEFAULTS: tuple = ()
    _TENSOR_STEPS = False

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in _HOOK_ATTRS:
            if name not in self.__dict__:
                setattr(self, name, HookRegistry())
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:
            for key, value in self._GROUP_DEFAULTS:
                group.setdefault(key, value)
            if self._TENSOR_STEPS:
                _tensorize_steps(self, group)

    def __repr__(self) -> str:
        out = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    out += f"    {key}: {group[key]}\n"
        return out + ")"

    # ------------------------------------------------------------------ step hooks
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform one optimization step (implemented by subclasses).

        Args:
            closure: re-evaluates the model and returns the loss (optional for most optimizers).

        Returns:
            The closure's loss, or ``None``.

        Mirrors: ``torch.optim.Optimizer.step``.
        """
        raise NotImplementedError

    def register_step_pre_hook(self, hook: OptimizerPreHook) -> RemovableHandle:
        """Register a hook run before this optimizer's ``step``.

        The hook is called as ``hook(optimizer, args, kwargs) -> None | (new_args, new_kwargs)``,
        after the global pre-hooks. ``args`` includes the optimizer itself as ``args[0]``.
        Returning a 2-tuple replaces the arguments seen by later hooks and by ``step``; any
        other non-``None`` value raises ``RuntimeError``. There is no ``prepend``.

        Args:
            hook: the callable to register.

        Returns:
            A handle whose ``remove()`` unregisters the hook.

        Mirrors: ``torch.optim.Optimizer.register_step_pre_hook``.
        """
        return self._optimizer_step_pre_hooks.add(hook)

    def register_step_post_hook(self, hook: OptimizerPostHook) -> RemovableHandle:
        """Register a hook run after this optimizer's ``step``.

        The hook is called as ``hook(optimizer, args, kwargs) -> None``, before the global
        post-hooks; its return value is ignored.

        Args:
            hook: the callable to register.

        Returns:
            A handle whose ``remove()`` unregisters the hook.

        Mirrors: ``torch.optim.Optimizer.register_step_post_hook``.
        """
        return self._optimizer_step_post_hooks.add(hook)

    # ------------------------------------------------------------------ state dict hooks
    def register_state_dict_pre_hook(
        self, hook: Callable[[Optimizer], None], prepend: bool = False
    ) -> RemovableHandle:
        """Register a hook run at the start of `state_dict`.

        The hook is called as ``hook(optimizer) -> None``; its return value is ignored.

        Args:
            hook: the callable to register.
            prepend: run it before the already registered state-dict pre-hooks.

        Returns:
            A handle whose ``remove()`` unregisters the hook.

        Mirrors: ``torch.optim.Optimizer.register_state_dict_pre_hook``.
        """
        return self._optimizer_state_dict_pre_hooks.add(hook, prepend=prepend)

    def register_state_dict_post_hook(
        self, hook: Callable[[Optimizer, StateDict], StateDict | None], prepend: bool = False
    ) -> RemovableHandle:
        """Register a hook run at the end of `state_dict`.

        The hook is called as ``hook(optimizer, state_dict) -> None | new_state_dict``. It may
        edit the dict in place; a non-``None`` return replaces the dict seen by later
        post-hooks and returned to the caller.

        Args:
            hook: the callable to register.
            prepend: run it before the already registered state-dict post-hooks.

        Returns:
            A handle whose ``remove()`` unregisters the hook.

        Mirrors: ``torch.optim.Optimizer.register_state_dict_post_hook``.
        """
        return self._optimizer_state_dict_post_hooks.add(hook, prepend=prepend)

    def register_load_state_dict_pre_hook(
        self, hook: Callable[[Optimizer, StateDict], StateDict | None], prepend: bool = False
    ) -> RemovableHandle:
        """Register a hook run at the start of `load_state_dict`, before any validation.

        The hook is called as ``hook(optimizer, state_dict) -> None | new_state_dict`` with a
        shallow copy of the caller's dict; a non-``None`` return replaces the dict to load.

        Args:
            hook: the callable to register.
            prepend: run it before the already registered load-state-dict pre-hooks.

        Returns:
            A handle whose ``remove()`` unregisters the hook.

        Mirrors: ``torch.optim.Optimizer.register_load_state_dict_pre_hook``.
        """
        return self._optimizer_load_state_dict_pre_hooks.add(hook, prepend=prepend)

    def register_load_state_dict_post_hook(
        self, hook: Callable[[Optimizer], None], prepend: bool = False
    ) -> RemovableHandle:
        """Register a hook run after `load_state_dict` has loaded the state.

        The hook is called as ``hook(optimizer) -> None``; its return value is ignored.

        Args:
            hook: the callable to register.
            prepend: run it before the already registered load-state-dict post-hooks.

        Returns:
            A handle whose ``remove()`` unregisters the hook.

        Mirrors: ``torch.optim.Optimizer.register_load_state_dict_post_hook``.
        """
        return self._optimizer_load_state_dict_post_hooks.add(hook, prepend=prepend)

    # ------------------------------------------------------------------ state dicts
    def state_dict(self) -> StateDict:
        """Return the optimizer state: ``{"state": ..., "param_groups": ...}``.

        Parameters are replaced by integer ids (their position across all groups, in order);
        ``state`` maps those ids to the per-parameter state dicts (the tensors are shared, not
        copied, as in torch).

        Returns:
            The state dict, possibly replaced by a state-dict post-hook.

        Mirrors: ``torch.optim.Optimizer.state_dict``.
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.snapshot():
            pre_hook(self)
        param_mappings: dict[int, int] = {}
        start_index = 0

        def pack_group(group: dict[str, Any]) -> dict[str, Any]:
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start_index):
                param_mappings.setdefault(id(p), i)
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {
            (param_mappings[id(k)] if isinstance(k, Tensor) else k): v
            for k, v in self.state.items()
        }
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.snapshot():
            hook_result = post_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result
        return state_dict

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Load optimizer state produced by `state_dict`.

        Saved ids are matched to the current parameters by position. Floating-point state
        tensors are cast to their parameter's dtype (``"step"`` is kept as is).

        Args:
            state_dict: an optimizer state dict.

        Raises:
            ValueError: the number of groups or of parameters per group differs.

        Mirrors: ``torch.optim.Optimizer.load_state_dict``.
        """
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.snapshot():
            hook_result = pre_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        pairs = zip(groups, saved_groups, strict=True)
        if any(len(g["params"]) != len(s["params"]) for g, s in pairs):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of "
                "optimizer's group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups), strict=True,
            )
        )
        state: defaultdict[Any, Any] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast_state(param, v)
            else:
                state[k] = v
        for group, new_group in zip(groups, saved_groups, strict=True):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
        self.__setstate__({"state": state, "param_groups": saved_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.snapshot():
            post_hook(self)

    # ------------------------------------------------------------------ per-parameter state
    def _params_with_state(
        self, group: dict[str, Any]
    ) -> tuple[list[Tensor], list[Tensor], list[dict[str, Any]]]:
        """`_params_with_grad` plus each param's state dict, filled by `_init_state` before the
        param's first step."""
        params: list[Tensor] = []
        grads: list[Tensor] = []
        states: list[dict[str, Any]] = []
        for p in group["params"]:
            grad = p._grad
            if grad is not None:
                state = self.state[p]
                if len(state) == 0:
                    self._init_state(state, p, group)
                params.append(p)
                grads.append(grad)
                states.append(state)
        return params, grads, states

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        """Fill the empty `state` of `p` (for optimizers that use `_params_with_state`)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ groups and grads
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized tensors.

        Args:
            set_to_none: set ``.grad`` to ``None`` (default) instead of filling it with zeros.

        Mirrors: ``torch.optim.Optimizer.zero_grad``.
        """
        for group in self.param_groups:
            for p in group["params"]:
                grad = p._grad
                if grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                    continue
                if grad._grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad._data[...] = 0
                _bump(grad)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group (a dict with ``"params"`` and optional hyper-parameters).

        Args:
            param_group: the group; missing hyper-parameters are filled from ``defaults``.

        Raises:
            TypeError: not a dict, params in a set, or a non-tensor param.
            ValueError: a non-leaf param, a missing required option, names on some params
                only, or a param already in another group.

        Mirrors: ``torch.optim.Optimizer.add_param_group``.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        _extract_params(param_group)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + typename(param)
                )
            if not self.defaults.get("differentiable", None) and not (
                param.is_leaf or param.retains_grad
            ):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, "
                "this will cause an error; see github.com/pytorch/pytorch/issues/40967 for more "
                "information",
                stacklevel=3,
            )
        param_set: set[Tensor] = set()
        for group in self.param_groups:
            param_set.update(set(group["params"]))
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if not param_set.isdisjoint(set(param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)


Optimizer.step = _hook_step(Optimizer.step)  # type: ignore[method-assign]
Optimizer.OptimizerPreHook = OptimizerPreHook  # type: ignore[attr-defined]  (class aliases there)
Optimizer.OptimizerPostHook = OptimizerPostHook  # type: ignore[attr-defined]


def _profile_hook_step(func: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap `func` as PyTorch's ``Optimizer.profile_hook_step`` does: a profiler range named
    ``Optimizer.step#<Class>.step`` around the step pre-hooks, the step and the post-hooks.

    Mirrors: ``torch.optim.Optimizer.profile_hook_step``.
    """
    from hookgrad.autograd.profiler import record_function

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        self = args[0]
        with record_function(f"Optimizer.step#{self.__class__.__name__}.step"):
            args, kwargs = _run_step_pre_hooks(func, self, args, kwargs)
            out = func(*args, **kwargs)
            for post_hook in chain(self._optimizer_step_post_hooks.snapshot(),
                                   _global_optimizer_post_hooks.snapshot()):
                post_hook(self, args, kwargs)
            return out

    return wrapper


Optimizer.profile_hook_step = staticmethod(_profile_hook_step)  # type: ignore[attr-defined]

_HOOK_ATTRS = (
    "_optimizer_step_pre_hooks",
    "_optimizer_step_post_hooks",
    "_optimizer_state_dict_pre_hooks",
    "_optimizer_state_dict_post_hooks",
    "_optimizer_load_state_dict_pre_hooks",
    "_optimizer_load_state_dict_post_hooks",
)


def _extract_params(param_group: dict[str, Any]) -> None:
    """Normalise ``param_group["params"]`` to a list; split ``(name, tensor)`` pairs."""
    params = param_group["params"]
    if isinstance(params, Tensor):
        params = [params]
    elif isinstance(params, set):
        raise TypeError(
            "optimizer parameters need to be organized in ordered collections, but the "
            "ordering of tensors in sets will change between runs. Please use a list instead."
        )
    else:
        params = list(params)
    tensors, names = [], []
    for param in params:
        if isinstance(param, tuple):
            names.append(param[0])
            tensors.append(param[1])
        else:
            tensors.append(param)
    param_group["params"] = tensors
    if names:
        if len(names) != len(tensors):
            raise ValueError(
                "all optimizer params should be with/without names. Some param names are missing"
            )
        param_group["param_names"] = names


def _cast_state(param: Tensor, value: Any, key: Any = None) -> Any:
    """Rebuild loaded state for `param`, like torch's ``value.to(dtype=param.dtype, device=...)``.

    Containers are copied; a tensor is reused when it already has the parameter's device and
    (floating) dtype, else converted. ``"step"`` is never cast.
    """
    if isinstance(value, Tensor):
        if key == "step":
            return value
        arr = value._data
        xp = _backend.namespace_of(param._data)
        same_device = _backend.namespace_of(arr) is xp
        if same_device and (arr.dtype == param._data.dtype or param._data.dtype.kind != "f"):
            return value
        dtype = param._data.dtype if param._data.dtype.kind == "f" else arr.dtype
        if not same_device:
            arr = _backend.to_numpy(arr)
        return Tensor._make(xp.asarray(arr, dtype=dtype))
    if isinstance(value, dict):
        return {k: _cast_state(param, v, key=k) for k, v in value.items()}
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        return type(value)(_cast_state(param, v) for v in value)
    return value
