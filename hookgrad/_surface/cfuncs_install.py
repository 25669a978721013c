"""Install the census functions of issue 21's ``cfuncs`` batch on ``hookgrad`` and ``Tensor``.

Each module listed here has ``__all__`` (the ``torch`` functions it defines) and ``METHODS``
(a name -> function table of ``torch.Tensor`` methods). Mirrors: the ``torch`` / ``torch.Tensor``
names those modules document.
"""

from __future__ import annotations

from typing import Any

from hookgrad._surface import (
    cfuncs_bits,
    cfuncs_create,
    cfuncs_hist,
    cfuncs_ldl,
    cfuncs_lowrank,
    cfuncs_lu,
    cfuncs_native,
    cfuncs_scatter,
    cfuncs_random,
    cfuncs_special,
    cfuncs_stft,
    cfuncs_strided,
    cfuncs_stats,
    cfuncs_views,
    doc_templates,
    tensor_legacy,
)
from hookgrad import linalg, return_types, special
from hookgrad._tensor import Tensor

MODULES = (cfuncs_scatter, cfuncs_stats, cfuncs_hist, cfuncs_bits, cfuncs_views, cfuncs_create,
           cfuncs_lu, cfuncs_special, cfuncs_native,
           cfuncs_lowrank, doc_templates, tensor_legacy, cfuncs_stft,
           cfuncs_random, cfuncs_strided, cfuncs_ldl)


def namespace() -> dict[str, Any]:
    """The ``torch``-level functions of the batch."""
    return {n: getattr(mod, n) for mod in MODULES for n in mod.__all__}


def install() -> None:
    """Attach the batch's methods to `Tensor` (never replacing one that already exists)."""
    for mod in MODULES:
        for name, fn in getattr(mod, "METHODS", {}).items():
            if name not in Tensor.__dict__:
                setattr(Tensor, name, fn)
        for name, cls in getattr(mod, "RETURN_TYPES", {}).items():
            setattr(return_types, name, cls)
        for name, fn in getattr(mod, "LINALG", {}).items():
            if not hasattr(linalg, name):
                setattr(linalg, name, fn)
        for name, fn in getattr(mod, "SPECIAL", {}).items():
            if not hasattr(special, name):
                setattr(special, name, fn)
