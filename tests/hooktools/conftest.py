"""hooktools fixtures: global module-hook registries are reset after every test."""

from __future__ import annotations

import tests.nn._reset  # noqa: F401  (registers the resetter)
