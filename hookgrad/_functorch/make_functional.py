"""functorch's ``make_functional`` family: a module as a function of its parameters (and buffers).

Mirrors: ``torch._functorch.make_functional`` (exposed as ``functorch.make_functional``,
``make_functional_with_buffers``, ``combine_state_for_ensemble``, ``FunctionalModule``; torchopt
and older meta-learning code import them). The model is deep-copied; calling the functional
module puts the given tensors in place of the copy's parameters (and buffers) for the call and
then puts the previous ones back. Tied tensors (one tensor under several names) are one entry.
Unlike PyTorch, the copy keeps its own tensors between calls rather than meta placeholders.

Example:
    >>> import hookgrad
    >>> from hookgrad._functorch.make_functional import make_functional
    >>> fmodel, params = make_functional(hookgrad.nn.Linear(2, 1))
    >>> [tuple(p.shape) for p in params]
    [(1, 2), (1,)]
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from hookgrad._functional.shape import stack
from hookgrad._tensor import Tensor
from hookgrad.nn.modules.module import Module
from hookgrad.nn.utils._named_member_accessor import NamedMemberAccessor

__all__ = ["FunctionalModule", "FunctionalModuleWithBuffers", "make_functional",
           "make_functional_with_buffers", "combine_state_for_ensemble"]


def _extract(named: Callable[..., Any]) -> tuple[tuple, tuple[str, ...], dict[str, list[str]]]:
    """Unique tensors, their first names, and first name -> every name (tied weights)."""
    first: dict[int, str] = {}
    tensors: list[Tensor] = []
    names_map: dict[str, list[str]] = {}
    for name, t in named(remove_duplicate=False):
        if id(t) not in first:
            first[id(t)] = name
            tensors.append(t)
            names_map[name] = []
        names_map[first[id(t)]].append(name)
    return tuple(tensors), tuple(names_map), names_map


def _swap_state(mod: Module, names_map: dict[str, list[str]], elems: Iterable[Tensor]) -> list:
    """Put `elems` under each entry's names; return what the first names held."""
    accessor = NamedMemberAccessor(mod)
    old = []
    for names, elem in zip(names_map.values(), elems):
        old.append(accessor.swap_tensor(names[0], elem))
        for name in names[1:]:
            accessor.set_tensor(name, elem)
    return old


class FunctionalModule(Module):
    """``fmodel(params, *args)``: the model run with `params`. Mirrors: ``FunctionalModule``."""

    def __init__(self, stateless_model: Module, param_names: tuple[str, ...],
                 names_map: dict[str, list[str]]) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.names_map = names_map

    @staticmethod
    def _create_from(model: Module, disable_autograd_tracking: bool = False) -> tuple:
        model_copy = copy.deepcopy(model)
        params, names, names_map = _extract(model_copy.named_parameters)
        if disable_autograd_tracking:
            for p in params:
                p.requires_grad_(False)
        return FunctionalModule(model_copy, names, names_map), params

    def forward(self, params: Iterable[Tensor], *args: Any, **kwargs: Any) -> Any:
        old = _swap_state(self.stateless_model, self.names_map, params)
        try:
            return self.stateless_model(*args, **kwargs)
        finally:
            _swap_state(self.stateless_model, self.names_map, old)


class FunctionalModuleWithBuffers(Module):
    """``fmodel(params, buffers, *args)``. Mirrors: ``FunctionalModuleWithBuffers``."""

    def __init__(self, stateless_model: Module, param_names: tuple[str, ...],
                 buffer_names: tuple[str, ...], param_names_map: dict[str, list[str]],
                 buffer_names_map: dict[str, list[str]]) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names
        self.all_names_map = dict(param_names_map)
        self.all_names_map.update(buffer_names_map)

    @staticmethod
    def _create_from(model: Module, disable_autograd_tracking: bool = False) -> tuple:
        model_copy = copy.deepcopy(model)
        params, pnames, pmap = _extract(model_copy.named_parameters)
        buffers, bnames, bmap = _extract(model_copy.named_buffers)
        if disable_autograd_tracking:
            for p in params:
                p.requires_grad_(False)
        return (FunctionalModuleWithBuffers(model_copy, pnames, bnames, pmap, bmap),
                params, buffers)

    def forward(self, params: Iterable[Tensor], buffers: Iterable[Tensor], *args: Any,
                **kwargs: Any) -> Any:
        old = _swap_state(self.stateless_model, self.all_names_map,
                          tuple(params) + tuple(buffers))
        try:
            return self.stateless_model(*args, **kwargs)
        finally:
            _swap_state(self.stateless_model, self.all_names_map, old)


def make_functional(model: Module, disable_autograd_tracking: bool = False) -> tuple:
    """``(fmodel, params)`` of a buffer-free model. Mirrors: ``functorch.make_functional``."""
    if len(list(model.buffers())) > 0:
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    return FunctionalModule._create_from(model, disable_autograd_tracking)


def make_functional_with_buffers(model: Module, disable_autograd_tracking: bool = False) -> tuple:
    """``(fmodel, params, buffers)``. Mirrors: ``functorch.make_functional_with_buffers``."""
    return FunctionalModuleWithBuffers._create_from(model, disable_autograd_tracking)


def combine_state_for_ensemble(models: Sequence[Module]) -> tuple:
    """One functional model and each parameter/buffer stacked over `models` (for vmap).

    Mirrors: ``functorch.combine_state_for_ensemble``.
    """
    if len(models) == 0:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same "
                           "class.")
    funcs, params, buffers = zip(*[make_functional_with_buffers(m) for m in models])
    return (funcs[0], tuple(stack(s).detach() for s in zip(*params)),
            tuple(stack(s).detach() for s in zip(*buffers)))
