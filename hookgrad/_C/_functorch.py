"""The ``torch._C._functorch`` helpers libraries reach for, on hookgrad's vmap levels.

Two representation differences from PyTorch, both visible only through these helpers:

- a hookgrad ``BatchedTensor`` always keeps its batch dimension at 0 of its physical value
  (PyTorch keeps the input's ``in_dims`` position), so `maybe_get_bdim` is 0 and
  `get_unwrapped` returns the physical value with the batch in front;
- levels are unique ids, increasing with nesting (PyTorch numbers the interpreter stack from 1
  and reuses numbers), and ``grad``/``vjp`` open no level: hookgrad's reverse-mode transforms
  track ordinary autograd leaves, so `is_gradtrackingtensor` is always False.

Mirrors: ``torch._C._functorch`` (the vmap-level subset).
"""

from __future__ import annotations

from hookgrad._functorch._autodiff import in_transformed_call
from hookgrad._functorch._batched import BatchedTensor, current_levels, wrap
from hookgrad._functorch.vmap import close_level, open_level
from hookgrad._tensor import Tensor

__all__ = ["is_batchedtensor", "is_functorch_wrapped_tensor", "is_gradtrackingtensor",
           "is_functionaltensor", "is_legacy_batchedtensor", "maybe_get_level",
           "maybe_get_bdim", "current_level", "maybe_current_level", "get_unwrapped",
           "_unwrap_batched", "_add_batch_dim", "_remove_batch_dim", "_vmap_increment_nesting",
           "_vmap_decrement_nesting", "unwrap_if_dead", "_are_functorch_transforms_active"]


def is_batchedtensor(tensor: Tensor) -> bool:
    """Whether `tensor` is the per-sample value of a vmap level.

    Mirrors: ``torch._C._functorch.is_batchedtensor``.
    """
    return type(tensor) is BatchedTensor


def is_functorch_wrapped_tensor(tensor: Tensor) -> bool:
    """Whether `tensor` wraps another for a transform (only vmap wraps in hookgrad).

    Mirrors: ``torch._C._functorch.is_functorch_wrapped_tensor``.
    """
    return type(tensor) is BatchedTensor


def is_gradtrackingtensor(tensor: Tensor) -> bool:
    """Always False: hookgrad's grad transforms wrap nothing (see the module docstring).

    Mirrors: ``torch._C._functorch.is_gradtrackingtensor``.
    """
    return False


def is_functionaltensor(tensor: Tensor) -> bool:
    """Always False: there is no functionalization wrapper.

    Mirrors: ``torch._C._functorch.is_functionaltensor``.
    """
    return False


def is_legacy_batchedtensor(tensor: Tensor) -> bool:
    """Always False (the legacy vmap is gone).

    Mirrors: ``torch._C._functorch.is_legacy_batchedtensor``.
    """
    return False


def maybe_get_level(tensor: Tensor) -> int:
    """The vmap level of a batched `tensor`, else -1.

    Mirrors: ``torch._C._functorch.maybe_get_level``.
    """
    return tensor._bt_level if type(tensor) is BatchedTensor else -1


def maybe_get_bdim(tensor: Tensor) -> int:
    """The batch dimension of a batched `tensor` (always 0 here), else -1.

    Mirrors: ``torch._C._functorch.maybe_get_bdim``.
    """
    return 0 if type(tensor) is BatchedTensor else -1


def maybe_current_level() -> int | None:
    """The innermost open vmap level of this thread, or None.

    Mirrors: ``torch._C._functorch.maybe_current_level``.
    """
    levels = current_levels()
    return levels[-1][0] if levels else None


def current_level() -> int:
    """The innermost open vmap level.

    Raises:
        RuntimeError: outside every vmap (PyTorch's internal assert).

    Mirrors: ``torch._C._functorch.current_level``.
    """
    level = maybe_current_level()
    if level is None:
        raise RuntimeError("maybe_layer.has_value() INTERNAL ASSERT FAILED: no vmap level is "
                           "open")
    return level


def get_unwrapped(tensor: Tensor) -> Tensor:
    """The physical value under one vmap wrapper (batch dimension first).

    Raises:
        RuntimeError: for a tensor no transform wraps.

    Mirrors: ``torch._C._functorch.get_unwrapped``.
    """
    if type(tensor) is not BatchedTensor:
        raise RuntimeError("No wrappers present!")
    return tensor._bt_value


def unwrap_if_dead(tensor: Tensor) -> Tensor:
    """`tensor` itself: a hookgrad batched tensor outliving its level keeps its physical value
    reachable through `get_unwrapped`. Mirrors: ``torch._C._functorch.unwrap_if_dead``."""
    return tensor


def _unwrap_batched(tensor: Tensor, level: int) -> tuple[Tensor, int | None]:
    """``(physical, 0)`` for a tensor batched at `level`, else ``(tensor, None)``.

    Mirrors: ``torch._C._functorch._unwrap_batched``.
    """
    if type(tensor) is BatchedTensor and tensor._bt_level == level:
        return tensor._bt_value, 0
    return tensor, None


def _add_batch_dim(tensor: Tensor, bdim: int, level: int) -> Tensor:
    """`tensor` as the per-sample value of `level`, mapped over dimension `bdim`.

    Mirrors: ``torch._C._functorch._add_batch_dim``.
    """
    n = tensor.dim()
    if not -n <= bdim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {bdim})")
    phys = tensor.movedim(bdim, 0) if bdim % n else tensor  # type: ignore[attr-defined]
    return wrap(phys, level)


def _remove_batch_dim(tensor: Tensor, level: int, batch_size: int, out_dim: int) -> Tensor:
    """The physical tensor of `level` with its batch at `out_dim` (an unbatched `tensor` is
    expanded to `batch_size`). Mirrors: ``torch._C._functorch._remove_batch_dim``."""
    if type(tensor) is BatchedTensor and tensor._bt_level == level:
        phys = tensor._bt_value
    else:
        phys = tensor.unsqueeze(0).expand((batch_size,) + tuple(tensor.shape))  # type: ignore
    return phys.movedim(0, out_dim) if out_dim else phys  # type: ignore[attr-defined]


def _vmap_increment_nesting(batch_size: int, randomness: str) -> int:
    """Open a vmap level (close it with `_vmap_decrement_nesting`); returns its id.

    Mirrors: ``torch._C._functorch._vmap_increment_nesting``.
    """
    if randomness not in ("error", "same", "different"):
        raise RuntimeError(f"Unknown randomness: {randomness}")
    return open_level(int(batch_size), randomness)


def _vmap_decrement_nesting() -> int:
    """Close the innermost vmap level opened by `_vmap_increment_nesting`; returns its id.

    Mirrors: ``torch._C._functorch._vmap_decrement_nesting``.
    """
    level = current_level()
    close_level(level)
    return level


def _are_functorch_transforms_active() -> bool:
    """Whether a ``torch.func`` transform is running on this thread (a vmap level is open, or
    a function is being called under ``grad``/``vjp``/``jvp``/``jacrev``...).

    Mirrors: ``torch._C._are_functorch_transforms_active``.
    """
    return bool(current_levels()) or in_transformed_call()
