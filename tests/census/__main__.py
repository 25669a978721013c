"""``python3 -m tests.census``: print the census coverage per namespace (``-v``: list names).

Two figures per row: ``cover`` (present %) and ``implemented`` (present minus the stand-ins of
``hookgrad._unsupported``, whose entry points raise).
"""

from __future__ import annotations

import sys

from tests.census.check import census, report, stale

rows = census()
print(report(rows))
if "-v" in sys.argv:
    for r in rows:
        for kind in ("missing", "absent", "standin"):
            names = getattr(r, kind)
            if names:
                print(f"\n{r.namespace} {kind}: {' '.join(names)}")
    old = stale(rows)
    if old:
        print("\nlisted in absent.txt but now present (remove them):", " ".join(old))
