"""Names of PyTorch's surface that are other objects of hookgrad under a second path.

PyTorch re-exports some objects where tools look for them: ``torch.autograd.gradcheck`` imports
``vmap``, ``torch.autograd.profiler`` imports ``Future``, ``torch.nn.utils.parametrize`` imports
the opaque-object helpers and the module-conversion flag, ``torch`` holds ``to_dlpack`` (``torch.utils.dlpack.to_dlpack``), ``torch._C`` holds the op table
(``_VariableFunctions``) and the autograd engine's class (``_ImperativeEngine``). hookgrad's
objects live in higher layers than some of those modules, so they are attached here, after
everything has imported (as `hookgrad._surface.cfuncs_install` does for ``linalg``).

Mirrors: the objects named in `install` (each is the same object as its first path).
"""

from __future__ import annotations

import functools
import importlib
import warnings
from typing import Any

from hookgrad import _C, futures
from hookgrad import __future__ as _future
from hookgrad._functorch.vmap import vmap
from hookgrad._library.opaque_object import is_opaque_reference_type
from hookgrad._opaque_base import OpaqueBase
from hookgrad.autograd import profiler
from hookgrad.autograd.variable import Variable
from hookgrad.nn.utils import parametrize
from hookgrad.utils import checkpoint, checkpoint_selective, dlpack

__all__ = ["_VariableFunctionsClass", "install"]


class _VariableFunctionsClass:
    """The op table: every function of the ``torch`` namespace as an attribute.

    Mirrors: ``torch._C._VariableFunctions`` (``_VariableFunctions.add is torch.add``).
    """

    def __getattr__(self, name: str) -> Any:
        top = importlib.import_module("hookgrad")
        fn = getattr(top, name, None) if not name.startswith("__") else None
        if not callable(fn) or isinstance(fn, type):
            raise AttributeError(f"type object 'torch._C._VariableFunctionsClass' has no "
                                 f"attribute '{name}'")
        return fn

    def __dir__(self) -> list[str]:
        top = importlib.import_module("hookgrad")
        return sorted(n for n, v in vars(top).items()
                      if callable(v) and not isinstance(v, type) and not n.startswith("__"))


def _legacy_vmap(func: Any, in_dims: Any = 0, out_dims: Any = 0) -> Any:
    """The older vmap ``torch.autograd.gradcheck`` imports: `vmap` with a deprecation warning.

    Mirrors: ``torch._vmap_internals.vmap`` (as ``torch.autograd.gradcheck.vmap``).
    """
    warnings.warn("Please use `torch.vmap` instead of `torch._vmap_internals.vmap`.",
                  FutureWarning, stacklevel=2)
    return functools.wraps(func)(vmap(func, in_dims, out_dims))


def install() -> None:
    """Attach each re-exported object under PyTorch's second path."""
    # ``hookgrad.autograd.gradcheck`` is the function (as in PyTorch); the module holds ``vmap``.
    importlib.import_module("hookgrad.autograd.gradcheck").vmap = _legacy_vmap
    profiler.Future = futures.Future
    parametrize.OpaqueBase = OpaqueBase
    parametrize.is_opaque_reference_type = is_opaque_reference_type
    parametrize.get_swap_module_params_on_conversion = _future.get_swap_module_params_on_conversion
    _C._VariableFunctions = _VariableFunctionsClass()
    _C._ImperativeEngine = type(Variable._execution_engine)
    importlib.import_module("hookgrad").to_dlpack = dlpack.to_dlpack
    for name in ("create_selective_checkpoint_contexts", "SAC_IGNORED_OPS"):
        setattr(checkpoint, name, getattr(checkpoint_selective, name))
