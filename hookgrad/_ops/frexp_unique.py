"""``frexp`` and ``unique_consecutive``: two primitives whose nodes PyTorch records.

Mirrors: ``torch.frexp`` (``FrexpBackward0``: the mantissa's gradient is
``grad / 2**exponent``) and ``torch.unique_consecutive`` (``UniqueConsecutiveBackward0``, whose
backward raises NotImplementedError as PyTorch's does).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._ops.registry import defop
from hookgrad._tensor import Tensor


def _frexp(self: Any) -> tuple:
    xp = _backend.namespace_of(self)
    m, e = xp.frexp(self)
    return m.astype(self.dtype), e.astype(np.int32)


def _pow2(e: Tensor, dtype: Any) -> Tensor:
    return Tensor._make(_backend.namespace_of(e._data).ldexp(
        np.ones((), dtype=np.dtype(str(dtype).replace("torch.", ""))), e._data))


defop(
    "frexp",
    impl=_frexp,
    num_outputs=2,
    nondifferentiable_outputs=(1,),
    saves=("result1",),
    vjp={"self": lambda grads, result1, self_dtype: grads[0] / _pow2(result1, self_dtype)},
    jvp={"self": lambda t, result1, self_dtype: (t / _pow2(result1, self_dtype), None)},
)


def _runs(data: Any, dim: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Start positions of the runs of equal consecutive elements (slices along `dim`)."""
    arr = _backend.to_numpy(data)
    if dim is None:
        flat = arr.reshape(-1)
        change = flat[1:] != flat[:-1]
    else:
        moved = np.moveaxis(arr, dim, 0).reshape(arr.shape[dim], -1)
        change = (moved[1:] != moved[:-1]).any(axis=1)
    n = arr.size if dim is None else arr.shape[dim]
    starts = np.concatenate([[0], np.nonzero(change)[0] + 1]) if n else np.zeros(0, np.int64)
    return starts.astype(np.int64), np.diff(np.append(starts, n)).astype(np.int64)


def _unique_consecutive(self: Any, dim: int | None = None) -> tuple:
    xp = _backend.namespace_of(self)
    starts, counts = _runs(self, dim)
    inverse = np.repeat(np.arange(len(starts), dtype=np.int64), counts)
    if dim is None:
        values = self.reshape(-1)[xp.asarray(starts)]  # host positions, device values
        inverse = inverse.reshape(self.shape)
    else:
        values = xp.take(self, xp.asarray(starts), axis=dim)
    return values, xp.asarray(inverse), xp.asarray(counts)


def _no_derivative(grads: Any) -> Any:
    raise NotImplementedError("the derivative for 'unique_consecutive' is not implemented.")


defop(
    "unique_consecutive",
    impl=_unique_consecutive,
    params=("dim",),
    num_outputs=3,
    nondifferentiable_outputs=(1, 2),
    vjp={"self": _no_derivative},
    jvp={"self": lambda t: _no_jvp()},
)


def _no_jvp() -> Any:
    raise NotImplementedError("Trying to use forward AD with unique_consecutive that does not "
                              "support it because it has not been implemented yet.")


# vmap: frexp is elementwise; unique_consecutive's output size depends on the values, so its
# rule (_batching_extra) raises PyTorch's dynamic-shape error
from hookgrad._ops._batching import batches as _batches  # noqa: E402
from hookgrad._ops._batching import broadcasting as _broadcasting  # noqa: E402

_batches(["frexp"], _broadcasting)
