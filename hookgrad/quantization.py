"""``hookgrad.quantization``: the legacy spelling of ``hookgrad.ao.quantization`` (unsupported).

Mirrors: ``torch.quantization``; every public name imports and raises NotImplementedError when
called or instantiated.
"""

from __future__ import annotations

from hookgrad.ao._unsupported import module_getattr

__getattr__ = module_getattr("hookgrad.quantization")
