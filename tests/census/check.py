"""Compare the census (``surface.json``) with hookgrad; no torch needed.

A name is *present* when the hookgrad object at the same path has it; *absent* when a line of
``absent.txt`` covers it (``namespace: pattern[, pattern...] -- reason``, fnmatch patterns);
*missing* otherwise. The census test fails on any missing name.

A present name whose object carries ``__hookgrad_unsupported__`` (a stand-in made by
``hookgrad._unsupported``: importable, but its entry points raise) is also a *stand-in*: it counts
for coverage (``present %``) and against ``implemented %`` (present minus stand-ins).
"""

from __future__ import annotations

import fnmatch
import importlib
import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
SURFACE = HERE / "surface.json"
ABSENT = HERE / "absent.txt"


@dataclass
class Rule:
    namespace: str
    patterns: list[str]
    reason: str
    line: int
    used: bool = False


@dataclass
class Row:
    namespace: str
    present: list[str] = field(default_factory=list)
    absent: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    standin: list[str] = field(default_factory=list)  # present, but a raising stand-in


def load_surface() -> dict[str, list[str]]:
    data = json.loads(SURFACE.read_text())
    return {k: v for k, v in data.items() if not k.startswith("_")}


def load_rules(path: Path = ABSENT) -> list[Rule]:
    rules = []
    for no, raw in enumerate(path.read_text().splitlines(), 1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        head, sep, reason = text.partition(" -- ")
        ns, colon, pats = head.partition(":")
        if not (sep and colon and reason.strip()):
            raise ValueError(f"absent.txt:{no}: expected 'namespace: patterns -- reason': {raw!r}")
        rules.append(Rule(ns.strip(), [p.strip() for p in pats.split(",") if p.strip()],
                          reason.strip(), no))
    return rules


def resolve(namespace: str) -> object | None:
    """The hookgrad object at torch's path `namespace` (module, class or attribute chain)."""
    path = "hookgrad" + namespace[len("torch"):]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return importlib.import_module(path)
        except ImportError:
            pass
        parts = path.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            for attr in parts[cut:]:
                obj = getattr(obj, attr, None)
                if obj is None:
                    return None
            return obj
    return None


def _has(obj: object, name: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return hasattr(obj, name)
        except Exception:  # noqa: BLE001 - a raising property counts as absent
            return False


MARK = "__hookgrad_unsupported__"


def _is_standin(obj: object, name: str) -> bool:
    """Whether `obj.name` is a stand-in of ``hookgrad._unsupported`` (marked with a reason)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return isinstance(getattr(getattr(obj, name), MARK, None), str)
        except Exception:  # noqa: BLE001 - unreadable attributes are not stand-ins
            return False


def census(rules: list[Rule] | None = None) -> list[Row]:
    rules = load_rules() if rules is None else rules
    rows = []
    for ns, names in sorted(load_surface().items()):
        obj, row = resolve(ns), Row(ns)
        for name in names:
            if obj is not None and _has(obj, name):
                row.present.append(name)
                if _is_standin(obj, name):
                    row.standin.append(name)
                continue
            hit = next((r for r in rules if r.namespace == ns
                        and any(fnmatch.fnmatchcase(name, p) for p in r.patterns)), None)
            if hit is None:
                row.missing.append(name)
            else:
                hit.used = True
                row.absent.append(name)
        rows.append(row)
    return rows


def report(rows: list[Row]) -> str:
    lines = [f"{'namespace':<42} {'names':>6} {'present':>8} {'absent':>7} {'missing':>8} "
             f"{'cover':>7} {'stand-in':>8} {'implemented':>11}"]
    tot = [0, 0, 0, 0, 0]
    for r in rows:
        n = len(r.present) + len(r.absent) + len(r.missing)
        tot = [tot[0] + n, tot[1] + len(r.present), tot[2] + len(r.absent),
               tot[3] + len(r.missing), tot[4] + len(r.standin)]
        lines.append(_line(r.namespace, n, len(r.present), len(r.absent), len(r.missing),
                           len(r.standin)))
    lines.append(_line("TOTAL", *tot))
    return "\n".join(lines)


def _line(name: str, n: int, present: int, absent: int, missing: int, standin: int) -> str:
    pct = 100.0 * present / n if n else 100.0
    impl = 100.0 * (present - standin) / n if n else 100.0
    return (f"{name:<42} {n:>6} {present:>8} {absent:>7} {missing:>8} {pct:>6.1f}% "
            f"{standin:>8} {impl:>10.1f}%")


def coverage(rows: list[Row]) -> float:
    n = sum(len(r.present) + len(r.absent) + len(r.missing) for r in rows)
    return 100.0 * sum(len(r.present) for r in rows) / n


def implemented(rows: list[Row]) -> float:
    """Percent of the census that is present and not a stand-in."""
    n = sum(len(r.present) + len(r.absent) + len(r.missing) for r in rows)
    return 100.0 * sum(len(r.present) - len(r.standin) for r in rows) / n


def stale(rows: list[Row], rules: list[Rule] | None = None) -> list[str]:
    """``namespace.name`` of exact names listed in absent.txt that hookgrad now has."""
    rules = load_rules() if rules is None else rules
    present = {r.namespace: set(r.present) for r in rows}
    return [f"{rule.namespace}.{p}" for rule in rules for p in rule.patterns
            if not any(c in p for c in "*?[") and p in present.get(rule.namespace, ())]
