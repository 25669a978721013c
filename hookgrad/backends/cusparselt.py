"""cuSPARSELt (CUDA semi-structured sparsity): absent, as on a CPU build of PyTorch.

Mirrors: ``torch.backends.cusparselt``.
"""

from __future__ import annotations

__all__ = ["version", "is_available", "get_max_alg_id"]


def version() -> int | None:
    """None: no cuSPARSELt library. Mirrors: ``torch.backends.cusparselt.version``."""
    return None


def is_available() -> bool:
    """False. Mirrors: ``torch.backends.cusparselt.is_available``."""
    return False


def get_max_alg_id() -> int | None:
    """None. Mirrors: ``torch.backends.cusparselt.get_max_alg_id``."""
    return None
