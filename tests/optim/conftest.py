"""Reset the global optimizer step hooks after every test (see tests/conftest.py)."""

from __future__ import annotations

from hookgrad.optim import optimizer as _optimizer
from tests.conftest import RESETTERS


def _reset_global_optimizer_hooks() -> None:
    for registry in (_optimizer._global_optimizer_pre_hooks,
                     _optimizer._global_optimizer_post_hooks):
        registry.clear()
        registry.flags.clear()


RESETTERS.append(_reset_global_optimizer_hooks)
