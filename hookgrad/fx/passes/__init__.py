"""Graph passes (``hookgrad.fx.passes``). Mirrors: ``torch.fx.passes``."""

from __future__ import annotations

from hookgrad.fx.passes import shape_prop  # noqa: F401
