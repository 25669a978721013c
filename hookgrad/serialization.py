"""`save` / `load`: checkpoints in PyTorch's format, loaded by PyTorch's safety rules.

`save` writes PyTorch's zip format, which ``torch.load`` reads (tensors, parameters, state
dicts with ``weights_only=True``; whole modules and other objects with ``weights_only=False``);
`load` reads that format, PyTorch's legacy format and hookgrad's earlier archives, without
importing torch. ``load(weights_only=True)`` - the default - never runs code from the file: it
only builds what PyTorch's allowlist admits, plus what `add_safe_globals` / `safe_globals` add.
``weights_only=False`` unpickles anything, like PyTorch: use it only for files you trust.
See ``docs/serialization.md`` for the format, the rules and where hookgrad departs from PyTorch.

Example:
    >>> import io, hookgrad
    >>> buf = io.BytesIO()
    >>> hookgrad.save({"w": hookgrad.ones(2)}, buf)
    >>> _ = buf.seek(0)
    >>> hookgrad.load(buf)["w"].tolist()
    [1.0, 1.0]

Mirrors: ``torch.serialization``.
"""

from __future__ import annotations

import os
import pickle
from typing import Any

from hookgrad._serialization import _allowlist, _load, _torch_reader, _torch_writer
from hookgrad._serialization._errors import Malformed, refuse
from hookgrad._serialization._files import opened
from hookgrad._serialization._hookgrad_v2 import MANIFEST
from hookgrad._serialization._options import (FILE_LIKE, MAP_LOCATION, STORAGE, FileLike,
                                              LoadEndianness, SourceChangeWarning,
                                              default_restore_location, get_crc32_options,
                                              get_default_load_endianness,
                                              get_default_mmap_options, location_tag,
                                              normalize_storage_type, register_package,
                                              set_crc32_options, set_default_load_endianness,
                                              set_default_mmap_options)
from hookgrad._serialization._weights_unpickler import globals_in_pickle
from hookgrad.utils._bounded_read import guarded
from hookgrad.utils._safe_write import write_file

__all__ = ["save", "load", "add_safe_globals", "safe_globals", "get_safe_globals",
           "clear_safe_globals", "get_unsafe_globals_in_checkpoint",
           "DEFAULT_PROTOCOL", "MANIFEST", "FILE_LIKE", "FileLike", "MAP_LOCATION", "STORAGE",
           "LoadEndianness", "SourceChangeWarning", "default_restore_location",
           "get_crc32_options", "get_default_load_endianness", "get_default_mmap_options",
           "location_tag", "normalize_storage_type", "register_package", "set_crc32_options",
           "set_default_load_endianness", "set_default_mmap_options"]

DEFAULT_PROTOCOL = 2  # PyTorch's


def save(obj: Any, f: Any, pickle_module: Any = pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save an object to a file in PyTorch's zip checkpoint format.

    Tensors keep dtype, shape, strides, storage offset and storage sharing; a module, an
    optimizer or any picklable object is pickled as PyTorch would (loading it then needs
    ``weights_only=False``). Saving to a path is atomic (the old file stays whole on failure);
    a device or FIFO path is written through.

    Args:
        obj: what to save.
        f: a path (``str`` / ``os.PathLike``) or a writable binary file object.
        pickle_module: must be Python's ``pickle`` (the default) or ``None``.
        pickle_protocol: the pickle protocol of ``data.pkl`` (PyTorch's default, 2).
        _use_new_zipfile_serialization: ``False`` writes PyTorch's legacy (pre-1.6) format.
        _disable_byteorder_record: leave out the ``byteorder`` record, as in PyTorch.

    Raises:
        pickle.PicklingError, TypeError, AttributeError: `obj` cannot be pickled (nothing is
            written).

    Mirrors: ``torch.save``.
    """
    if pickle_module is not None and pickle_module is not pickle:
        pickle_module.__name__  # noqa: B018 - PyTorch reads it first (an AttributeError)
        raise NotImplementedError("hookgrad.save pickles with Python's pickle module only")
    legacy = not _use_new_zipfile_serialization
    data_pkl, storages = _torch_writer.pickle_object(obj, pickle_protocol, legacy)

    def write(fh: Any) -> None:
        if legacy:
            _torch_writer.write_legacy(fh, data_pkl, storages, pickle_protocol)
            return
        name = "archive"
        if isinstance(f, (str, os.PathLike)):
            name = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
        _torch_writer.write_archive(fh, name, data_pkl, storages,
                                    not _disable_byteorder_record)

    if isinstance(f, (str, os.PathLike)):
        write_file(os.fspath(f), write, zip_format=not legacy)
    else:
        write(f)


def load(f: Any, map_location: Any = None, pickle_module: Any = None, *,
         weights_only: bool | None = None, mmap: bool | None = None,
         **pickle_load_args: Any) -> Any:
    """Load an object saved by `save` or ``torch.save``.

    Args:
        f: a path or a readable binary file object. A path must name a regular file (also
            through symlinks): devices, FIFOs and sockets are refused, never read.
        map_location: ``None`` (where it was saved), a device or device string, a dict from
            saved location to location, or ``fn(storage, location) -> storage | None``.
        pickle_module: only with ``weights_only=False`` (a ``RuntimeError`` otherwise, as in
            PyTorch); hookgrad unpickles with its own unpickler either way.
        weights_only: ``True`` (the default; also when ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` is
            set) builds only allowlisted objects; ``False`` unpickles anything.
        mmap: map a zip checkpoint's storages from the file (copy-on-write) instead of
            reading them; needs a path.
        **pickle_load_args: ``encoding`` and, with ``weights_only=False``, further arguments
            of ``pickle.Unpickler``.

    Returns:
        The saved object, with hookgrad tensors, modules and dtypes.

    Raises:
        pickle.UnpicklingError: a global that is not allowlisted (PyTorch's message).
        RuntimeError, EOFError, pickle.UnpicklingError, ...: a malformed, truncated, corrupt
            or hostile file, with the type PyTorch raises for the same fault (its zip reader's
            ``RuntimeError``, ``EOFError`` for an empty file, its unpickler's types).
        OSError: the path cannot be opened (``FileNotFoundError``, ``IsADirectoryError``).

    Mirrors: ``torch.load``.
    """
    return _load.load(f, map_location, pickle_module, weights_only=weights_only, mmap=mmap,
                      **pickle_load_args)


def add_safe_globals(safe_globals: list) -> None:
    """Allow these classes and functions in ``load(weights_only=True)``.

    Entries are objects or ``(object, "module.name")`` pairs, as in PyTorch.

    Mirrors: ``torch.serialization.add_safe_globals``.
    """
    _allowlist.add(safe_globals)


def get_safe_globals() -> list:
    """The user's allowlisted globals. Mirrors: ``torch.serialization.get_safe_globals``."""
    return _allowlist.get()


def clear_safe_globals() -> None:
    """Forget every user-allowlisted global.

    Mirrors: ``torch.serialization.clear_safe_globals``.
    """
    _allowlist.clear()


class safe_globals:  # noqa: N801 - PyTorch's name
    """Context manager allowlisting globals for ``load(weights_only=True)`` inside it.

    Mirrors: ``torch.serialization.safe_globals``.
    """

    def __init__(self, safe_globals: list) -> None:
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        _allowlist.add(self.safe_globals)

    def __exit__(self, *exc: Any) -> None:
        _allowlist.remove(self.safe_globals)


def get_unsafe_globals_in_checkpoint(f: Any) -> list[str]:
    """The globals a checkpoint's pickle names that ``weights_only`` loading would refuse.

    Found by scanning the pickle without running it (PyTorch's note applies: objects pushed
    dynamically are not seen).

    Raises:
        ValueError: `f` is not a zip checkpoint, or is a TorchScript archive.

    Mirrors: ``torch.serialization.get_unsafe_globals_in_checkpoint``.
    """
    safe = set(_allowlist.default_allowed()) | set(_allowlist.user_allowed())
    with opened(f) as fh:
        if not _torch_reader.is_zip(fh):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        try:
            with guarded("unreadable checkpoint"):
                zf, size = _torch_reader.open_zip(fh)
                with zf:
                    archive = _torch_reader.TorchArchive(zf, size)
                    if archive.is_torchscript():
                        raise ValueError("Expected input to be a checkpoint returned by "
                                         "torch.save but got a torchscript checkpoint")
                    found = globals_in_pickle(archive.pickle_file())
        except Malformed as e:
            raise refuse(str(e), e.kind) from None
    return list(found - safe)


