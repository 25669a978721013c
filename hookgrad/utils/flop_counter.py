"""`FlopCounterMode`: count matmul and convolution FLOPs per module, forward and backward.

Built on `TorchDispatchMode` (every primitive call) and `ModuleTracker` (which modules are
running), as PyTorch builds it. The formulas are PyTorch's: ``2*m*n*k`` for ``mm``/``addmm``,
``2*b*m*n*k`` for ``bmm``/``baddbmm``, and PyTorch's ``conv_flop_count`` for ``convolution``.

Differences from PyTorch, on purpose and documented:
- hookgrad computes a convolution's gradients with ``convolution`` calls of its own; the mode
  counts them as PyTorch counts its single ``convolution_backward`` (hooks on the node time
  the gradient computation; the inner calls are not counted twice).
- Attention is counted through the ``bmm`` calls it is built from, which gives PyTorch's
  ``sdpa_flop_count``; PyTorch on CPU reports 0 for ``scaled_dot_product_attention`` because its
  CPU attention kernel has no formula registered.
- `get_table` does not need the ``tabulate`` package.

Example:
    >>> import hookgrad as torch
    >>> from hookgrad.utils.flop_counter import FlopCounterMode
    >>> lin = torch.nn.Linear(3, 5)
    >>> with FlopCounterMode(display=False) as fc:
    ...     lin(torch.randn(4, 3, requires_grad=True)).sum().backward()
    >>> fc.get_total_flops()  # addmm forward + two mm in backward
    360

Mirrors: ``torch.utils.flop_counter``.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Callable
from math import prod
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.utils._python_dispatch import OpOverloadPacket, TorchDispatchMode, ops
from hookgrad.utils.module_tracker import ModuleTracker

__all__ = ["FlopCounterMode", "register_flop_formula", "conv_flop_count", "conv_backward_flop",
           "sdpa_flop_count",
           "get_suffix_str", "convert_num_with_suffix"]

_REGISTRY: dict[str, Callable[..., int]] = {}


def _key(target: Any) -> str:
    return str(target.overloadpacket if hasattr(target, "overloadpacket") else target)


def register_flop_formula(targets: Any, get_raw: bool = False) -> Callable:
    """Decorator registering ``formula(*input_shapes, out_shape=..., **params) -> int``.

    Mirrors: ``torch.utils.flop_counter.register_flop_formula``.
    """
    def register(fn: Callable[..., int]) -> Callable[..., int]:
        for t in targets if isinstance(targets, (list, tuple)) else (targets,):
            _REGISTRY[_key(t)] = fn
        return fn

    return register


@register_flop_formula("aten.mm")
def mm_flop(a_shape: Any, b_shape: Any, *args: Any, out_shape: Any = None, **kw: Any) -> int:
    """FLOPs of ``[m, k] @ [k, n]``. Mirrors: ``torch.utils.flop_counter.mm_flop``."""
    m, k = a_shape
    k2, n = b_shape
    assert k == k2
    return m * n * 2 * k


@register_flop_formula("aten.addmm")
def addmm_flop(self_shape: Any, a_shape: Any, b_shape: Any, out_shape: Any = None,
               **kw: Any) -> int:
    """Mirrors: ``torch.utils.flop_counter.addmm_flop`` (the add is not counted)."""
    return mm_flop(a_shape, b_shape)


@register_flop_formula("aten.bmm")
def bmm_flop(a_shape: Any, b_shape: Any, out_shape: Any = None, **kw: Any) -> int:
    """FLOPs of a batched matmul. Mirrors: ``torch.utils.flop_counter.bmm_flop``."""
    b, m, k = a_shape
    b2, k2, n = b_shape
    assert b == b2 and k == k2
    return b * m * n * 2 * k


@register_flop_formula("aten.baddbmm")
def baddbmm_flop(self_shape: Any, a_shape: Any, b_shape: Any, out_shape: Any = None,
                 **kw: Any) -> int:
    """Mirrors: ``torch.utils.flop_counter.baddbmm_flop``."""
    return bmm_flop(a_shape, b_shape)


def conv_flop_count(x_shape: Any, w_shape: Any, out_shape: Any, transposed: bool = False) -> int:
    """FLOPs of one convolution. Mirrors: ``torch.utils.flop_counter.conv_flop_count``."""
    batch_size = x_shape[0]
    conv_shape = (x_shape if transposed else out_shape)[2:]
    c_out, c_in, *filter_size = w_shape
    return prod(conv_shape) * prod(filter_size) * batch_size * c_out * c_in * 2


@register_flop_formula("aten.convolution")
def conv_flop(x_shape: Any, w_shape: Any, _bias: Any = None, _stride: Any = None,
              _padding: Any = None, _dilation: Any = None, transposed: bool = False, *args: Any,
              out_shape: Any = None, **kw: Any) -> int:
    """Mirrors: ``torch.utils.flop_counter.conv_flop``."""
    return conv_flop_count(x_shape, w_shape, out_shape, transposed=transposed)


def _t(shape: Any) -> tuple:
    return (shape[1], shape[0], *shape[2:])


def conv_backward_flop(grad_out_shape: Any, x_shape: Any, w_shape: Any, transposed: bool,
                       output_mask: Any) -> int:
    """FLOPs of PyTorch's ``convolution_backward`` (input and/or weight gradient).

    Mirrors: ``torch.utils.flop_counter.conv_backward_flop``.
    """
    flops = 0
    if output_mask[0]:
        flops += conv_flop_count(grad_out_shape, w_shape, x_shape, not transposed)
    if output_mask[1]:
        first, second = (grad_out_shape, x_shape) if transposed else (x_shape, grad_out_shape)
        flops += conv_flop_count(_t(first), _t(second), _t(w_shape), transposed=False)
    return flops


def sdpa_flop_count(query_shape: Any, key_shape: Any, value_shape: Any) -> int:
    """FLOPs of ``softmax(q @ k^T) @ v`` (the two batched matmuls).

    Mirrors: ``torch.utils.flop_counter.sdpa_flop_count``.
    """
    b, h, s_q, d_q = query_shape
    _b2, _h2, s_k, _d2 = key_shape
    _b3, _h3, _s3, d_v = value_shape
    return bmm_flop((b * h, s_q, d_q), (b * h, d_q, s_k)) + bmm_flop(
        (b * h, s_q, s_k), (b * h, s_k, d_v))


def get_suffix_str(number: int) -> str:
    """``""``, ``"K"``, ``"M"``... for the size of `number`. Mirrors: ``get_suffix_str``."""
    suffixes = ["", "K", "M", "B", "T"]
    index = max(0, min(len(suffixes) - 1, (len(str(number)) - 2) // 3))
    return suffixes[index]


def convert_num_with_suffix(number: int, suffix: str) -> str:
    """`number` scaled to `suffix`, 3 decimals. Mirrors: ``convert_num_with_suffix``."""
    index = ["", "K", "M", "B", "T"].index(suffix)
    value = f"{number / 1000 ** index:.3f}"
    return value + suffix


# PyTorch keys a convolution's gradient FLOPs under this op (hookgrad has no such primitive).
_CONVOLUTION_BACKWARD = ops.aten.convolution_backward
_REGISTRY[str(_CONVOLUTION_BACKWARD)] = conv_backward_flop
_CONVOLUTION: list = [None]  # hookgrad.ops.aten.convolution, looked up on first use


def _packet(name: str) -> Any:
    """The op packet named ``aten.<op>`` (None when hookgrad has no such op, e.g. baddbmm)."""
    space, _, op = name.partition(".")
    return getattr(getattr(ops, space), op, None)


def _shape(x: Any) -> Any:
    return tuple(x.shape) if isinstance(x, Tensor) else x


class FlopCounterMode(TorchDispatchMode):
    """Counts FLOPs of the code run inside it, per module (see module docstring).

    Args:
        mods: ignored (PyTorch's deprecated argument; a warning says so).
        depth: module depth shown by the table printed on exit.
        display: print the table on exit.
        custom_mapping: ``{op: formula}`` added to the built-in formulas.

    Mirrors: ``torch.utils.flop_counter.FlopCounterMode``.
    """

    def __init__(self, mods: Any = None, depth: int = 2, display: bool = True,
                 custom_mapping: dict | None = None) -> None:
        if _CONVOLUTION[0] is None:
            _CONVOLUTION[0] = ops.aten.convolution
        self._in_conv_backward = 0
        self._handles = []
        self.flop_counts: dict = defaultdict(lambda: defaultdict(int))
        self.depth = depth
        self.display = display
        self.mod_tracker = ModuleTracker()
        # keyed by op packets, as PyTorch's (``torch.ops.aten.mm``)
        self.flop_registry = {_packet(name): fn for name, fn in _REGISTRY.items()
                              if _packet(name) is not None}
        self.flop_registry.update({getattr(k, "overloadpacket", k): v
                                   for k, v in (custom_mapping or {}).items()})
        if mods is not None:
            warnings.warn("mods argument is not needed anymore, you can stop passing it",
                          stacklevel=2)

    def get_total_flops(self) -> int:
        return sum(self.flop_counts["Global"].values())

    def get_flop_counts(self) -> dict[str, dict[Any, int]]:
        """``{module name: {op packet: flops}}`` (``"Global"`` is everything)."""
        return {k: dict(v) for k, v in self.flop_counts.items()}

    def get_table(self, depth: int | None = None) -> str:
        depth = 999999 if depth is None else depth
        total = self.get_total_flops()
        rows = []
        for mod_name in sorted(self.flop_counts, key=lambda n: (n != "Global", n)):
            mod_depth = 0 if mod_name == "Global" else mod_name.count(".") + 1
            if mod_depth > depth:
                continue
            counts = self.flop_counts[mod_name]
            pad = " " * mod_depth
            rows.append(self._row(pad + mod_name, sum(counts.values()), total))
            for op, n in counts.items():
                rows.append(self._row(f"{pad} - {op}", n, total))
        widths = [max(len(r[i]) for r in [("Module", "FLOP", "% Total"), *rows])
                  for i in range(3)]
        lines = [("Module", "FLOP", "% Total"), tuple("-" * w for w in widths), *rows]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip()
                         for line in lines)

    @staticmethod
    def _row(name: str, flops: int, total: int) -> tuple[str, str, str]:
        pct = f"{100 * flops / total:.2f}%" if total else "0.00%"
        return (name, convert_num_with_suffix(flops, get_suffix_str(total)), pct)

    def __enter__(self) -> FlopCounterMode:
        self.flop_counts.clear()
        self._in_conv_backward = 0
        self._handles: list = []
        self.mod_tracker.__enter__()
        super().__enter__()
        return self

    def __exit__(self, *args: object) -> None:
        super().__exit__(*args)
        self.mod_tracker.__exit__()
        for h in self._handles:
            h.remove()
        if self.display:
            print(self.get_table(self.depth))

    def _add(self, packet: Any, flops: int) -> None:
        for parent in set(self.mod_tracker.parents):
            self.flop_counts[parent][packet] += flops

    def __torch_dispatch__(self, func: Any, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        packet: OpOverloadPacket = func.overloadpacket
        if packet is _CONVOLUTION[0]:
            if self._in_conv_backward:  # counted once, as convolution_backward (below)
                return out
            self._watch_conv_backward(out, args, kwargs)
        formula = self.flop_registry.get(packet)
        if formula is not None:
            first = out[0] if isinstance(out, tuple) else out
            self._add(packet, formula(*[_shape(a) for a in args], out_shape=_shape(first),
                                      **kwargs))
        return out

    def _watch_conv_backward(self, out: Any, args: tuple, kwargs: dict) -> None:
        node = getattr(out, "grad_fn", None)
        if node is None or _CONVOLUTION_BACKWARD not in self.flop_registry:
            return
        x_shape, w_shape = _shape(args[0]), _shape(args[1])
        # ATen's argument order: (input, weight, bias, stride, padding, dilation, transposed, ...)
        transposed = bool(args[6])

        def pre(grad_outputs: tuple) -> None:
            self._in_conv_backward += 1

        def post(grad_inputs: tuple, grad_outputs: tuple) -> None:
            self._in_conv_backward -= 1
            mask = [g is not None for g in grad_inputs]
            self._add(_CONVOLUTION_BACKWARD, self.flop_registry[_CONVOLUTION_BACKWARD](
                tuple(grad_outputs[0].shape), x_shape, w_shape, transposed, mask))

        self._handles += [node.register_prehook(pre), node.register_hook(post)]
