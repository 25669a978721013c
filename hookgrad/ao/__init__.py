"""``hookgrad.ao``: importable, unsupported (quantization is outside hookgrad's scope).

Mirrors: ``torch.ao``. Every public name imports (tools load it at start-up) and raises
NotImplementedError when called or instantiated; see `hookgrad.ao._unsupported`.
"""

from __future__ import annotations

from hookgrad.ao._unsupported import module_getattr
from hookgrad.ao import nn, pruning, quantization  # noqa: F401

__getattr__ = module_getattr(__name__)
