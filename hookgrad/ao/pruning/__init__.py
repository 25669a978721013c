"""``hookgrad.ao.pruning``: importable, unsupported (quantization is outside hookgrad's scope).

Mirrors: ``torch.ao.pruning``. Every public name imports (tools load it at start-up) and raises
NotImplementedError when called or instantiated; see `hookgrad.ao._unsupported`.
"""

from __future__ import annotations

from hookgrad.ao._unsupported import module_getattr


__getattr__ = module_getattr(__name__)
