"""A reader of untrusted ZIP + ``.npy`` files that allocates no more than the file holds.

`hookgrad.load` reads hookgrad's earlier archives with these rules (`check_members`,
`read_member`, `read_npy`); PyTorch-format archives use `read_member` and `guarded` with their
own member checks (``hookgrad/_serialization/_torch_reader.py``). The rules:

* members must be stored (the writer never compressed): a compressed member could inflate a
  small file into gigabytes, and unknown compression methods are refused the same way;
* every member's recorded size must fit in the archive (stored members: size on disk equals
  the data size), and member names are unique;
* a ``.npy`` header is read with a hard size limit, parsed without evaluating code, and its
  shape times item size must equal the bytes actually present in the member, so a 600-byte
  file cannot ask for 15 GiB;
* every read is checked against the member's CRC-32, so flipped bits are detected;
* encrypted members (flag bits 0, 6 or 13) are refused.

Every problem raises `Malformed` with a sentence saying what is wrong; any other exception
escaping the parsers (``RecursionError``, ``MemoryError``, ``struct.error``, ...) is turned
into `Malformed` by `guarded` too, so callers see one type.
"""

from __future__ import annotations

import ast
import contextlib
import struct
import zipfile
import zlib
from collections.abc import Iterator

import numpy as np

__all__ = ["Malformed", "guarded", "check_members", "read_member", "read_npy"]

MAX_NPY_HEADER = 64 * 1024  # NumPy itself refuses headers over 10,000 bytes by default
_MAGIC = b"\x93NUMPY"
# zip general purpose flag bits: 0 encrypted, 6 strong encryption, 13 masked central directory
_ENCRYPTION_FLAGS = 0x1 | 0x40 | 0x2000


class Malformed(Exception):
    """The file is not what it claims to be; the message says what is wrong.

    `kind` is the exception type the caller raises for it: the type PyTorch raises for the same
    fault (``RuntimeError``, its zip reader's, unless a reader says otherwise).
    """

    def __init__(self, message: str, kind: type = RuntimeError) -> None:
        super().__init__(message)
        self.kind = kind


@contextlib.contextmanager
def guarded(what: str, kind: type | None = None) -> Iterator[None]:
    """Turn any parsing failure inside the block into `Malformed` ("`what`: detail").

    Its `kind` is `kind` when given (a zip-level read: PyTorch's reader raises ``RuntimeError``
    whatever went wrong), else the failure's own type (a pickle-level read: PyTorch's
    unpicklers fail with these same types).
    """
    try:
        yield
    except Malformed:
        raise
    except RecursionError as e:
        raise Malformed(f"{what}: nested too deeply", kind or type(e)) from None
    except MemoryError as e:
        raise Malformed(f"{what}: asks for more memory than the file can hold",
                        kind or type(e)) from None
    except NotImplementedError as e:
        raise Malformed(f"{what}: unsupported feature ({e})", kind or RuntimeError) from None
    except zipfile.BadZipFile as e:
        raise Malformed(f"{what}: corrupt ZIP data ({e})", kind or RuntimeError) from None
    except (zipfile.LargeZipFile, zlib.error) as e:
        raise Malformed(f"{what}: {type(e).__name__}: {e}", kind or RuntimeError) from None
    except (ValueError, TypeError, KeyError, IndexError, EOFError, OverflowError, OSError,
            struct.error, SyntaxError) as e:
        raise Malformed(f"{what}: {type(e).__name__}: {e}", kind or type(e)) from None


def check_members(zf: zipfile.ZipFile, size: int, *, max_inflation: int | None = None) -> None:
    """Refuse duplicate, encrypted, compressed or oversized members (see the module doc).

    With ``max_inflation`` (PyTorch's writer may deflate members), deflated members are allowed
    as long as together they promise at most that many times the file's size (plus 1 MiB).
    """
    seen: set[str] = set()
    inflated = 0
    for info in zf.infolist():
        name = info.filename
        if name in seen:
            raise Malformed(f"member {name!r} occurs twice")
        seen.add(name)
        if info.flag_bits & _ENCRYPTION_FLAGS:
            raise Malformed(f"member {name!r} is encrypted (unsupported encryption)")
        deflated = max_inflation is not None and info.compress_type == zipfile.ZIP_DEFLATED
        if deflated:
            inflated += info.file_size
        elif info.compress_type != zipfile.ZIP_STORED:
            raise Malformed(f"member {name!r} is compressed with method {info.compress_type}, "
                            "which checkpoints do not use")
        elif info.file_size != info.compress_size:
            raise Malformed(f"stored member {name!r} has differing sizes")
        if info.header_offset + info.compress_size > size:
            raise Malformed(f"member {name!r} claims {info.compress_size} bytes, more than the "
                            "file holds")
    if max_inflation is not None and inflated > max_inflation * size + (1 << 20):
        raise Malformed(f"compressed members promise {inflated} bytes from a {size}-byte file "
                        "(a zip bomb?)")


def read_member(zf: zipfile.ZipFile, name: str, limit: int) -> bytes:
    """The whole member `name` (CRC-checked); refused when it is larger than `limit` bytes."""
    with guarded(f"member {name!r}", RuntimeError):
        info = zf.getinfo(name)
        if info.file_size > limit:
            raise Malformed(f"member {name!r} is {info.file_size} bytes, over the "
                            f"{limit}-byte limit")
        with zf.open(info) as member:
            data = member.read(info.file_size + 1)
    if len(data) != info.file_size:
        raise Malformed(f"member {name!r} is truncated")
    return data


def _npy_header(buf: memoryview) -> tuple[dict, int]:
    """The parsed header dict of a ``.npy`` image and the offset where its data starts."""
    if bytes(buf[:6]) != _MAGIC or len(buf) < 10:
        raise Malformed("not a .npy array (bad magic)")
    major = buf[6]
    if major == 1:
        (hlen,), start = struct.unpack("<H", buf[8:10]), 10
    elif major in (2, 3) and len(buf) >= 12:
        (hlen,), start = struct.unpack("<I", buf[8:12]), 12
    else:
        raise Malformed(f"unsupported .npy version {major}")
    if hlen > MAX_NPY_HEADER or start + hlen > len(buf):
        raise Malformed(f".npy header of {hlen} bytes is longer than allowed or than the member")
    text = bytes(buf[start:start + hlen]).decode("latin1" if major < 3 else "utf-8")
    header = ast.literal_eval(text)  # literals only: no names, calls or attribute access
    if not isinstance(header, dict) or set(header) != {"descr", "fortran_order", "shape"}:
        raise Malformed(".npy header is not a {descr, fortran_order, shape} dict")
    return header, start + hlen


def read_npy(data: bytes, allowed: frozenset[str]) -> np.ndarray:
    """A writable array from the ``.npy`` image `data`, whose dtype name must be in `allowed`.

    The element count comes from the header but must agree with the bytes present: nothing is
    allocated beyond ``len(data)``.
    """
    buf = memoryview(data)
    with guarded(".npy array"):
        header, offset = _npy_header(buf)
        descr, shape, fortran = header["descr"], header["shape"], header["fortran_order"]
        if not isinstance(descr, str) or type(fortran) is not bool:
            raise Malformed(".npy header has a malformed descr or fortran_order")
        if not (isinstance(shape, tuple) and all(type(s) is int and s >= 0 for s in shape)):
            raise Malformed(f".npy header has a malformed shape {shape!r}")
        dt = np.dtype(descr)
        if dt.name not in allowed or dt.hasobject or not dt.isnative:
            raise Malformed(f".npy dtype {descr!r} is not allowed in a checkpoint")
        count = 1
        for s in shape:
            count *= s
        if count * dt.itemsize != len(buf) - offset:
            raise Malformed(f".npy header promises {count * dt.itemsize} data bytes but the "
                            f"member holds {len(buf) - offset}")
        arr = np.frombuffer(bytearray(buf[offset:]), dtype=dt, count=count)
        return arr.reshape(shape, order="F" if fortran else "C")
