"""ATen-level ``torch.<op>`` functions of the nn layers that have no ``nn.functional`` spelling
(``torch.grid_sampler``, ``torch.affine_grid_generator``...).

Mirrors: PyTorch's namespace functions of the same names; each is defined next to the
``nn.functional`` op it serves and collected here.
"""

from __future__ import annotations

import numpy as np

from hookgrad._dtypes import int64
from hookgrad._functional import creation as _creation
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


_FAST_SUM_DTYPES = ("float32", "float16", "bfloat16")


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor,
                  scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> tuple:
    """ATen's form: weight first, integer `mode` (0 sum, 1 mean, 2 max), and ATen's auxiliary
    outputs ``(output, offset2bag, bag_size, max_indices)``: ``offset2bag`` is the bag of each
    index (empty on ATen's fast sum path: float32/16 weights without ``padding_idx``),
    ``bag_size`` counts each bag's non-padding indices (zeros for sum), ``max_indices`` holds
    each max's row (max mode) or repeats ``bag_size``.

    Mirrors: ``torch.embedding_bag``.
    """
    if not isinstance(offsets, Tensor):
        raise TypeError("embedding_bag(): argument 'offsets' (position 3) must be Tensor, not "
                        f"{type(offsets).__name__}")
    name = ("sum", "mean", "max")[mode]
    output = F.embedding_bag(indices, weight, offsets, scale_grad_by_freq=scale_grad_by_freq,
                             mode=name, sparse=sparse, per_sample_weights=per_sample_weights,
                             include_last_offset=include_last_offset, padding_idx=padding_idx)
    idx = np.asarray(indices.tolist(), dtype=np.int64).reshape(-1)  # type: ignore[attr-defined]
    starts = np.asarray(offsets.tolist(), dtype=np.int64).reshape(-1)  # type: ignore
    bags = output.shape[0]
    starts = starts[:bags]
    bag_of = np.zeros(idx.size, dtype=np.int64)
    for b, s in enumerate(starts):
        bag_of[s:] = b  # later offsets overwrite: each index gets the last bag starting at or before it
    pad = -1 if padding_idx is None else padding_idx % weight.shape[0]
    live = idx != pad
    counts = np.bincount(bag_of[live], minlength=bags)[:bags] if idx.size else np.zeros(bags,
                                                                                       np.int64)
    fast = mode == 0 and padding_idx is None and str(weight.dtype).split(".")[-1] in (
        _FAST_SUM_DTYPES)
    offset2bag = np.zeros(0, np.int64) if fast else bag_of
    bag_size = np.zeros(bags, np.int64) if mode == 0 else counts
    if mode == 2:
        w = weight.detach().numpy()  # type: ignore[attr-defined]
        max_indices = np.zeros((bags, w.shape[1]), np.int64)
        for b in range(bags):
            rows = idx[(bag_of == b) & live]
            if rows.size:
                max_indices[b] = rows[np.argmax(w[rows], axis=0)]
    else:
        max_indices = bag_size.copy()
    return (output, *(_creation.tensor(a.tolist(), dtype=int64) for a in
                      (offset2bag, bag_size, max_indices)))


__all__.append("embedding_bag")
