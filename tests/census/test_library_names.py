"""The usage census: every torch name that real libraries use (``library_names.txt``, written by
``python3 -m tests.census.usage_scan --write DIR...`` over installed libraries) resolves in
hookgrad, or is listed with its reason in ``library_absent.txt``; no entry there is stale."""

from __future__ import annotations

import fnmatch
from pathlib import Path

from tests.census.usage_scan import NAMES, resolves

ABSENT = Path(__file__).with_name("library_absent.txt")


def _absent() -> list[tuple[list[str], str]]:
    rows = []
    for line in ABSENT.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            patterns, _, reason = line.partition(" -- ")
            rows.append(([p.strip() for p in patterns.split(",")], reason))
    return rows


def test_used_names_resolve_or_are_listed():
    rows = _absent()
    missing = [n for n in NAMES.read_text().split() if not resolves("hookgrad", n)]
    uncovered = [n for n in missing
                 if not any(fnmatch.fnmatchcase(n, p) for pats, _ in rows for p in pats)]
    assert not uncovered, "used by libraries, absent from hookgrad:\n" + "\n".join(uncovered)
    stale = [p for pats, _ in rows for p in pats
             if not any(fnmatch.fnmatchcase(n, p) for n in missing)]
    assert not stale, "library_absent.txt patterns covering no missing name:\n" + "\n".join(stale)
