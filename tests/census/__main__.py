"""``python3 -m tests.census``: print the census coverage per namespace (``-v``: list names)."""

from __future__ import annotations

import sys

from tests.census.check import census, report, stale

rows = census()
print(report(rows))
if "-v" in sys.argv:
    for r in rows:
        for kind in ("missing", "absent"):
            names = getattr(r, kind)
            if names:
                print(f"\n{r.namespace} {kind}: {' '.join(names)}")
    old = stale(rows)
    if old:
        print("\nlisted in absent.txt but now present (remove them):", " ".join(old))
