"""Pass infrastructure (``hookgrad.fx.passes.infra``). Mirrors: ``torch.fx.passes.infra``."""

from __future__ import annotations

from hookgrad.fx.passes.infra import pass_base, pass_manager  # noqa: F401
