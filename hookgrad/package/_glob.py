"""`GlobGroup`: include/exclude patterns over dotted module names or ``/`` paths."""

from __future__ import annotations

import re
from collections.abc import Iterable

GlobPattern = str | Iterable[str]


class GlobGroup:
    """Matches names against glob patterns: ``*`` inside one segment, ``**`` over segments.

    A name matches when it matches at least one `include` pattern and no `exclude` pattern.

    Example:
        >>> from hookgrad.package import GlobGroup
        >>> g = GlobGroup("torch.**", exclude="torch.**.foo")
        >>> g.matches("torch.bar"), g.matches("torch.some.foo")
        (True, False)

    Mirrors: ``torch.package.GlobGroup``.
    """

    def __init__(self, include: GlobPattern, *, exclude: GlobPattern = (),
                 separator: str = ".") -> None:
        self._dbg = f"GlobGroup(include={include}, exclude={exclude})"
        self.include = GlobGroup._glob_list(include, separator)
        self.exclude = GlobGroup._glob_list(exclude, separator)
        self.separator = separator

    def __str__(self) -> str:
        return self._dbg

    def __repr__(self) -> str:
        return self._dbg

    def matches(self, candidate: str) -> bool:
        """Whether `candidate` is included and not excluded."""
        candidate = self.separator + candidate
        return (any(p.fullmatch(candidate) for p in self.include)
                and all(not p.fullmatch(candidate) for p in self.exclude))

    @staticmethod
    def _glob_list(elems: GlobPattern, separator: str = ".") -> list[re.Pattern]:
        if isinstance(elems, str):
            return [GlobGroup._glob_to_re(elems, separator)]
        return [GlobGroup._glob_to_re(e, separator) for e in elems]

    @staticmethod
    def _glob_to_re(pattern: str, separator: str = ".") -> re.Pattern:
        # Both the candidate and every segment get a leading separator, so that "**" can
        # stand for zero segments without special-casing the start of the name.
        sep = re.escape(separator)
        not_sep = f"[^{sep}]"

        def component(seg: str) -> str:
            if "**" in seg:
                if seg == "**":
                    return f"({sep}{not_sep}+)*"
                raise ValueError("** can only appear as an entire path segment")
            return sep + (not_sep + "*").join(re.escape(x) for x in seg.split("*"))

        return re.compile("".join(component(s) for s in pattern.split(separator)))


__all__ = ["GlobGroup", "GlobPattern"]
