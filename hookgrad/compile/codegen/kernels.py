"""Numba kernels for fused elementwise groups, cached on disk (NOTE [Kernel cache]).

Numba is optional (the ``hookgrad[compile]`` extra). `numba_mode()` says whether fused groups
become Numba kernels: the ``HOOKGRAD_NUMBA`` environment variable (or `set_numba`) picks
``"0"`` (never), ``"1"`` (always: an ``ImportError`` with the install hint when Numba is
missing) or, unset, "when installed".

NOTE [Kernel cache]
A kernel's source is written to ``<cache dir>/kernels/hg_<sha256 of the source>.py`` (the
cache dir is ``$HOOKGRAD_CACHE_DIR``, else ``~/.cache/hookgrad``), through a temporary file and
`os.replace`, so a reader never sees half a file and an existing file is never rewritten (its
timestamp is part of Numba's cache key). The module is imported from there and its function
is compiled with ``njit(cache=True)``, so Numba stores the machine code beside it; a second
process that generates the same source imports the same file and loads the compiled code
instead of compiling again. `STATS` counts sources generated, files reused and kernels loaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

__all__ = ["numba_mode", "set_numba", "load_kernel", "cache_dir", "STATS"]

STATS: Counter = Counter()
_FORCED: list[bool | None] = [None]
_LOADED: dict[str, Any] = {}
# Numba's cache index is keyed by the function's code, not by these options: they are written
# into the source (so into the file name) instead.
_OPTIONS = {"cache": True, "error_model": "numpy", "nogil": True}
_HINT = ("Numba is not installed: fused kernels need the optional extra "
         "(pip install 'hookgrad[compile]', or pip install numba)")


def set_numba(value: bool | None) -> None:
    """Force Numba kernels on (``True``), off (``False``), or back to the default (``None``)."""
    _FORCED[0] = value


def numba_mode() -> bool:
    """True when fused groups should compile to Numba kernels (see the module docstring)."""
    want = _FORCED[0]
    if want is None:
        env = os.environ.get("HOOKGRAD_NUMBA", "").strip()
        want = None if env == "" else env not in ("0", "false", "False", "off")
    if want is False:
        return False
    available = importlib.util.find_spec("numba") is not None
    if want and not available:
        raise ImportError(_HINT)
    return available


def cache_dir() -> Path:
    """Where kernel sources (and Numba's compiled code beside them) are kept."""
    root = os.environ.get("HOOKGRAD_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "hookgrad")
    return Path(root) / "kernels"


def load_kernel(source: str, name: str) -> Any:
    """The njit-compiled function `name` of `source` (module text defining it undecorated)."""
    source = f"# hookgrad kernel; njit options {_OPTIONS!r}\n{source}"  # options: part of the key
    digest = hashlib.sha256(source.encode()).hexdigest()[:32]
    key = f"hg_{digest}"
    fn = _LOADED.get(key)
    if fn is not None:
        STATS["memory_hits"] += 1
        return fn
    path = cache_dir() / f"{key}.py"
    if path.exists():
        STATS["file_hits"] += 1
    else:
        _write_atomically(path, source)
        STATS["files_written"] += 1
    spec = importlib.util.spec_from_file_location(key, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[key] = module  # Numba's cache locator finds the function through its module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    import numba
    fn = numba.njit(**_OPTIONS)(getattr(module, name))
    _LOADED[key] = fn
    STATS["kernels_loaded"] += 1
    return fn


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp_", suffix=".py")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
