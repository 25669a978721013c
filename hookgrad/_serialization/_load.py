"""`load`: open the file, pick the reader by format, apply PyTorch's weights-only rules."""

from __future__ import annotations

import os
import pickle
import struct
import warnings
import zipfile
from typing import Any

from hookgrad._serialization import _allowlist, _files, _hookgrad_v2, _legacy_torch, _torch_reader
from hookgrad._serialization._errors import (UNSAFE_MESSAGE, Malformed, refuse,
                                             weights_only_message)
from hookgrad._serialization._full_unpickler import FullUnpickler
from hookgrad._serialization._weights_unpickler import Unpickler
from hookgrad.utils import _bounded_read
from hookgrad.utils._bounded_read import guarded

__all__ = ["load"]

_TRUE = ("1", "y", "yes", "true")


def _weights_only_flag(weights_only: bool | None, pickle_module: Any) -> bool:
    """The effective ``weights_only`` after PyTorch's default and environment overrides."""
    not_set = weights_only is None
    if not_set:
        weights_only = pickle_module is None
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    force_not = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    if force and force_not:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set.")
    if force:
        return True
    if force_not and not_set:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since "
                      "the`weights_only` argument was not explicitly passed to `torch.load`, "
                      "forcing weights_only=False.", UserWarning, stacklevel=4)
        return False
    return bool(weights_only)


def make_unpickle(weights_only: bool, pickle_args: dict) -> Any:
    """``unpickle(file, persistent_load)`` for the chosen rules."""
    def unpickle(file: Any, persistent_load: Any) -> Any:
        if not weights_only:
            try:
                return FullUnpickler(file, persistent_load, **pickle_args).load()
            except (KeyError, IndexError, struct.error) as e:
                if not _raised_by_pickle(e):
                    raise  # the file's own classes failed: their error, unchanged
                # where Python's pickle implementation fails with these, the C one PyTorch
                # runs raises UnpicklingError
                raise pickle.UnpicklingError(
                    "invalid load key" if isinstance(e, KeyError) else
                    "pickle data was truncated") from None
        try:  # PyTorch passes the pickle arguments to its weights-only unpickler too
            return Unpickler(file, persistent_load=persistent_load, **pickle_args).load()
        except (RuntimeError, AttributeError) as e:
            # a rebuild refused what the pickle asked (a layout outside its storage, ...)
            raise Malformed(f"{type(e).__name__}: {e}", type(e)) from None

    return unpickle


def _raised_by_pickle(e: BaseException) -> bool:
    """Whether `e` was raised by the unpickler's own code (not by a class it called)."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_filename == pickle.__file__


def _load_zip(fh: Any, f: Any, map_location: Any, unpickle: Any, mmap: bool,
              weights_only: bool) -> Any:
    with guarded("not a zip archive", RuntimeError):
        start = fh.tell()
        size = fh.seek(0, os.SEEK_END) - start
        fh.seek(start)
        zf = zipfile.ZipFile(fh, "r")
    with zf:
        if _hookgrad_v2.MANIFEST in zf.NameToInfo:
            _bounded_read.check_members(zf, size)
            try:
                return _hookgrad_v2.load_archive(zf, map_location)
            except Malformed as e:  # hookgrad's own format: refused as an unpickler would
                e.kind = pickle.UnpicklingError
                raise
        _bounded_read.check_members(zf, size, max_inflation=_torch_reader.MAX_INFLATION)
        path = os.fsdecode(f) if mmap else None
        archive = _torch_reader.TorchArchive(zf, size, map_location, path)
        if archive.is_torchscript():
            raise RuntimeError("Cannot use ``weights_only=True`` with TorchScript archives "
                               "passed to ``torch.load``. " + UNSAFE_MESSAGE
                               if weights_only else "hookgrad cannot load TorchScript archives")
        return _torch_reader.unpickle_archive(archive, unpickle)


def _dispatch(f: Any, map_location: Any, unpickle: Any, mmap: bool, weights_only: bool) -> Any:
    is_path = isinstance(f, (str, os.PathLike))
    if mmap and not is_path:
        raise ValueError("f must be a file path in order to use the mmap argument")
    with _files.opened(f, mmap) as fh, guarded("unreadable checkpoint"):
        if _torch_reader.is_zip(fh):
            return _load_zip(fh, f, map_location, unpickle, mmap, weights_only)
        if mmap:
            name = f"{f}, " if isinstance(f, str) else ""
            raise RuntimeError("mmap can only be used with files saved with "
                               f"`torch.save({name}_use_new_zipfile_serialization=True), please "
                               "torch.save your checkpoint with this option in order to use "
                               "mmap.")
        return _legacy_torch.load_legacy(fh, map_location, unpickle)


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None, **pickle_args: Any) -> Any:
    """See `hookgrad.serialization.load`."""
    if pickle_module is not None:
        pickle_module.__name__  # noqa: B018 - PyTorch reads it first (an AttributeError)
    weights_only = _weights_only_flag(weights_only, pickle_module)
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=3)
    if weights_only:
        _allowlist.user_allowed()  # malformed add_safe_globals entries: PyTorch's errors, now
    pickle_args.setdefault("encoding", "utf-8")
    unpickle = make_unpickle(weights_only, pickle_args)
    try:
        return _dispatch(f, map_location, unpickle, bool(mmap), weights_only)
    except pickle.UnpicklingError as e:
        if not weights_only:
            raise
        raise pickle.UnpicklingError(weights_only_message(str(e))) from None
    except Malformed as e:
        raise refuse(str(e), e.kind) from None
    except _torch_reader.UserCodeError as e:  # map_location's own error, unchanged
        raise e.args[0] from None
