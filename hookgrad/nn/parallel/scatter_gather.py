"""``scatter``/``gather`` of nested inputs across devices, on the devices hookgrad has.

Mirrors: ``torch.nn.parallel.scatter_gather``. Tensors are split into one chunk per target
device along `dim` (``Tensor.chunk``, moved to each target with ``Tensor.to``), and gathered
back with ``cat``; tuples, lists and dicts are scattered element-wise and other objects are
repeated, as in PyTorch. As in PyTorch, the targets must be accelerator devices: CPU targets
raise PyTorch's errors. Attribution tools (captum) import these names at load time.
"""

from __future__ import annotations

from typing import Any

from hookgrad import _backend
from hookgrad._functional.shape import cat
from hookgrad._tensor import Tensor

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _device(target: Any) -> Any:
    """PyTorch's ``_get_device_index`` checks of a scatter/gather target (no CPU targets)."""
    if target is None:
        raise ValueError("Expected a torch.device with a specified index or an integer, but "
                         "got:None")
    dev = target if isinstance(target, _backend.device) else _backend.device(
        f"cuda:{target}" if isinstance(target, int) else target)
    if dev.type == "cpu":
        raise ValueError("Expected a non cpu device, but got: cpu")
    return dev


def scatter(inputs: Any, target_gpus: Any, dim: int = 0) -> Any:
    """One piece of `inputs` per target device.

    Example:
        >>> import hookgrad
        >>> from hookgrad.nn.parallel.scatter_gather import scatter
        >>> scatter(hookgrad.ones(4, 2), ["cpu", "cpu"])
        Traceback (most recent call last):
        ...
        ValueError: Expected a non cpu device, but got: cpu

    Mirrors: ``torch.nn.parallel.scatter_gather.scatter``.
    """

    def scatter_map(obj: Any) -> Any:
        if isinstance(obj, Tensor):
            chunks = obj.chunk(len(target_gpus), dim)  # type: ignore[attr-defined]
            return [c.to(_device(d)) for c, d in zip(chunks, target_gpus)]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]

    return scatter_map(inputs)


def scatter_kwargs(inputs: tuple, kwargs: dict | None, target_gpus: Any,
                   dim: int = 0) -> tuple[tuple, tuple]:
    """Scatter positional and keyword arguments alike, padded to the same length.

    Mirrors: ``torch.nn.parallel.scatter_gather.scatter_kwargs``.
    """
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(scattered_inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs: Any, target_device: Any, dim: int = 0) -> Any:
    """Concatenate per-device `outputs` on `target_device` (the inverse of `scatter`).

    Mirrors: ``torch.nn.parallel.scatter_gather.gather``.
    """

    def gather_map(outs: list) -> Any:
        out = outs[0]
        if isinstance(out, Tensor):
            if all(o.device.type == "cpu" for o in outs):
                raise AssertionError("Gather function not implemented for CPU tensors")
            return cat([o.to(_device(target_device)) for o in outs], dim)
        if out is None:
            return None
        if isinstance(out, dict):
            return type(out)((k, gather_map([d[k] for d in outs])) for k in out)
        return type(out)(map(gather_map, zip(*outs)))

    return gather_map(outputs)
