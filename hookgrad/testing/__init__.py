"""Testing helpers. Mirrors: ``torch.testing`` (``assert_close``).

The oracle helpers used by hookgrad's own test-suite live in `hookgrad.testing._oracle` and the
op table for generic tests in `hookgrad.testing._opspec`; neither is public API.
"""

from __future__ import annotations

from hookgrad.testing._comparison import assert_close
from hookgrad.testing._creation import assert_allclose, make_tensor
from hookgrad.testing.distributed import run_mpi, run_ranks  # contracts/distributed.md §11.4

__all__ = ["assert_close", "assert_allclose", "make_tensor", "run_mpi", "run_ranks"]
