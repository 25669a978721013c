"""Pure shape arithmetic shared by op impls and rules. Layer 1: no Tensor, no arrays."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache


def normalize_dim(dim: int, ndim: int) -> int:
    """Wrap a possibly negative `dim`; PyTorch's IndexError text when out of range."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


def normalize_dims(dim: int | Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """Dims as a sorted tuple of non-negative ints; None means every dim."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    out = sorted({normalize_dim(d, ndim) for d in dim})
    return tuple(out)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """Mirrors: ``torch.broadcast_shapes`` (RuntimeError text of PyTorch)."""
    ndim = max((len(s) for s in shapes), default=0)
    out = [1] * ndim
    for s in shapes:
        for i, d in enumerate(s, start=ndim - len(s)):
            if d == out[i] or d == 1:
                continue
            if out[i] == 1:
                out[i] = d
            else:
                raise RuntimeError(
                    f"The size of tensor a ({out[i]}) must match the size of tensor b ({d}) at "
                    f"non-singleton dimension {i - ndim + len(s)}"
                )
    return tuple(out)


# The argument-checking layer of broadcasting ops: the op wrappers call these where they promote
# dtypes, before any kernel runs, so a mismatch raises PyTorch's RuntimeError (not NumPy's
# ValueError) and leaves every input untouched. Cached: a model broadcasts the same few shape
# pairs (bias adds) over and over, and the normal path must stay cheap.
@lru_cache(maxsize=4096)
def check_broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast shape of `a` and `b`; PyTorch's RuntimeError when there is none.

    ATen's ``infer_size``: dims are compared from the last one, and the first mismatch names
    its index in the *result* (``(2, 3, 4) + (3, 3)`` fails "at non-singleton dimension 2").
    """
    ndim = max(len(a), len(b))
    out = [0] * ndim
    for i in range(ndim - 1, -1, -1):
        off = ndim - 1 - i
        sa = a[len(a) - 1 - off] if off < len(a) else 1
        sb = b[len(b) - 1 - off] if off < len(b) else 1
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b "
                               f"({sb}) at non-singleton dimension {i}")
        out[i] = sb if sa == 1 else sa
    return tuple(out)


def check_broadcast_all(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """`check_broadcast` over any number of shapes (``where``, ``addcmul``, ``lerp``...)."""
    out = shapes[0]
    for s in shapes[1:]:
        if s != out:
            out = check_broadcast(out, s)
    return out


def check_inplace_broadcast(self_shape: tuple[int, ...], *others: tuple[int, ...]) -> None:
    """An in-place op's operands must broadcast *to* the shape of the tensor written."""
    out = check_broadcast_all((self_shape, *others))
    if out != tuple(self_shape):
        raise RuntimeError(f"output with shape {list(self_shape)} doesn't match the broadcast "
                           f"shape {list(out)}")


def sum_to_dims(shape: Sequence[int], target: Sequence[int]) -> tuple[tuple[int, ...], bool]:
    """Dims of `shape` to sum so the result broadcasts back to `target`, and whether to reshape."""
    lead = len(shape) - len(target)
    dims = list(range(lead))
    for i, t in enumerate(target):
        if t == 1 and shape[lead + i] != 1:
            dims.append(lead + i)
    return tuple(dims), lead > 0


def infer_size(shape: Sequence[int], numel: int) -> tuple[int, ...]:
    """Resolve one ``-1`` in a view/reshape size (PyTorch's error texts)."""
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known != 0:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)
