"""Layers. Mirrors: ``torch.nn.modules``.

Layer families written by other work streams (convolution, pooling, normalization, recurrent,
attention, transformer) are exported when their files exist.
"""

from __future__ import annotations

import importlib
import importlib.util

from hookgrad.nn.modules.module import Module

__all__ = ["Module"]

_FAMILIES = (
    "linear", "flatten", "dropout", "sparse", "nonlinearity", "container", "loss",
    "conv", "pooling", "normalization", "rnn", "activation", "transformer",
    "padding", "upsampling", "pixelshuffle", "distance", "instancenorm", "pooling3d", "conv3d",
    "batchnorm3d", "transformer_decoder",
    "fold", "channelshuffle", "census_losses", "census_layers",  # census (issue 21)
    "embedding_bag",  # real libraries (opacus) import it at load time (issue 21)
    "lazy", "lazy_layers",
    "fractional_pool", "ctc", "crossmap_lrn", "adaptive", "linear_cross_entropy",  # census
)


def _export(family: str) -> None:
    name = f"{__name__}.{family}"
    if importlib.util.find_spec(name) is None:
        return
    mod = importlib.import_module(name)
    for public in getattr(mod, "__all__", ()):
        globals()[public] = getattr(mod, public)
        __all__.append(public)


for _family in _FAMILIES:
    _export(_family)
