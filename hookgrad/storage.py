"""``hookgrad.storage``: the module PyTorch's storage classes live in.

Mirrors: ``torch.storage`` (``TypedStorage``, ``UntypedStorage``; see `hookgrad._storage`).
"""

from __future__ import annotations

from hookgrad._storage import TypedStorage, UntypedStorage

__all__ = ["TypedStorage", "UntypedStorage"]
