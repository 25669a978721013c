"""``hookgrad.__future__``: switches for behaviour PyTorch plans to change.

Mirrors: ``torch.__future__``. Both switches are off, as in PyTorch 2.13; hookgrad's
``Module`` conversions always assign new tensors, so turning either on raises NotImplementedError
instead of being silently ignored.
"""

from __future__ import annotations

__all__ = ["get_overwrite_module_params_on_conversion", "set_overwrite_module_params_on_conversion",
           "get_swap_module_params_on_conversion", "set_swap_module_params_on_conversion"]


def get_overwrite_module_params_on_conversion() -> bool:
    """Mirrors: ``torch.__future__.get_overwrite_module_params_on_conversion``."""
    return False


def set_overwrite_module_params_on_conversion(value: bool) -> None:
    """Mirrors: ``torch.__future__.set_overwrite_module_params_on_conversion``."""
    if value:
        raise NotImplementedError("hookgrad: overwrite_module_params_on_conversion is not "
                                  "supported")


def get_swap_module_params_on_conversion() -> bool:
    """Mirrors: ``torch.__future__.get_swap_module_params_on_conversion``."""
    return False


def set_swap_module_params_on_conversion(value: bool) -> None:
    """Mirrors: ``torch.__future__.set_swap_module_params_on_conversion``."""
    if value:
        raise NotImplementedError("hookgrad: swap_module_params_on_conversion is not supported")
