"""``TorchVersion``: the version string that also compares as a version.

Mirrors: ``torch.torch_version`` (``torch.__version__`` is a `TorchVersion`). Comparisons parse
both sides as PEP 440 versions (strings, ``packaging`` ``Version`` objects, or tuples such as
``(2, 1)`` read as ``"2.1"``) and fall back to plain string comparison when a side is not a
valid version, as PyTorch's does. PyTorch vendors ``packaging``; hookgrad orders versions
with the small PEP 440 key below (epoch, release, pre, post, dev, local), so it needs no
dependency.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["TorchVersion", "InvalidVersion", "Version", "internal_version"]

internal_version = "2.13.0"

_PATTERN = re.compile(
    r"^\s*v?(?:(?P<epoch>\d+)!)?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre_l>a|b|c|rc|alpha|beta|pre|preview)[-_.]?(?P<pre_n>\d+)?)?"
    r"(?:-(?P<post_n1>\d+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>\d+)?)?"
    r"(?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>\d+)?)?"
    r"(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$", re.IGNORECASE)
_PRE = {"a": "a", "alpha": "a", "b": "b", "beta": "b", "c": "rc", "rc": "rc", "pre": "rc",
        "preview": "rc"}
_NEG, _POS = (-1, ""), (1, "")  # sort below / above every real component


class InvalidVersion(ValueError):
    """A string that is not a PEP 440 version. Mirrors: ``packaging.version.InvalidVersion``."""


class Version:
    """A parsed PEP 440 version, ordered as ``packaging.version.Version``."""

    def __init__(self, text: str) -> None:
        m = _PATTERN.match(str(text))
        if m is None:
            raise InvalidVersion(f"Invalid version: {text!r}")
        release = tuple(int(p) for p in m["release"].split("."))
        while len(release) > 1 and release[-1] == 0:
            release = release[:-1]  # 1.0 == 1.0.0
        pre = (_PRE[m["pre_l"].lower()], int(m["pre_n"] or 0)) if m["pre_l"] else None
        post_n = m["post_n1"] or m["post_n2"]
        post = int(post_n or 0) if (m["post_l"] or m["post_n1"]) else None
        dev = int(m["dev_n"] or 0) if m["dev_l"] else None
        local = m["local"]
        # packaging's order: a dev release without pre/post sorts before every pre-release
        pre_key = ((-2, "") if pre is None and post is None and dev is not None
                   else _POS if pre is None else (0, pre))
        local_key = (_NEG,) if local is None else tuple(
            (int(p), "") if p.isdigit() else (-1, p.lower()) for p in re.split(r"[-_.]", local))
        self._key = (int(m["epoch"] or 0), release, pre_key,
                     _NEG if post is None else (0, post), _POS if dev is None else (0, dev),
                     local_key)

    def __lt__(self, other: Version) -> bool:
        return self._key < other._key

    def __le__(self, other: Version) -> bool:
        return self._key <= other._key

    def __gt__(self, other: Version) -> bool:
        return self._key > other._key

    def __ge__(self, other: Version) -> bool:
        return self._key >= other._key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)


def _to_version(inp: Any) -> Version:
    if isinstance(inp, Version):
        return inp
    if isinstance(inp, str) or type(inp).__name__ == "Version":  # packaging's Version
        return Version(str(inp))
    if isinstance(inp, Iterable):
        return Version(".".join(str(item) for item in inp))
    raise InvalidVersion(inp)


class TorchVersion(str):
    """A ``str`` that compares with strings, ``Version`` objects and tuples as a version.

    Example:
        >>> from hookgrad.torch_version import TorchVersion
        >>> TorchVersion("2.13.0+cpu") >= (2, 1), TorchVersion("1.10.0") > "1.9"
        (True, True)

    Mirrors: ``torch.torch_version.TorchVersion``.
    """

    __slots__ = ()

    def _cmp(self, other: Any, method: str) -> bool:
        try:
            return getattr(Version(self), method)(_to_version(other))
        except InvalidVersion:
            return getattr(str, method)(self, other)  # 'parrot' compares as a string

    def __gt__(self, other: Any) -> bool:
        return self._cmp(other, "__gt__")

    def __lt__(self, other: Any) -> bool:
        return self._cmp(other, "__lt__")

    def __ge__(self, other: Any) -> bool:
        return self._cmp(other, "__ge__")

    def __le__(self, other: Any) -> bool:
        return self._cmp(other, "__le__")

    def __eq__(self, other: Any) -> bool:
        return self._cmp(other, "__eq__")

    __hash__ = str.__hash__


__version__ = TorchVersion(internal_version)
