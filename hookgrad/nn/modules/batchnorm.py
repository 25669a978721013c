"""The ``torch.nn.modules.batchnorm`` import path. Mirrors: ``torch.nn.modules.batchnorm``.

hookgrad keeps batch norm in ``normalization.py`` (and the 3-d/sync variants in
``batchnorm3d.py`` when present); tools import ``_BatchNorm`` / ``_NormBase`` from this path at
load time to recognise batch-norm layers, so it re-exports every batch-norm class of those files.
"""

from __future__ import annotations

import importlib
import importlib.util

from hookgrad.nn.modules import normalization as _normalization

_NormBase = _normalization._NormBase
_BatchNorm = _normalization._BatchNorm
__all__: list[str] = []

for _family in ("normalization", "batchnorm3d"):
    _name = f"hookgrad.nn.modules.{_family}"
    if importlib.util.find_spec(_name) is None:
        continue
    _mod = importlib.import_module(_name)
    for _cls in dir(_mod):
        _obj = getattr(_mod, _cls)
        if ("BatchNorm" in _cls and not _cls.startswith("_") and isinstance(_obj, type)
                and _cls not in __all__):
            globals()[_cls] = _obj
            __all__.append(_cls)
