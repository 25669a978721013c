"""``hookgrad._VF``: the ATen entry points PyTorch's Python sources reach through ``torch._VF``.

Mirrors: ``torch._VF`` (``_pack_padded_sequence``, ``_pad_packed_sequence`` as
``torch/nn/utils/rnn.py`` calls them, the RNN functions, and every other name of the ``torch``
namespace by fallback, as ``_VF`` is PyTorch's op table).
"""

from __future__ import annotations

from typing import Any

from hookgrad.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence
from hookgrad._tensor import Tensor

__all__ = ["_pack_padded_sequence", "_pad_packed_sequence"]


def _pack_padded_sequence(input: Tensor, lengths: Tensor, batch_first: bool) -> tuple:
    """(data, batch_sizes) of lengths sorted in decreasing order."""
    packed = pack_padded_sequence(input, lengths, batch_first, enforce_sorted=True)
    return packed.data, packed.batch_sizes


def _pad_packed_sequence(data: Tensor, batch_sizes: Tensor, batch_first: bool,
                         padding_value: float, total_length: int) -> tuple:
    """(padded, lengths) from packed data and batch sizes."""
    seq = PackedSequence(data, batch_sizes)
    return pad_packed_sequence(seq, batch_first, padding_value,
                               total_length if total_length > 0 else None)


def __getattr__(name: str) -> Any:
    import importlib
    top = importlib.import_module("hookgrad")
    if hasattr(top, name):
        return getattr(top, name)
    raise AttributeError(f"module 'torch._VF' has no attribute '{name}'")
