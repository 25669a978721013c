"""The primitives still batched by the per-sample loop: the checked-in list may only shrink."""

from __future__ import annotations

from pathlib import Path

import hookgrad  # noqa: F401  (registers primitives and batching rules)
from hookgrad._ops._batching import without_rule

LIST = Path(__file__).with_name("fallback_primitives.txt")


def test_fallback_list_only_shrinks():
    allowed = set(LIST.read_text().split())
    now = set(without_rule())
    new = sorted(now - allowed)
    assert not new, f"primitives lost their batching rule (or were added without one): {new}"
    gone = sorted(allowed - now)
    assert not gone, f"these now have a rule: remove them from {LIST.name}: {gone}"
