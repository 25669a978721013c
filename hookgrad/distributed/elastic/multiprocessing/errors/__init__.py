"""`record`: decorate a training entry point so its uncaught error is written for the launcher.

Mirrors: ``torch.distributed.elastic.multiprocessing.errors`` (``record``, ``ErrorHandler``,
``get_error_handler``). An exception leaving the decorated function is written as PyTorch's JSON
(``{"message": {"message": "Type: text", "extraInfo": {"py_callstack", "timestamp"}}}``) to the
file named by ``TORCHELASTIC_ERROR_FILE`` when that is set, then re-raised; ``SystemExit(0)``
becomes a normal return. hookgrad has no elastic agent, so no child failures are collected.

Example:
    >>> from hookgrad.distributed.elastic.multiprocessing.errors import record
    >>> @record
    ... def main():
    ...     return 3
    >>> main()
    3
"""

from __future__ import annotations

import faulthandler
import functools
import json
import os
import time
import traceback
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["ErrorHandler", "get_error_handler", "record"]


class ErrorHandler:
    """Writes an entry point's exception for the launcher. Mirrors: ``ErrorHandler``."""

    def _get_error_file_path(self) -> str | None:
        return os.environ.get("TORCHELASTIC_ERROR_FILE", None)

    def initialize(self) -> None:
        """Dump tracebacks of all threads on a fatal signal, as PyTorch's handler does."""
        try:
            faulthandler.enable(all_threads=True)
        except Exception as e:  # noqa: BLE001 - e.g. no usable stderr: warn, as PyTorch
            warnings.warn(f"Unable to enable fault handler. {type(e).__name__}: {e}",
                          stacklevel=2)

    def record_exception(self, e: BaseException) -> None:
        """Write `e` (with the current traceback) to the error file, when one is named."""
        file = self._get_error_file_path()
        if file:
            data = {"message": {"message": f"{type(e).__name__}: {e}", "extraInfo": {
                "py_callstack": traceback.format_exc(), "timestamp": str(int(time.time()))}}}
            with open(file, "w") as fp:
                json.dump(data, fp)


def get_error_handler() -> ErrorHandler:
    """Mirrors: ``torch.distributed.elastic.multiprocessing.errors.get_error_handler``."""
    return ErrorHandler()


def record(fn: Callable[..., Any], error_handler: ErrorHandler | None = None) -> Callable:
    """Mirrors: ``torch.distributed.elastic.multiprocessing.errors.record``."""
    handler = error_handler or get_error_handler()

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        handler.initialize()
        try:
            return fn(*args, **kwargs)
        except SystemExit as se:
            if se.code == 0:  # a run_path entry point's clean exit is a return
                return None
            raise
        except Exception as e:
            handler.record_exception(e)
            raise

    return wrapper
