"""Graph passes (``hookgrad.fx.passes``). Mirrors: ``torch.fx.passes``."""

from __future__ import annotations

from hookgrad.fx.passes import shape_prop  # noqa: F401
from hookgrad.fx.passes import split_module  # noqa: F401,E402
from hookgrad.fx.passes import utils  # noqa: F401,E402
from hookgrad.fx.passes import infra  # noqa: F401,E402
from hookgrad.fx.passes import pass_manager  # noqa: F401,E402
