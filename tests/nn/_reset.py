"""Reset the global module-hook registries of hookgrad *and* of the oracle after each test.

Importing this module registers the resetter once in ``tests.conftest.RESETTERS``. PyTorch's
global backward-hook mode is sticky for the process, so a scenario that registers a global
legacy hook would otherwise break every later scenario that registers a global full hook.
"""

from __future__ import annotations

from hookgrad.nn.modules._global_hooks import reset_global_hooks
from tests.conftest import RESETTERS


def reset_torch_module_globals() -> None:
    try:
        import torch.nn.modules.module as tm
    except ImportError:  # pragma: no cover - oracle absent
        return
    for name in ("_global_forward_pre_hooks", "_global_forward_hooks",
                 "_global_forward_hooks_with_kwargs", "_global_forward_hooks_always_called",
                 "_global_backward_pre_hooks", "_global_backward_hooks",
                 "_global_parameter_registration_hooks", "_global_buffer_registration_hooks",
                 "_global_module_registration_hooks"):
        getattr(tm, name).clear()
    tm._global_is_full_backward_hook = None


def reset_all() -> None:
    reset_global_hooks()
    reset_torch_module_globals()


if reset_all.__qualname__ not in {getattr(r, "__qualname__", "") for r in RESETTERS}:
    RESETTERS.append(reset_all)
