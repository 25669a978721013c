"""``hookgrad.ao.nn``: importable, unsupported (quantization is outside hookgrad's scope).

Mirrors: ``torch.ao.nn``. Every public name imports (tools load it at start-up) and raises
NotImplementedError when called or instantiated; see `hookgrad.ao._unsupported`.
"""

from __future__ import annotations

from hookgrad.ao._unsupported import module_getattr
from hookgrad.ao.nn import intrinsic, qat, quantized  # noqa: F401

__getattr__ = module_getattr(__name__)
