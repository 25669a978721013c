"""Helpers for graph passes (``hookgrad.fx.passes.utils``). Mirrors: ``torch.fx.passes.utils``."""

from __future__ import annotations

from hookgrad.fx.passes.utils import fuser_utils, matcher_utils  # noqa: F401
