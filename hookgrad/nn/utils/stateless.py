"""Mirrors: ``torch.nn.utils.stateless`` (``functional_call``, deprecated for ``torch.func``)."""

from __future__ import annotations

import warnings
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad._functorch.functional_call import reparametrized
from hookgrad.func import functional_call as _functional_call
from hookgrad.nn.utils._named_member_accessor import NamedMemberAccessor

__all__ = ["functional_call", "NamedMemberAccessor", "Tensor"]


def functional_call(module: Any, parameters_and_buffers: Any, args: Any = None,
                    kwargs: Any = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """Call `module` with the given tensors in place of its own.

    Mirrors: ``torch.nn.utils.stateless.functional_call``.
    """
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)


def _reparametrize_module(module: Any, parameters_and_buffers: dict, tie_weights: bool = False,
                          strict: bool = False, stack_weights: bool = False) -> Any:
    """Context manager: `module`'s named parameters and buffers are the given tensors inside.

    Mirrors: ``torch.nn.utils.stateless._reparametrize_module``.
    """
    return reparametrized(module, parameters_and_buffers, tie_weights=tie_weights,
                          strict=strict)
