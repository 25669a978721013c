"""Flip, roll, repeat/tile, tril/triu and padding. Mirrors the ``torch`` functions of those names.

Re-exported by `hookgrad._functional.shape` (its ``__all__`` and ``METHODS`` include these).
"""

from __future__ import annotations

from typing import Any

from hookgrad._dispatch import bind
from hookgrad._functional._slicing import slice_dim
from hookgrad._functional._views import UNSET, one_spelling
from hookgrad._ops._checks import int_args, tensor_arguments
from hookgrad._ops._shapes import normalize_dim
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._tensor import Tensor

__all__ = ["flip", "fliplr", "flipud", "roll", "tile", "tril", "triu", "pad"]


def _ints(args: tuple, fn: str, arg: str) -> tuple:
    """An int-list argument given as ints or one sequence; PyTorch's TypeError for anything
    else (floats are not truncated, strings not parsed)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return int_args(args[0], fn, arg)
    return int_args(args, fn, arg)


def flip(input: Tensor, *order: Any, dims: Any = UNSET) -> Tensor:
    """Mirrors: ``torch.flip``."""
    n = input._data.ndim
    norm = tuple(normalize_dim(d, n) for d in _ints(one_spelling(order, dims, "flip"), "flip", "dims"))
    if len(set(norm)) != len(norm):
        raise RuntimeError(f"dim {norm[0]} appears multiple times in the list of dims")
    return bind(P["flip"], (input,), {"dims": norm})


def fliplr(input: Tensor) -> Tensor:
    """Mirrors: ``torch.fliplr``."""
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


def flipud(input: Tensor) -> Tensor:
    """Mirrors: ``torch.flipud``."""
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """Mirrors: ``torch.roll`` (no `dims`: roll the flattened tensor, keep the shape)."""
    sh = _ints((shifts,), "roll", "shifts")
    if dims is None:
        if len(sh) != 1:
            raise RuntimeError(
                f"`shifts` required to be of size 1 when `dims` is not given, but got {len(sh)}"
            )
        return bind(P["roll"], (input,), {"shifts": sh, "dims": ()})
    ds = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(sh) != len(ds):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(sh)}, dims:{len(ds)}")
    n = input._data.ndim
    return bind(P["roll"], (input,), {"shifts": sh, "dims": tuple(normalize_dim(d, n) for d in ds)})


def repeat(self: Tensor, *sizes: Any, repeats: Any = UNSET) -> Tensor:
    """Mirrors: ``torch.Tensor.repeat``."""
    reps = _ints(one_spelling(sizes, repeats, "repeat"), "repeat", "repeats")
    if len(reps) < self._data.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
            "tensor"
        )
    if any(r < 0 for r in reps):
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(reps)}: {list(reps)}"
        )
    return bind(P["repeat"], (self,), {"repeats": reps})


def tile(input: Tensor, dims: Any) -> Tensor:
    """Mirrors: ``torch.tile`` (``repeat`` with leading ones; ``RepeatBackward0``)."""
    reps = _ints((dims,), "tile", "dims")
    n = input._data.ndim
    if len(reps) < n:
        reps = (1,) * (n - len(reps)) + reps
    return repeat(input, reps)


def _tri(name: str, input: Tensor, diagonal: int) -> Tensor:
    if input._data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    if isinstance(diagonal, bool) or not isinstance(diagonal, int):
        raise TypeError(f"{name}(): argument 'diagonal' (position 1) must be int, not "
                        f"{type(diagonal).__name__}")
    return bind(P[name], (input,), {"diagonal": diagonal})


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """Mirrors: ``torch.tril``."""
    return _tri("tril", input, diagonal)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """Mirrors: ``torch.triu``."""
    return _tri("triu", input, diagonal)


@tensor_arguments
def pad(input: Tensor, pad: Any, mode: str = "constant", value: Any = None) -> Tensor:
    """Mirrors: ``torch.nn.functional.pad`` (modes ``constant``, ``reflect``, ``replicate``,
    ``circular``)."""
    pads = tuple(int(p) for p in pad)
    n = input._data.ndim
    if len(pads) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pads) // 2 > n:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input "
            "dimension but got padding length "
            f"{len(pads)} and input of dimension {n}"
        )
    if mode == "constant":
        return _constant_pad(input, pads, 0 if value is None else value)
    if value is not None and value != 0:
        raise NotImplementedError(f'Padding mode "{mode}" doesn\'t take in value argument.')
    if mode == "circular":
        return _circular_pad(input, pads)
    if mode not in ("reflect", "replicate"):
        raise NotImplementedError(f"hookgrad: padding mode {mode!r} is not supported")
    if input._data.dtype.kind == "b":  # ATen's reflection/replication kernels have no bool
        kernel = "reflection" if mode == "reflect" else "replication"
        raise NotImplementedError(
            f"\"{kernel}_pad{len(pads) // 2}d\" not implemented for 'Bool'")
    return _edge_pad(input, pads, mode)


def _circular_pad(input: Tensor, pads: tuple) -> Tensor:
    """PyTorch's ``_pad_circular``: copies into an empty tensor (so ``grad_fn`` is CopySlices)."""
    k, n = len(pads) // 2, input._data.ndim
    if n not in (k + 1, k + 2):
        raise RuntimeError(
            f"Expected {k + 1}D or {k + 2}D (batch mode) tensor for circular "
            f"padding of {k} dims, but got {n}D"
        )
    in_shape = input._data.shape
    out_shape = list(in_shape)
    for i in range(k):
        d = n - 1 - i
        out_shape[d] += pads[2 * i] + pads[2 * i + 1]
        if max(pads[2 * i], pads[2 * i + 1]) > in_shape[d]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
    out = input.new_empty(out_shape)
    out_slice, in_slice = out, input
    for i in range(k):
        d, left, right = n - 1 - i, pads[2 * i], pads[2 * i + 1]
        out_slice = slice_dim(out_slice, d, max(left, 0), out_shape[d] - max(right, 0), 1)
        in_slice = slice_dim(in_slice, d, max(-left, 0), in_shape[d] - max(-right, 0), 1)
    out_slice.copy_(in_slice)
    for i in range(k):
        d, left, right = n - 1 - i, pads[2 * i], pads[2 * i + 1]
        end = out_shape[d]
        if left > 0:
            src = slice_dim(out, d, end - left - max(right, 0), end - max(right, 0), 1)
            slice_dim(out, d, 0, left, 1).copy_(src)
        if right > 0:
            src = slice_dim(out, d, max(left, 0), max(left, 0) + right, 1)
            slice_dim(out, d, end - right, end, 1).copy_(src)
    return out


def _constant_pad(input: Tensor, pads: tuple, value: Any) -> Tensor:
    shape = input._data.shape
    for i in range(len(pads) // 2):
        d = len(shape) - 1 - i
        if shape[d] + min(pads[2 * i], 0) + min(pads[2 * i + 1], 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    return bind(P["constant_pad_nd"], (input,), {"pad": pads, "value": value})


def _edge_pad(input: Tensor, pads: tuple, mode: str) -> Tensor:
    k = len(pads) // 2
    n = input._data.ndim
    if k not in (1, 2, 3) or n not in (k + 1, k + 2):
        raise NotImplementedError(
            "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now"
        )
    shape = input._data.shape
    for i in range(k):
        d = n - 1 - i
        left, right = pads[2 * i], pads[2 * i + 1]
        if mode == "reflect" and (left >= shape[d] or right >= shape[d]):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({left}, {right}) at dimension {d} of input "
                f"{list(shape)}"
            )
        if min(left, right) < 0 or shape[d] == 0:
            raise RuntimeError(
                f"hookgrad: {mode} padding needs non-negative pads and a non-empty input"
            )
    name = ("reflection_pad" if mode == "reflect" else "replication_pad") + f"{k}d"
    return bind(P[name], (input,), {"padding": pads})


METHODS = {
    "flip": flip,
    "fliplr": fliplr,
    "flipud": flipud,
    "roll": roll,
    "repeat": repeat,
    "tile": tile,
    "tril": tril,
    "triu": triu,
}
