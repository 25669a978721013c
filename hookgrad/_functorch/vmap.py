"""``vmap``: map a function over a dimension of its inputs (NOTE [vmap on the door]).

Mirrors: ``torch.func.vmap`` / ``torch.vmap`` and ``torch._functorch.vmap``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from hookgrad._functorch._batched import (
    BatchedTensor, current_levels, pop_level, push_level, wrap,
)
from hookgrad._functorch import _function_check  # noqa: F401 - registers vmap's refusals
from hookgrad._functorch._random import RANDOM_ERROR, in_raw_draw, run_random
from hookgrad._functorch._rules import RawValueRead
from hookgrad._functorch.pytree_util import broadcast_prefix, tree_flatten, tree_unflatten
from hookgrad._functional import random as _random
from hookgrad._tensor import Tensor
from hookgrad.autograd import _api

__all__ = ["vmap", "randomness_check"]


def randomness_check() -> None:
    """Called by every draw of hookgrad's generator inside vmap: a draw that did not come
    through a public sampler (so no randomness rule saw it) raises (NOTE [vmap randomness])."""
    if current_levels() and not in_raw_draw():
        raise RuntimeError(RANDOM_ERROR)


def _name(func: Any) -> str:
    return getattr(func, "__name__", repr(func))


def _flat_in_dims(func: Any, in_dims: Any, args: tuple) -> tuple[list, list, Any]:
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(
            f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be "
            "int or a (potentially nested) tuple matching the structure of inputs, got: "
            f"{type(in_dims)}.")
    if not args:
        raise ValueError(
            f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or "
            "you are trying to vmap over a function with no inputs. The latter is unsupported.")
    flat, spec = tree_flatten(args)
    dims = broadcast_prefix(in_dims, spec)
    if dims is None:
        _, dspec = tree_flatten(in_dims)
        raise ValueError(
            f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible "
            f"with the structure of `inputs`. in_dims has structure {dspec} but inputs has "
            f"structure {spec}.")
    return flat, dims, spec


def _batch_size(func: Any, in_dims: Any, flat: list, dims: list) -> int:
    sizes = []
    for x, d in zip(flat, dims):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims must be int "
                f"or None for every input, got {d!r}")
        if not isinstance(x, Tensor):
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an "
                f"input but the input is of type {type(x)}. We cannot vmap over non-Tensor "
                "arguments, please use None as the respective in_dim")
        n = x.dim()
        if not -n <= d < n:
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for "
                f"some input, but that input is a Tensor of dimensionality {n} so expected "
                f"in_dim to satisfy -{n} <= in_dim < {n}.")
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError(
            f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): at least one input must "
            "be a Tensor vmapped over (all in_dims are None)")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension")
    return sizes[0]


def _unwrap_out(func: Any, out: Any, out_dims: Any, level: int, size: int) -> Any:
    flat, spec = tree_flatten(out)
    dims = broadcast_prefix(out_dims, spec)
    if dims is None:
        raise ValueError(
            f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
            f"compatible with the structure of `outputs`. out_dims has structure "
            f"{tree_flatten(out_dims)[1]} but outputs has structure {spec}.")
    res = []
    for o, d in zip(flat, dims):
        if not isinstance(o, Tensor):
            if d is None:
                res.append(o)
                continue
            raise ValueError(
                f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                f"{type(o)}. Did you mean to set out_dims= to None for output?")
        batched = type(o) is BatchedTensor and o._bt_level == level
        if d is None:
            if batched:
                raise ValueError(
                    f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): Cannot return a "
                    "BatchedTensor when out_dim is None")
            res.append(o)
            continue
        phys = o._bt_value if batched else o.unsqueeze(0).expand((size,) + tuple(o.shape))
        n = phys.dim()
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
        res.append(phys.movedim(0, d) if d % n else phys)
    return tree_unflatten(res, spec)


def open_level(size: int, randomness: str) -> int:
    """Open a vmap level with the random samplers routed through its randomness rule."""
    level = push_level(size, randomness)
    _random.VMAP_RANDOM_CHECK[0] = randomness_check
    _random.VMAP_RANDOM[0] = run_random
    return level


def close_level(level: int) -> None:
    """Close `level` (the innermost); the samplers run plainly once no level is open."""
    pop_level(level)
    if not current_levels():
        _random.VMAP_RANDOM_CHECK[0] = None
        _random.VMAP_RANDOM[0] = None


def _run(func: Any, flat: list, dims: list, spec: Any, kwargs: dict, out_dims: Any,
         randomness: str, size: int) -> Any:
    level = open_level(size, randomness)
    try:
        args = [wrap(x.movedim(d, 0) if d % x.dim() else x, level) if d is not None else x
                for x, d in zip(flat, dims)]
        out = func(*tree_unflatten(args, spec), **kwargs)
        return _unwrap_out(func, out, out_dims, level, size)
    except RawValueRead as exc:  # a value read outside the primitives: PyTorch's error type
        raise RuntimeError(f"vmap: {func.__name__ if hasattr(func, '__name__') else func} "
                           f"read the values of a batched tensor outside an operator that "
                           f"has a batching rule (data-dependent output shape or control "
                           f"flow): {exc}") from None
    finally:
        close_level(level)


def _chunked(func: Any, flat: list, dims: list, spec: Any, kwargs: dict, out_dims: Any,
             randomness: str, size: int, chunk: int) -> Any:
    from hookgrad._functional.shape import cat

    outs = []
    state = _random.get_rng_state() if randomness == "same" else None
    for start in range(0, size, chunk):
        n = min(chunk, size - start)
        part = [x.narrow(d, start, n) if d is not None else x for x, d in zip(flat, dims)]
        if state is not None:  # "same": every chunk draws what the first one drew (PyTorch)
            _random.set_rng_state(state)
        outs.append(_run(func, part, dims, spec, kwargs, out_dims, randomness, n))
    if len(outs) == 1:
        return outs[0]
    flat0, ospec = tree_flatten(outs[0])
    odims = broadcast_prefix(out_dims, ospec)
    cols = [tree_flatten(o)[0] for o in outs]
    merged = [cols[0][k] if odims[k] is None else cat([c[k] for c in cols], odims[k])
              for k in range(len(flat0))]
    return tree_unflatten(merged, ospec)


def _batched_grads(grad_fn: Any, outputs: Any, inputs: Any, grad_outputs: Any,
                   retain_graph: Any, create_graph: bool, only_inputs: bool, allow_unused: Any,
                   materialize_grads: bool) -> Any:
    """``autograd.grad(..., is_grads_batched=True)``: vmap over dim 0 of `grad_outputs`."""
    def one(g: Any) -> Any:  # one batched backward pass: the graph is walked once
        return grad_fn(outputs, inputs, g, retain_graph, create_graph, only_inputs, allow_unused,
                       False, materialize_grads)

    return vmap(one)(grad_outputs)


_api.BATCHED_GRADS[0] = _batched_grads


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0,
         randomness: str = "error", *, chunk_size: int | None = None) -> Callable[..., Any]:
    """Vectorise `func` over dimension `in_dims` of its inputs.

    Args:
        func: the per-sample function (positional inputs may be pytrees of tensors).
        in_dims: an int, None, or a pytree prefix of the inputs giving each one's mapped dim.
        out_dims: where the mapped dimension goes in each output (a prefix of the outputs).
        randomness: ``"error"``, ``"different"`` or ``"same"``.
        chunk_size: map at most this many samples at a time.

    Returns:
        The batched function; keyword arguments are passed through unbatched.

    Mirrors: ``torch.func.vmap``.
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        flat, dims, spec = _flat_in_dims(func, in_dims, args)
        size = _batch_size(func, in_dims, flat, dims)
        if chunk_size is not None and chunk_size < size:
            return _chunked(func, flat, dims, spec, kwargs, out_dims, randomness, size,
                            chunk_size)
        return _run(func, flat, dims, spec, kwargs, out_dims, randomness, size)

    return wrapped
