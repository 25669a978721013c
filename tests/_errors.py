"""`err`: what a call raises, as a value the oracle tests compare between torch and hookgrad."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def err(fn: Callable[[], Any]) -> tuple[str, str] | None:
    """``(exception type name, message)`` if ``fn()`` raises, else ``None``."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return (type(e).__name__, str(e))
    return None
