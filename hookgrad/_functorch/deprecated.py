"""The ``functorch.*`` transforms: ``torch.func`` under their old names, with PyTorch's warning.

Mirrors: ``torch._functorch.deprecated`` (PyTorch's ``functorch`` package imports its names from
here; torchopt imports ``functorch``). Each call warns ``FutureWarning`` naming the
``torch.func`` replacement, then runs it.

Example:
    >>> import warnings
    >>> import hookgrad
    >>> from hookgrad._functorch import deprecated
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     deprecated.grad(lambda x: (x * x).sum())(hookgrad.tensor([3.0])).tolist()
    [6.0]
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from hookgrad._functorch import eager_transforms as _impl
from hookgrad._functorch import make_functional as _nn_impl
from hookgrad._functorch.vmap import vmap as _vmap

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
           "functionalize", "make_functional", "make_functional_with_buffers",
           "combine_state_for_ensemble", "get_warning", "warn_deprecated"]


def get_warning(api: str, new_api: str | None = None, replace_newlines: bool = False) -> str:
    """PyTorch's deprecation text for ``functorch.<api>``. Mirrors: ``deprecated.get_warning``."""
    new_api = new_api or f"torch.func.{api}"
    text = (f"We've integrated functorch into PyTorch. As the final step of the \n"
            f"integration, `functorch.{api}` is deprecated as of PyTorch \n"
            f"2.0 and will be deleted in a future version of PyTorch >= 2.3. \n"
            f"Please use `{new_api}` instead; see the PyTorch 2.0 release notes \n"
            f"and/or the `torch.func` migration guide for more details \n"
            f"https://pytorch.org/docs/main/func.migrating.html")
    return text.replace("\n", "") if replace_newlines else text


def warn_deprecated(api: str, new_api: str | None = None) -> None:
    """Warn at the caller of the ``functorch`` function. Mirrors: ``deprecated.warn_deprecated``."""
    warnings.warn(get_warning(api, new_api, replace_newlines=True), FutureWarning, stacklevel=3)


def _forward(name: str, target: Callable[..., Any], new_api: str | None = None) -> Callable:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        warn_deprecated(name, new_api)
        return target(*args, **kwargs)

    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = f"``functorch.{name}``: warns, then runs ``{new_api or 'torch.func.' + name}``."
    return wrapper


vmap = _forward("vmap", _vmap)
grad = _forward("grad", _impl.grad)
grad_and_value = _forward("grad_and_value", _impl.grad_and_value)
vjp = _forward("vjp", _impl.vjp)
jvp = _forward("jvp", _impl.jvp)
jacrev = _forward("jacrev", _impl.jacrev)
jacfwd = _forward("jacfwd", _impl.jacfwd)
hessian = _forward("hessian", _impl.hessian)
functionalize = _forward("functionalize", _impl.functionalize)
make_functional = _forward("make_functional", _nn_impl.make_functional,
                           "torch.func.functional_call")
make_functional_with_buffers = _forward("make_functional_with_buffers",
                                        _nn_impl.make_functional_with_buffers,
                                        "torch.func.functional_call")
combine_state_for_ensemble = _forward("combine_state_for_ensemble",
                                      _nn_impl.combine_state_for_ensemble,
                                      "torch.func.stack_module_state")
