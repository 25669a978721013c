"""Which ``autograd.Function``s ``vmap`` refuses, as PyTorch's ``custom_function_call`` does.

Registered in `hookgrad.autograd.function.TRANSFORM_CHECKS` (that layer cannot import this
one): a Function applied to a vmap-batched tensor must define ``setup_context``, and either a
``vmap`` staticmethod or ``generate_vmap_rule = True``.
"""

from __future__ import annotations

from typing import Any

from hookgrad._functorch._batched import is_batched
from hookgrad.autograd import function as _function

_DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


def check_vmappable(cls: type, args: tuple) -> None:
    """PyTorch's RuntimeError when `cls` is applied to a batched tensor it cannot vmap over."""
    if not any(is_batched(a) for a in args):
        return
    if not _function._is_setup_context_defined(cls.setup_context):  # type: ignore[attr-defined]
        raise RuntimeError("In order to use an autograd.Function with functorch transforms "
                           "(vmap, grad, jvp, jacrev, ...), it must override the setup_context "
                           f"staticmethod. {_DOCS}")
    own_vmap = cls.vmap is not _function.Function.vmap  # type: ignore[attr-defined]
    if not getattr(cls, "generate_vmap_rule", False) and not own_vmap:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap "
                           "support. Please override and implement the vmap staticmethod or set "
                           f"generate_vmap_rule=True. {_DOCS}")


def _register(check: Any) -> None:
    if check not in _function.TRANSFORM_CHECKS:
        _function.TRANSFORM_CHECKS.append(check)


_register(check_vmappable)
