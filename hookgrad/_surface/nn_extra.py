"""ATen-level ``torch.<op>`` functions of the nn layers that have no ``nn.functional`` spelling
(``torch.grid_sampler``, ``torch.affine_grid_generator``...).

Mirrors: PyTorch's namespace functions of the same names; each is defined next to the
``nn.functional`` op it serves and collected here.
"""

from __future__ import annotations

from hookgrad._tensor import Tensor
from hookgrad.nn import functional as F
from hookgrad.nn import _functional_aten, _functional_ctc, _functional_grid

_SOURCES = (_functional_grid, _functional_ctc, _functional_aten)

__all__: list[str] = []
for _mod in _SOURCES:
    for _name, _fn in _mod.TORCH_FUNCTIONS.items():
        globals()[_name] = _fn
        __all__.append(_name)


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float,
                      norm_type: float) -> Tensor:
    """Rescale the rows of `input` that `indices` name to norm at most `max_norm`, in place.

    Mirrors: ``torch.embedding_renorm_``.
    """
    F._embedding_renorm_(input, indices, max_norm, norm_type)
    return input


__all__.append("embedding_renorm_")
