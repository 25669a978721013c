"""`Module`: the base class of every layer, with PyTorch's registration, traversal and hooks.

Layer 6. `Module` keeps thin delegating methods; the logic lives in `_call.py` (the hooked call
path), `_backward_hook.py` (full and legacy backward hooks), `_global_hooks.py` (global
registries), `_state_dict.py` and `_registration.py`.

NOTE [Module hook storage]
Every hook table PyTorch keeps on a module (``_forward_pre_hooks``, ``_forward_hooks``,
``_backward_pre_hooks``, ``_backward_hooks``, ``_state_dict_pre_hooks``, ``_state_dict_hooks``,
``_load_state_dict_pre_hooks``, ``_load_state_dict_post_hooks``) is a `HookRegistry` under the
same attribute name, so code reading them as ``OrderedDict[id, fn]`` keeps working. PyTorch's
side tables ``_forward_pre_hooks_with_kwargs``, ``_forward_hooks_with_kwargs`` and
``_forward_hooks_always_called`` are read-only views of the registries' per-hook flags.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from hookgrad._tensor import Tensor
from hookgrad.nn.modules import _registration, _state_dict
from hookgrad.nn.modules._backward_hook import _WrappedHook  # noqa: F401 - torch exposes it here
from hookgrad.nn.modules._call import call_with_hooks
from hookgrad.nn.modules._global_hooks import (
    GLOBAL_MODE,
    _global_backward_hooks,
    _global_backward_pre_hooks,
    _global_buffer_registration_hooks,  # noqa: F401 - part of torch.nn.modules.module
    _global_forward_hooks,
    _global_forward_pre_hooks,
    _global_module_registration_hooks,  # noqa: F401 - part of torch.nn.modules.module
    _global_parameter_registration_hooks,  # noqa: F401 - part of torch.nn.modules.module
    register_module_backward_hook,
    register_module_buffer_registration_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
    register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)
from hookgrad.nn.modules._state_dict import EXTRA_STATE_KEY_SUFFIX as _EXTRA_STATE_KEY_SUFFIX
from hookgrad.nn.modules._state_dict import _IncompatibleKeys
from hookgrad.nn.parameter import Parameter
from hookgrad.utils.hooks import HookRegistry, RemovableHandle

T_destination = TypeVar("T_destination", bound=dict)

__all__ = [
    "Module",
    "register_module_forward_pre_hook",
    "register_module_forward_hook",
    "register_module_backward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_buffer_registration_hook",
    "register_module_module_registration_hook",
    "register_module_parameter_registration_hook",
]

T = TypeVar("T", bound="Module")

_REGISTRIES = (
    "_backward_pre_hooks", "_backward_hooks", "_forward_hooks", "_forward_pre_hooks",
    "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
    "_load_state_dict_post_hooks",
)
_MIXED_LOCAL = (
    "Cannot use both regular backward hooks and full backward hooks on a single Module. "
    "Please use only one of them."
)


# Dependency inversion for `Module.compile`: `hookgrad.compile` (a higher layer) puts its
# module compiler here at import.
MODULE_COMPILER: list[Callable[..., Any]] = []


def __getattr__(name: str) -> Any:
    # PyTorch exposes the sticky global mode as a module global; read it live.
    if name == "_global_is_full_backward_hook":
        return GLOBAL_MODE.is_full_backward_hook
    if name == "_global_forward_hooks_with_kwargs":
        return _global_forward_hooks.ids_with("with_kwargs")
    if name == "_global_forward_hooks_always_called":  # the entry flag is ``always_call``
        return _global_forward_hooks.ids_with("always_call")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _has_any_global_hook() -> bool:
    """Whether a global forward/backward (pre-)hook is registered.

    Mirrors: ``torch.nn.modules.module._has_any_global_hook``.
    """
    return bool(_global_forward_pre_hooks or _global_forward_hooks
                or _global_backward_pre_hooks or _global_backward_hooks)


_grad_t = Tensor | tuple  # PyTorch's alias for what backward hooks receive (annotations)


def _addindent(s_: str, num_spaces: int) -> str:
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    s = [(num_spaces * " ") + line if line.strip() else "" for line in s]
    return first + "\n" + "\n".join(s)


def _forward_unimplemented(self: Module, *input: Any) -> None:
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function'
    )


class Module:
    """Base class for all neural network modules.

    Submodules, parameters and buffers assigned as attributes are registered automatically;
    calling the module runs ``forward`` surrounded by the module's hooks (spec §7.2).

    Example:
        >>> import hookgrad as torch
        >>> class Net(torch.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.w = torch.nn.Parameter(torch.ones(2))
        ...     def forward(self, x):
        ...         return x * self.w
        >>> Net()(torch.ones(2)).tolist()
        [1.0, 1.0]

    Mirrors: ``torch.nn.Module``.
    """

    dump_patches: bool = False
    _version: int = 1
    call_super_init: bool = False
    training: bool

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        from hookgrad.nn.modules._conversion import with_factory_device

        with_factory_device(cls)  # ``Linear(..., device="meta")``: see its docstring

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                f"'{next(iter(kwargs))}'"
            )
        if self.call_super_init is False and bool(args):
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        for name in _REGISTRIES:
            d[name] = HookRegistry()
        d["_is_full_backward_hook"] = None
        d["_modules"] = {}
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward: Callable[..., Any] = _forward_unimplemented

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        compiled = self.__dict__.get("_compiled_call_impl")
        if compiled is not None:  # set by `compile` (spec compile.md §12)
            return compiled(self, *args, **kwargs)
        return self._call_uncompiled(*args, **kwargs)

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Compile this module's call path in place with `hookgrad.compile`'s arguments.

        Global module hooks then fire once per call (no wrapper module is involved).

        Mirrors: ``torch.nn.Module.compile``.
        """
        if not MODULE_COMPILER:
            raise RuntimeError("hookgrad.compile is not available")
        self.__dict__["_compiled_call_impl"] = MODULE_COMPILER[0](self, *args, **kwargs)

    def _call_uncompiled(self, *args: Any, **kwargs: Any) -> Any:
        if (
            self._forward_pre_hooks
            or self._forward_hooks
            or self._backward_pre_hooks
            or self._backward_hooks
            or _global_forward_pre_hooks
            or _global_forward_hooks
            or _global_backward_pre_hooks
            or _global_backward_hooks
        ):
            return call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        return Module.__call__(self, *args, **kwargs)

    _wrapped_call_impl = _call_impl

    # ------------------------------------------------------------------ registration
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer (state that is not a parameter, e.g. running statistics).

        Args:
            name: attribute name of the buffer.
            tensor: the buffer, or ``None`` (skipped by conversions and ``state_dict``).
            persistent: whether the buffer is part of ``state_dict``.

        Raises:
            KeyError: for an empty or dotted name, or one already used by another attribute.
            TypeError: if `tensor` is neither a Tensor nor ``None``.

        Mirrors: ``torch.nn.Module.register_buffer``.
        """
        _registration.register_buffer(self, name, tensor, persistent)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter, accessible as an attribute.

        Args:
            name: attribute name of the parameter.
            param: a `Parameter` or ``None``.

        Raises:
            KeyError: for an empty or dotted name, or one already used by another attribute.
            TypeError: if `param` is neither a Parameter nor ``None``.
            ValueError: if `param` is not a leaf.

        Mirrors: ``torch.nn.Module.register_parameter``.
        """
        _registration.register_parameter(self, name, param)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module, accessible as an attribute.

        Mirrors: ``torch.nn.Module.add_module``.
        """
        _registration.add_module(self, name, module)

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias for `add_module`. Mirrors: ``torch.nn.Module.register_module``."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path `target` (``""`` is the module itself).

        Raises:
            AttributeError: if a path component is missing or not a Module.

        Mirrors: ``torch.nn.Module.get_submodule``.
        """
        return _registration.get_submodule(self, target)

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Replace (or, unless `strict`, create) the submodule at dotted path `target`.

        Mirrors: ``torch.nn.Module.set_submodule``.
        """
        _registration.set_submodule(self, target, module, strict)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path `target`.

        Mirrors: ``torch.nn.Module.get_parameter``.
        """
        return _registration.get_parameter(self, target)

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path `target`.

        Mirrors: ``torch.nn.Module.get_buffer``.
        """
        return _registration.get_buffer(self, target)

    def get_extra_state(self) -> Any:
        """Override (with `set_extra_state`) to store extra state in ``state_dict``.

        Mirrors: ``torch.nn.Module.get_extra_state``.
        """
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug."
        )

    def set_extra_state(self, state: Any) -> None:
        """Override (with `get_extra_state`) to restore extra state from ``state_dict``.

        Mirrors: ``torch.nn.Module.set_extra_state``.
        """
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug."
        )

    # ------------------------------------------------------------------ conversions
    def _apply(self: T, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> T:
        return _registration.apply_fn(self, fn, recurse)

    def apply(self: T, fn: Callable[[Module], None]) -> T:
        """Call ``fn(module)`` on every submodule (children first), then on self.

        Mirrors: ``torch.nn.Module.apply``.
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self: T, *args: Any, **kwargs: Any) -> T:
        """Move parameters and buffers to a device and/or floating ones to a dtype.

        Accepts ``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(tensor)`` and the
        keyword forms. Parameters keep their identity.

        Raises:
            TypeError: for a non-floating dtype.
            RuntimeError: for a device that is not available.

        Mirrors: ``torch.nn.Module.to``.
        """
        from hookgrad.nn.modules._conversion import parse_to

        device, dtype = parse_to(args, kwargs)
        fmt = kwargs.get("memory_format")
        if dtype is None and device is None and fmt is None:
            return self

        def convert(t: Tensor) -> Tensor:
            floating = t.is_floating_point() or t.is_complex()
            want = dtype if dtype is not None and floating else None
            if fmt is not None and t.dim() in (4, 5):  # PyTorch converts 4-D and 5-D only
                return t.to(device=device, dtype=want, memory_format=fmt)  # type: ignore
            return t.to(device=device, dtype=want)  # type: ignore[attr-defined]

        return self._apply(convert)

    def float(self: T) -> T:
        """Cast floating-point parameters and buffers to float32. Mirrors: ``Module.float``."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)  # type: ignore

    def double(self: T) -> T:
        """Cast floating-point parameters and buffers to float64. Mirrors: ``Module.double``."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)  # type: ignore

    def half(self: T) -> T:
        """Cast floating-point parameters and buffers to float16. Mirrors: ``Module.half``."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)  # type: ignore

    def bfloat16(self: T) -> T:
        """Cast floating-point parameters and buffers to bfloat16. Mirrors: ``Module.bfloat16``."""
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)  # type: ignore

    def cpu(self: T) -> T:
        """Move parameters and buffers to the CPU. Mirrors: ``torch.nn.Module.cpu``."""
        return self.to("cpu")

    def cuda(self: T, device: Any = None) -> T:
        """Move parameters and buffers to a CUDA device (fails as ``Tensor.cuda`` does here).

        Mirrors: ``torch.nn.Module.cuda``.
        """
        return self._apply(lambda t: t.cuda(device))  # type: ignore[attr-defined]

    def share_memory(self: T) -> T:
        """Move parameters and buffers to shared memory. Mirrors: ``Module.share_memory``."""
        return self._apply(lambda t: t.share_memory_())  # type: ignore[attr-defined]

    def to_empty(self: T, *, device: Any, recurse: bool = True) -> T:
        """Replace parameters and buffers by uninitialised tensors on `device` (same shapes).

        Mirrors: ``torch.nn.Module.to_empty``.
        """
        from hookgrad._functional.creation import empty_like

        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def type(self: T, dst_type: Any) -> T:
        """Cast all parameters and buffers to `dst_type`. Mirrors: ``torch.nn.Module.type``."""
        return self._apply(lambda t: t.type(dst_type))  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ backward hooks
    def register_full_backward_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Register ``hook(module, grad_output) -> None | tuple``, run when the gradients
        w.r.t. the module's outputs are computed.

        ``grad_output`` is a tuple with one entry per output (``None`` for non-Tensor outputs
        and outputs that got no gradient). A returned tuple of the same length replaces
        ``grad_output`` for later hooks, full backward hooks and the module's own backward.
        Hooks are captured at forward time (spec §8.1).

        Args:
            hook: the callable above.
            prepend: run before the module's other backward pre-hooks (still after globals).

        Returns:
            A handle whose ``remove()`` unregisters the hook.

        Mirrors: ``torch.nn.Module.register_full_backward_pre_hook``.
        """
        return self._backward_pre_hooks.add(hook, prepend=prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Register a legacy backward hook (deprecated): ``hook(module, grad_input,
        grad_output) -> None | tuple`` as a node post-hook on the ``grad_fn`` of the module's
        first output, so it sees *that node's* gradients (spec §8.5).

        A returned tuple replaces that node's ``grad_inputs``.

        Raises:
            RuntimeError: if a full backward hook was ever registered on this module.

        Mirrors: ``torch.nn.Module.register_backward_hook``.
        """
        if self._is_full_backward_hook is True:
            raise RuntimeError(_MIXED_LOCAL)
        self._is_full_backward_hook = False
        return self._backward_hooks.add(hook)

    def register_full_backward_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Register ``hook(module, grad_input, grad_output) -> None | tuple``, run when the
        gradients w.r.t. the module's positional inputs are computed.

        ``grad_input`` has one entry per positional argument: the gradient for Tensor
        arguments (a zero tensor for Tensors that do not require grad), ``None`` for others.
        A returned tuple of the same length replaces ``grad_input`` (``None`` entries drop the
        gradient). Hooks are captured at forward time (spec §8.1).

        Args:
            hook: the callable above.
            prepend: run before the module's other full backward hooks (still after globals).

        Returns:
            A handle whose ``remove()`` unregisters the hook.

        Raises:
            RuntimeError: if a legacy backward hook was ever registered on this module.

        Mirrors: ``torch.nn.Module.register_full_backward_hook``.
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError(_MIXED_LOCAL)
        self._is_full_backward_hook = True
        return self._backward_hooks.add(hook, prepend=prepend)

    def _get_backward_hooks(self) -> tuple[list, list]:
        from hookgrad.nn.modules._call import _backward_hooks

        return _backward_hooks(self)

    def _get_backward_pre_hooks(self) -> list:
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    # ------------------------------------------------------------------ forward hooks
    def register_forward_pre_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Register a hook run before ``forward``.

        Called as ``hook(module, args) -> None | new_args``: ``None`` keeps ``args``, a tuple
        replaces them, any other value becomes the single positional argument. With
        ``with_kwargs=True``: ``hook(module, args, kwargs) -> None | (new_args, new_kwargs)``
        (anything else raises ``RuntimeError``).

        Args:
            hook: the callable above.
            prepend: run before the module's other pre-hooks (still after global ones).
            with_kwargs: pass the keyword arguments too.

        Returns:
            A handle whose ``remove()`` unregisters the hook.

        Mirrors: ``torch.nn.Module.register_forward_pre_hook``.
        """
        return self._forward_pre_hooks.add(hook, prepend=prepend, with_kwargs=with_kwargs)

    def register_forward_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Register a hook run after ``forward``.

        Called as ``hook(module, args, output) -> None | new_output`` or, with
        ``with_kwargs=True``, ``hook(module, args, kwargs, output)``; a non-``None`` return
        replaces the output for later hooks and the caller. With ``always_call=True`` the hook
        also runs (once) when the call raises, with ``output`` = the result so far (``None`` if
        ``forward`` failed); its own exception then becomes a ``UserWarning``.

        Args:
            hook: the callable above.
            prepend: run before the module's other forward hooks (still after global ones).
            with_kwargs: pass the keyword arguments given to ``forward``.
            always_call: run even if an exception is raised.

        Returns:
            A handle whose ``remove()`` unregisters the hook and its flags.

        Mirrors: ``torch.nn.Module.register_forward_hook``.
        """
        return self._forward_hooks.add(
            hook, prepend=prepend, with_kwargs=with_kwargs, always_call=always_call
        )

    @property
    def _forward_pre_hooks_with_kwargs(self) -> OrderedDict:
        return self._forward_pre_hooks.ids_with("with_kwargs")

    @property
    def _forward_hooks_with_kwargs(self) -> OrderedDict:
        return self._forward_hooks.ids_with("with_kwargs")

    @property
    def _forward_hooks_always_called(self) -> OrderedDict:
        return self._forward_hooks.ids_with("always_call")

    # ------------------------------------------------------------------ attributes
    def __getstate__(self) -> dict:
        return self.__dict__.copy()

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for name in _REGISTRIES:
            if name not in self.__dict__:
                self.__dict__[name] = HookRegistry()
        self.__dict__.setdefault("_non_persistent_buffers_set", set())
        self.__dict__.setdefault("_is_full_backward_hook", None)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        if "_parameters" in d:
            params = d["_parameters"]
            if name in params:
                return params[name]
        if "_buffers" in d:
            buffers = d["_buffers"]
            if name in buffers:
                return buffers[name]
        if "_modules" in d:
            modules = d["_modules"]
            if name in modules:
                return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        _registration.setattr_impl(self, name, value)

    def __delattr__(self, name: str) -> None:
        _registration.delattr_impl(self, name)

    # ------------------------------------------------------------------ state dict
    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Private post-hook ``hook(module, state_dict, prefix, local_metadata) -> None | dict``.

        A non-``None`` return replaces the state dict (effective only at the root call).

        Raises:
            RuntimeError: if `hook` was registered through the public API before.

        Mirrors: ``torch.nn.Module._register_state_dict_hook``.
        """
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError(
                "Cannot register the same function as the state dict post hook that was "
                "previously registered via register_state_dict_post_hook"
            )
        return self._state_dict_hooks.add(hook)

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Register ``hook(module, state_dict, prefix, local_metadata) -> None``, run after
        this module's entries and its children's were saved.

        Returning anything but ``None`` makes ``state_dict()`` raise ``RuntimeError``.

        Mirrors: ``torch.nn.Module.register_state_dict_post_hook``.
        """
        hook._from_public_api = True  # type: ignore[attr-defined]
        return self._state_dict_hooks.add(hook)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Register ``hook(module, prefix, keep_vars) -> None``, run before this module saves
        anything (its return value is ignored).

        Mirrors: ``torch.nn.Module.register_state_dict_pre_hook``.
        """
        return self._state_dict_pre_hooks.add(hook)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        _state_dict.save_to_state_dict(self, destination, prefix, keep_vars)

    def state_dict(self, *args: Any, destination: Any = None, prefix: str = "",
                   keep_vars: bool = False) -> Any:
        """An ``OrderedDict`` of parameters and persistent buffers (with ``_metadata``).

        Args:
            destination: dict to fill (a new ``OrderedDict`` by default).
            prefix: prepended to every key.
            keep_vars: keep the tensors attached to autograd (default: detached).

        Mirrors: ``torch.nn.Module.state_dict``.
        """
        return _state_dict.state_dict(self, args, destination, prefix, keep_vars)

    def _register_load_state_dict_pre_hook(
        self, hook: Callable[..., Any], with_module: bool = False
    ) -> RemovableHandle:
        """Private load pre-hook ``hook(state_dict, prefix, local_metadata, strict,
        missing_keys, unexpected_keys, error_msgs) -> None`` (with ``with_module=True`` the
        module is passed first, held weakly).

        Mirrors: ``torch.nn.Module._register_load_state_dict_pre_hook``.
        """
        return self._load_state_dict_pre_hooks.add(
            _WrappedHook(hook, self if with_module else None))

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Register ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) -> None``, run before this module loads its entries.

        The hook may edit `state_dict` and the lists in place; ``strict`` is always ``True``
        (PyTorch quirk). The module is held weakly.

        Mirrors: ``torch.nn.Module.register_load_state_dict_pre_hook``.
        """
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Register ``hook(module, incompatible_keys) -> None``, run after this module and its
        children loaded.

        Editing ``incompatible_keys.missing_keys``/``unexpected_keys`` in place changes what
        the strict check sees; returning anything but ``None`` raises ``AssertionError``.

        Mirrors: ``torch.nn.Module.register_load_state_dict_post_hook``.
        """
        return self._load_state_dict_post_hooks.add(hook)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list, unexpected_keys: list,
                              error_msgs: list) -> None:
        _state_dict.load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                                         missing_keys, unexpected_keys, error_msgs)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from `state_dict` into this module and its children.

        Args:
            state_dict: a mapping as returned by `state_dict`.
            strict: raise on missing or unexpected keys.
            assign: assign the given tensors instead of copying into the existing ones.

        Returns:
            ``_IncompatibleKeys(missing_keys, unexpected_keys)``.

        Raises:
            RuntimeError: listing every problem, when `strict` finds mismatched keys or any
                entry fails to load.

        Mirrors: ``torch.nn.Module.load_state_dict``.
        """
        return _state_dict.load_state_dict(self, state_dict, strict, assign)

    # ------------------------------------------------------------------ traversal
    def _named_members(self, get_members_fn: Callable, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        memo = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Iterate over parameters (of submodules too when `recurse`).

        Mirrors: ``torch.nn.Module.parameters``.
        """
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Iterate over ``(dotted name, parameter)``; shared parameters once by default.

        Mirrors: ``torch.nn.Module.named_parameters``.
        """
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Iterate over buffers. Mirrors: ``torch.nn.Module.buffers``."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """Iterate over ``(dotted name, buffer)``. Mirrors: ``torch.nn.Module.named_buffers``."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self) -> Iterator[Module]:
        """Iterate over direct children. Mirrors: ``torch.nn.Module.children``."""
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """Iterate over ``(name, child)``, each child once.

        Mirrors: ``torch.nn.Module.named_children``.
        """
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        """Iterate over all modules, self first. Mirrors: ``torch.nn.Module.modules``."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """Iterate over ``(dotted name, module)`` in pre-order, self first as `prefix`.

        Mirrors: ``torch.nn.Module.named_modules``.
        """
        if memo is None:
            memo = set()
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is None:
                    continue
                sub_prefix = prefix + ("." if prefix else "") + name
                yield from module.named_modules(memo, sub_prefix, remove_duplicate)

    # ------------------------------------------------------------------ modes and grads
    def train(self: T, mode: bool = True) -> T:
        """Set training mode on this module and every submodule.

        Raises:
            ValueError: if `mode` is not a bool.

        Mirrors: ``torch.nn.Module.train``.
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self: T) -> T:
        """``train(False)``. Mirrors: ``torch.nn.Module.eval``."""
        return self.train(False)

    def requires_grad_(self: T, requires_grad: bool = True) -> T:
        """Set ``requires_grad`` of every parameter. Mirrors: ``Module.requires_grad_``."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters (to ``None`` by default, else zeros).

        Mirrors: ``torch.nn.Module.zero_grad``.
        """
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ repr
    def _get_name(self) -> str:
        return self.__class__.__name__

    def extra_repr(self) -> str:
        """Extra text inside the module's repr; override in subclasses.

        Mirrors: ``torch.nn.Module.extra_repr``.
        """
        return ""

    def __repr__(self) -> str:
        extra_lines: list = []
        extra_repr = self.extra_repr()
        if extra_repr:
            extra_lines = extra_repr.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"

    def __dir__(self) -> list:
        keys = (
            dir(self.__class__) + list(self.__dict__) + list(self._parameters)
            + list(self._modules) + list(self._buffers)
        )
        return sorted(k for k in keys if not k[0].isdigit())


_registration._MODULE.append(Module)
Module.T_destination = T_destination  # type: ignore[attr-defined]  (a class attribute in PyTorch)
