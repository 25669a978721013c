"""Anomaly detection: the engine checks every backward output for NaN while it is on.

PyTorch keeps anomaly mode process-wide (a thread started inside ``detect_anomaly`` sees it on),
so the flags live in `GLOBAL`, not in the per-thread state. hookgrad does not record forward
tracebacks; it raises PyTorch's error for a node that returned NaN.

Mirrors: ``torch.autograd.anomaly_mode``.
"""

from __future__ import annotations

import warnings
from typing import Any

from hookgrad._config import GLOBAL

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]

_ENABLED_WARNING = ("Anomaly Detection has been enabled. This mode will increase the runtime "
                    "and should only be enabled for debugging.")


def is_anomaly_enabled() -> bool:
    """Mirrors: ``torch.is_anomaly_enabled``."""
    return GLOBAL.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    """Mirrors: ``torch.is_anomaly_check_nan_enabled``."""
    return GLOBAL.anomaly and GLOBAL.anomaly_check_nan


def _set(mode: bool, check_nan: bool) -> None:
    GLOBAL.anomaly = bool(mode)
    GLOBAL.anomaly_check_nan = bool(check_nan)


class detect_anomaly:  # noqa: N801 - torch's name
    """Context manager (and decorator) turning anomaly detection on for its block.

    Example:
        >>> import warnings, hookgrad
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     with hookgrad.autograd.detect_anomaly():
        ...         hookgrad.is_anomaly_enabled()
        True

    Mirrors: ``torch.autograd.detect_anomaly`` (warns on entry, as PyTorch does).
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = (GLOBAL.anomaly, GLOBAL.anomaly_check_nan)
        self.check_nan = check_nan
        warnings.warn(_ENABLED_WARNING, UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        self.prev = (GLOBAL.anomaly, GLOBAL.anomaly_check_nan)
        _set(True, self.check_nan)

    def __exit__(self, *exc: object) -> None:
        _set(*self.prev)

    def __call__(self, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:  # noqa: N801 - torch's name
    """Turn anomaly detection on or off now; as a context manager, restore it on exit.

    Mirrors: ``torch.autograd.set_detect_anomaly``.
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (GLOBAL.anomaly, GLOBAL.anomaly_check_nan)
        _set(mode, check_nan)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        _set(*self.prev)


def check_nan_outputs(name: str, outs: tuple) -> None:
    """Raise PyTorch's anomaly error when a backward output holds NaN (engine call point)."""
    for i, g in enumerate(outs):
        if g is not None and g._data.dtype.kind in "fcV" and bool((g._data != g._data).any()):
            raise RuntimeError(f"Function '{name}' returned nan values in its {i}th output.")
