"""``torch._functorch.apis``: the public entry points of torch.func, at their legacy path.

Mirrors: ``torch._functorch.apis`` (``vmap``, ``grad``, ``grad_and_value``).
"""

from __future__ import annotations

from hookgrad._functorch._autodiff import grad, grad_and_value
from hookgrad._functorch.vmap import vmap

__all__ = ["vmap", "grad", "grad_and_value"]
