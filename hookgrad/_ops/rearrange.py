"""Copying rearrangements: flip, roll, repeat, tril/triu and padding (``F.pad``'s primitives).

All impls return fresh arrays (``np.flip`` alone would be a view). Padding follows
``torch.nn.functional.pad``: ``pad`` lists ``(left, right)`` pairs starting from the last dim;
constant padding may be negative (cropping).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad._memory_format import as_format, suggest
from hookgrad._dispatch import bind
from hookgrad._ops.registry import PRIMITIVES as P
from hookgrad._ops.registry import defop
from hookgrad._ops.shape import zeros_of
from hookgrad._tensor import Tensor

defop(
    "flip",
    impl=lambda self, dims: np.flip(self, dims).copy() if dims else self.copy(),
    params=("dims",),
    vjp={"self": lambda grad, dims: grad.flip(dims)},
    jvp="linear",
)


def _roll_impl(self: Any, shifts: tuple, dims: tuple) -> Any:
    xp = _backend.namespace_of(self)
    if not dims:
        return xp.roll(self.reshape(-1), shifts[0]).reshape(self.shape)
    out = xp.roll(self, shifts, dims)
    # row-major whatever the input's layout, as ATen's roll allocates (NumPy keeps the layout)
    return out if out.ndim == 0 or out.flags.c_contiguous else xp.ascontiguousarray(out)


defop(
    "roll",
    impl=_roll_impl,
    params=("shifts", "dims"),
    vjp={
        "self": lambda grad, shifts, dims: bind(
            P["roll"], (grad,), {"shifts": tuple(-s for s in shifts), "dims": dims}
        )
    },
    jvp="linear",
)


def _repeat_grad(grad: Tensor, self_shape: tuple, repeats: tuple) -> Tensor:
    shape = (1,) * (len(repeats) - len(self_shape)) + tuple(self_shape)
    split = []
    for r, s in zip(repeats, shape, strict=False):
        split += [r, s]
    g = grad.reshape(split).sum(tuple(range(0, len(split), 2)))
    return g.reshape(self_shape)


defop(
    "repeat",
    # ATen allocates the result row-major; NumPy's tile by ones copies in the input's layout
    impl=lambda self, repeats: _backend.namespace_of(self).ascontiguousarray(
        _backend.namespace_of(self).tile(self, repeats)),
    params=("repeats",),
    vjp={"self": _repeat_grad},
    jvp="linear",
)

defop(
    "tril",
    impl=lambda self, diagonal=0: _backend.namespace_of(self).tril(self, diagonal),
    params=("diagonal",),
    vjp={"self": lambda grad, diagonal: grad.tril(diagonal)},
    jvp="linear",
)
defop(
    "triu",
    impl=lambda self, diagonal=0: _backend.namespace_of(self).triu(self, diagonal),
    params=("diagonal",),
    vjp={"self": lambda grad, diagonal: grad.triu(diagonal)},
    jvp="linear",
)


# ---------------------------------------------------------------------------- padding
def pad_pairs(pad: tuple, ndim: int) -> list:
    """``(dim, left, right)`` for each dim `pad` touches, last dim first."""
    return [(ndim - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)]


def _constant_pad_impl(self: Any, pad: tuple, value: Any = 0) -> Any:
    xp = _backend.namespace_of(self)
    widths = [(0, 0)] * self.ndim
    crop = [slice(None)] * self.ndim
    for d, left, right in pad_pairs(pad, self.ndim):
        widths[d] = (max(left, 0), max(right, 0))
        crop[d] = slice(max(-left, 0), self.shape[d] - max(-right, 0))
    cropped = self[tuple(crop)]
    if all(w == (0, 0) for w in widths):
        return cropped.copy()
    return xp.pad(cropped, widths, mode="constant", constant_values=value)


def constant_pad(t: Tensor, pad: tuple, value: Any) -> Tensor:
    return bind(P["constant_pad_nd"], (t,), {"pad": tuple(pad), "value": value})


defop(
    "constant_pad_nd",
    impl=_constant_pad_impl,
    params=("pad", "value"),
    vjp={"self": lambda grad, pad: constant_pad(grad, tuple(-p for p in pad), 0)},
    jvp={"self": lambda t, pad: constant_pad(t, pad, 0)},
)


def _edge_pad_impl(mode: str) -> Any:
    def impl(self: Any, padding: tuple) -> Any:
        widths = [(0, 0)] * self.ndim
        for d, left, right in pad_pairs(padding, self.ndim):
            widths[d] = (left, right)
        out = _backend.namespace_of(self).pad(self, widths, mode=mode)
        if type(out) is np.ndarray and not out.flags.c_contiguous:
            # ATen allocates in the input's suggested memory format (row-major unless channels
            # last); NumPy's pad keeps a column-major input's order
            out = as_format(out, suggest(self))
        return out

    return impl


def _edge_pad_grad(mode: str) -> Any:
    def rule(grad: Tensor, self: Tensor, padding: tuple) -> Tensor:
        # `self` is read (saved) as PyTorch's <mode>_pad<k>d_backward(grad, self, padding)
        self_shape = tuple(self.shape)
        # Each output position copies one input position per dim: sum the gradient back with
        # index_add, one dim at a time (differentiable, so double backward works).
        for d, left, right in pad_pairs(padding, len(self_shape)):
            n = self_shape[d]
            src = np.pad(np.arange(n, dtype=np.int64), (left, right), mode=mode)
            shape = tuple(grad.shape[:d]) + (n,) + tuple(grad.shape[d + 1 :])
            index = Tensor._make(_backend.namespace_of(grad._data).asarray(src))
            grad = bind(
                P["index_add"], (zeros_of(grad, shape), index, grad), {"dim": d, "alpha": 1}
            )
        return grad

    return rule


for _k in (1, 2, 3):
    defop(
        f"reflection_pad{_k}d",
        impl=_edge_pad_impl("reflect"),
        params=("padding",),
        saves=("self",),
        double_reads={"self": ("self",)},  # NOTE [Double-backward reads]: zeros_like(self)
        double_zero=True,
        node_name=f"ReflectionPad{_k}DBackward0",
        vjp={"self": _edge_pad_grad("reflect")},
        jvp="linear",
    )
    defop(
        f"replication_pad{_k}d",
        impl=_edge_pad_impl("edge"),
        params=("padding",),
        saves=("self",),
        double_reads={"self": ("self",)},
        double_zero=True,
        node_name=f"ReplicationPad{_k}DBackward0",
        vjp={"self": _edge_pad_grad("edge")},
        jvp="linear",
    )

__all__ = ["pad_pairs", "constant_pad"]
