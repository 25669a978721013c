"""c10d's logger and the decorators that report failing distributed calls to it.

Mirrors: ``torch.distributed.c10d_logger`` (``_exception_logger`` logs the failing call's
group facts at DEBUG level on the ``c10d-<handler>`` logger, then re-raises; ``_time_logger``
runs the call).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from hookgrad.distributed.logging_handlers import _log_handlers

__all__: list[str] = []

_DEFAULT_DESTINATION = "default"
_T = TypeVar("_T")


def _get_logging_handler(destination: str = _DEFAULT_DESTINATION) -> tuple[logging.Handler, str]:
    handler = _log_handlers[destination]
    return handler, f"{type(handler).__name__}-{destination}"


def _get_or_create_logger(destination: str = _DEFAULT_DESTINATION) -> logging.Logger:
    handler, name = _get_logging_handler(destination)
    logger = logging.getLogger(f"c10d-{name}")
    logger.setLevel(logging.DEBUG)
    handler.setFormatter(logging.Formatter(
        "%(asctime)s %(filename)s:%(lineno)s %(levelname)s p:%(processName)s "
        "t:%(threadName)s: %(message)s"))
    logger.propagate = False
    if handler not in logger.handlers:
        logger.addHandler(handler)
    return logger


_c10d_logger = _get_or_create_logger()


def _get_msg_dict(func_name: str, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """The facts logged about a call: its name and, once initialised, the group's."""
    from hookgrad.distributed import process_group as pg

    if not pg.is_initialized():
        return {"func_name": func_name}
    group = kwargs.get("group") or kwargs.get("process_group")
    return {"func_name": func_name, "backend": f"{pg.get_backend(group)}",
            "world_size": f"{pg.get_world_size()}", "group_size": f"{pg.get_world_size(group)}",
            "global_rank": f"{pg.get_rank()}", "local_rank": f"{pg.get_rank(group)}"}


def _exception_logger(func: Callable[..., _T]) -> Callable[..., _T]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> _T:
        try:
            return func(*args, **kwargs)
        except Exception as error:
            msg = _get_msg_dict(func.__name__, *args, **kwargs)
            msg["error"] = f"{error}"
            _c10d_logger.debug(msg)
            raise
    return wrapper


def _time_logger(func: Callable[..., _T]) -> Callable[..., _T]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> _T:
        return func(*args, **kwargs)
    return wrapper
