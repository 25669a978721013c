"""`tensorboard_trace_handler`.

Mirrors: ``torch.profiler.tensorboard_trace_handler`` (training frameworks such as Lightning
import it when they load their profilers).
"""

from __future__ import annotations

import gzip
import os
import socket
import tempfile
import time
from collections.abc import Callable
from typing import Any

__all__ = ["tensorboard_trace_handler"]


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False, use_python_export: bool = False
                              ) -> Callable[[Any], None]:
    """An ``on_trace_ready`` callback writing each trace to `dir_name` as
    ``<worker>.<time_ns>.pt.trace.json`` (``.gz`` with `use_gzip`), the worker name
    defaulting to ``<host>_<pid>``.

    Example:
        >>> import os, tempfile, hookgrad as torch
        >>> d = tempfile.mkdtemp()
        >>> with torch.profiler.profile(on_trace_ready=tensorboard_trace_handler(d, "w")):
        ...     _ = torch.ones(2) + 1
        >>> [f.split(".")[0] for f in os.listdir(d)]
        ['w']

    Mirrors: ``torch.profiler.tensorboard_trace_handler``.
    """

    def handler_fn(prof: Any) -> None:
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{name}.{time.time_ns()}.pt.trace.json"
        path = os.path.join(dir_name, file_name)
        if not use_gzip:
            prof.export_chrome_trace(path)
            return
        with tempfile.TemporaryDirectory() as tmp:
            plain = os.path.join(tmp, file_name)
            prof.export_chrome_trace(plain)
            with open(plain, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                dst.write(src.read())

    return handler_fn
