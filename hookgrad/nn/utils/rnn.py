"""Packed sequences for recurrent layers. Mirrors: ``torch.nn.utils.rnn``.

A `PackedSequence` stores variable-length sequences without padding: ``data`` holds, time step
after time step, the rows of the sequences still running (longest first), and ``batch_sizes[t]``
says how many there are at step ``t``. `pack_padded_sequence` builds one from a padded batch
(``PackPaddedSequenceBackward0``), `pad_packed_sequence` undoes it, and `RNN`/`LSTM`/`GRU` run on
it directly (see `hookgrad.nn.utils._packed_rnn`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from hookgrad._functional import creation as _creation
from hookgrad._functional import shape as _shape
from hookgrad._functional._gather import index_select
from hookgrad._functional.rearrange import pad as _pad
from hookgrad._ops.packing import pack
from hookgrad._dtypes import int64
from hookgrad._tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    """Variable-length sequences packed time step by time step (see the module docstring).

    Build instances with `pack_padded_sequence` or `pack_sequence`, not directly.

    Attributes:
        data: ``[sum(lengths), *]`` rows.
        batch_sizes: ``int64`` count of running sequences per time step.
        sorted_indices: the batch order packing used (``None`` when the input was sorted).
        unsorted_indices: its inverse, which restores the caller's order.

    Mirrors: ``torch.nn.utils.rnn.PackedSequence``.
    """

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should "
                    "never be created manually. They should be instantiated by functions like "
                    "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        if not isinstance(data, (list, tuple)) or len(data) != 2:
            raise TypeError("PackedSequence expects (data, batch_sizes) or a 2-tuple of them")
        return super().__new__(cls, data[0], data[1], sorted_indices, unsorted_indices)

    def _map(self, fn: Any) -> PackedSequence:
        """A copy with `fn` applied to ``data`` (and to the index tensors' device only)."""
        data = fn(self.data)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data.to(...)``; the index tensors stay as they are (CPU).

        Mirrors: ``torch.nn.utils.rnn.PackedSequence.to``.
        """
        return self._map(lambda d: d.to(*args, **kwargs))

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Mirrors: ``torch.nn.utils.rnn.PackedSequence.cpu``."""
        return self._map(lambda d: d.cpu(*args, **kwargs))

    def double(self) -> PackedSequence:
        """Mirrors: ``torch.nn.utils.rnn.PackedSequence.double``."""
        return self._map(lambda d: d.double())

    def float(self) -> PackedSequence:
        """Mirrors: ``torch.nn.utils.rnn.PackedSequence.float``."""
        return self._map(lambda d: d.float())

    def long(self) -> PackedSequence:
        """Mirrors: ``torch.nn.utils.rnn.PackedSequence.long``."""
        return self._map(lambda d: d.long())

    def int(self) -> PackedSequence:
        """Mirrors: ``torch.nn.utils.rnn.PackedSequence.int``."""
        return self._map(lambda d: d.int())

    @property
    def is_cuda(self) -> bool:
        """Mirrors: ``torch.nn.utils.rnn.PackedSequence.is_cuda``."""
        return bool(self.data.is_cuda)

    def is_pinned(self) -> bool:
        """Mirrors: ``torch.nn.utils.rnn.PackedSequence.is_pinned``."""
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse permutation (``output[permutation[i]] = i``), or ``None``.

    Mirrors: ``torch.nn.utils.rnn.invert_permutation``.
    """
    if permutation is None:
        return None
    inv = np.empty(permutation.numel(), dtype=np.int64)
    inv[permutation.cpu().numpy()] = np.arange(permutation.numel(), dtype=np.int64)
    return _creation.tensor(inv, device=permutation.device)


def _lengths_list(lengths: Any) -> list[int]:
    if isinstance(lengths, Tensor):
        return [int(v) for v in lengths.reshape(-1).tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``[T, B, *]`` (``[B, T, *]`` with `batch_first`) of sequences whose
    lengths are `lengths`.

    With ``enforce_sorted=False`` the batch is first sorted by decreasing length (the order is
    kept in ``sorted_indices`` and undone by `pad_packed_sequence` and the RNN modules).

    Raises:
        RuntimeError: unsorted lengths with `enforce_sorted`, a length of 0 or longer than the
            input, or a lengths count that is not the batch size (PyTorch's messages).

    Example:
        >>> import hookgrad as torch
        >>> from hookgrad.nn.utils.rnn import pack_padded_sequence
        >>> p = pack_padded_sequence(torch.tensor([[1, 2], [3, 0]]), [2, 1], batch_first=True)
        >>> p.data.tolist(), p.batch_sizes.tolist()
        ([1, 3, 2], [2, 1])

    Mirrors: ``torch.nn.utils.rnn.pack_padded_sequence``.
    """
    lens = _lengths_list(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-np.asarray(lens, dtype=np.int64), kind="stable")
        lens = [lens[i] for i in order]
        sorted_indices = _creation.tensor(order.astype(np.int64), device=input.device)
        input = index_select(input, 0 if batch_first else 1, sorted_indices)
    batch = input.size(0 if batch_first else 1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if len(lens) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lens)} (batch_size={batch})")
    if any(a < b for a, b in zip(lens, lens[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
            "sidestep this requirement if you do not need ONNX exportability.")
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if lens[0] > input.size(1 if batch_first else 0):
        raise RuntimeError(f"hookgrad: a length ({lens[0]}) exceeds the padded sequence length "
                           f"({input.size(1 if batch_first else 0)})")
    data, batch_sizes = pack(input, lens, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Undo `pack_padded_sequence`: ``(padded batch, lengths)`` in the caller's batch order.

    Raises:
        ValueError: when `total_length` is shorter than the longest sequence.

    Mirrors: ``torch.nn.utils.rnn.pad_packed_sequence``.
    """
    sizes = [int(v) for v in sequence.batch_sizes.tolist()]
    max_len = len(sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{max_len}")
        max_len = total_length
    data = sequence.data
    out = data.new_full((max_len, sizes[0], *tuple(data.shape)[1:]), padding_value)
    offset = 0
    for t, bs in enumerate(sizes):  # row copies: CopySlices nodes, as ATen's composite
        out[t, :bs] = data[offset:offset + bs]
        offset += bs
    lengths = np.array([sum(1 for bs in sizes if bs > b) for b in range(sizes[0])],
                       dtype=np.int64)
    if batch_first:
        out = out.transpose(0, 1)  # type: ignore[attr-defined]
    lengths_t = _creation.tensor(lengths)
    if sequence.unsorted_indices is not None:
        out = index_select(out, 0 if batch_first else 1, sequence.unsorted_indices)
        lengths_t = _creation.tensor(lengths[sequence.unsorted_indices.cpu().numpy()])
    return out, lengths_t


def pad_sequence(sequences: Tensor | Sequence[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack variable-length ``[L_i, *]`` tensors into ``[max L, B, *]`` (or ``[B, max L, *]``),
    padding on the right (or left) with `padding_value`.

    Raises:
        ValueError: on an unknown `padding_side`.

    Example:
        >>> import hookgrad as torch
        >>> from hookgrad.nn.utils.rnn import pad_sequence
        >>> pad_sequence([torch.tensor([1, 2]), torch.tensor([3])], batch_first=True).tolist()
        [[1, 2], [3, 0]]

    Mirrors: ``torch.nn.utils.rnn.pad_sequence``.
    """
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    seqs = list(sequences.unbind(0)) if isinstance(sequences, Tensor) else list(sequences)
    max_len = max(s.size(0) for s in seqs)
    rows = []
    for s in seqs:
        n = s.size(0)
        pad = [0, 0] * (s.dim() - 1) + ([0, max_len - n] if padding_side == "right"
                                         else [max_len - n, 0])
        rows.append(_pad(s, tuple(pad), value=padding_value) if n < max_len else s)
    out = _shape.stack(rows, 0)
    return out if batch_first else out.transpose(0, 1)  # type: ignore[attr-defined]


def unpad_sequence(padded_sequences: Tensor, lengths: Any,
                   batch_first: bool = False) -> list[Tensor]:
    """The list of unpadded sequences of a padded batch.

    Mirrors: ``torch.nn.utils.rnn.unpad_sequence``.
    """
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)  # type: ignore
    return [x[i, :n] for i, n in enumerate(_lengths_list(lengths))]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """`pad_sequence` then `pack_padded_sequence`.

    Mirrors: ``torch.nn.utils.rnn.pack_sequence``.
    """
    lengths = _creation.tensor([v.size(0) for v in sequences], dtype=int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences of a packed batch, in the caller's order.

    Mirrors: ``torch.nn.utils.rnn.unpack_sequence``.
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)



def bind(optional: Any, fn: Any) -> Any:
    """``fn(optional)``, or None when `optional` is None.

    Mirrors: ``torch.nn.utils.rnn.bind``.
    """
    if optional is None:
        return None
    return fn(optional)


def copy_method_params(source_method: Any) -> Any:
    """Decorator giving a method `source_method`'s signature for type checkers (a no-op at run
    time, as in PyTorch).

    Mirrors: ``torch.nn.utils.rnn.copy_method_params``.
    """
    def return_func(func: Any) -> Any:
        return func
    return return_func
