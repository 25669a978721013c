"""`LazyModuleMixin`: modules whose parameter shapes are inferred from the first input.

NOTE [Lazy modules]
A lazy module holds `UninitializedParameter`/`UninitializedBuffer` placeholders. Its constructor
registers, before any hook the user can add, a forward pre-hook (with kwargs) that calls
``initialize_parameters(*args, **kwargs)`` on the first call, checks that nothing is left
uninitialised, removes itself and the load hook, and turns the module into ``cls_to_become``
(``LazyLinear`` becomes ``Linear``). A load-state-dict pre-hook materialises placeholders to the
shapes of the loaded tensors, so a lazy module can load a trained state dict directly; saving
keeps placeholders as they are (PyTorch does not detach them).

Mirrors: ``torch.nn.modules.lazy``.
"""

from __future__ import annotations

import itertools
from typing import Any

from hookgrad.autograd.grad_mode import no_grad
from hookgrad.nn.parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixin for modules that infer their parameters' shapes on the first forward call.

    Subclasses implement ``initialize_parameters(*args, **kwargs)`` and may set
    ``cls_to_become`` (the class the module becomes once initialised).

    Mirrors: ``torch.nn.modules.lazy.LazyModuleMixin``.
    """

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self._load_hook = self._register_load_state_dict_pre_hook(  # type: ignore[attr-defined]
            self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(  # type: ignore[attr-defined]
            self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():  # type: ignore[attr-defined]
            if param is not None:
                destination[prefix + name] = (param if is_lazy(param) or keep_vars
                                              else param.detach())
        for name, buf in self._buffers.items():  # type: ignore[attr-defined]
            if buf is not None and name not in self._non_persistent_buffers_set:  # type: ignore[attr-defined]
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict: dict, prefix: str, local_metadata: Any, strict: bool,
                        missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        """Materialise each placeholder whose key is loaded with a real tensor."""
        for name, param in itertools.chain(self._parameters.items(),  # type: ignore[attr-defined]
                                           self._buffers.items()):  # type: ignore[attr-defined]
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                if not is_lazy(state_dict[key]):
                    with no_grad():
                        param.materialize(state_dict[key].shape)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Infer the parameters from the first inputs (subclasses implement it)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer is still a placeholder."""
        return any(is_lazy(t) for t in itertools.chain(
            self._parameters.values(), self._buffers.values()))  # type: ignore[attr-defined]

    def _infer_parameters(self, module: Any, args: tuple, kwargs: dict | None = None) -> None:
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")  # type: ignore[attr-defined]
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self) -> Any:
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize the "
                           "modules")
