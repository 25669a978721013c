"""Activation checkpointing built on saved-tensor hooks: save nothing, recompute in backward.

Mirrors: ``torch.utils.checkpoint.checkpoint`` (non-reentrant variant; ``use_reentrant=True`` is
accepted and runs the same mechanism, which gives the same gradients).

NOTE [Checkpoint]
During the checkpointed forward every tensor a node would save is replaced by its position (the
pack hook returns an int). The first unpack in backward re-runs the function once, with grad
mode on, the same RNG state and a pack hook that *keeps* tensors in the same order, and hands
back the tensor at the recorded position. Saved values are recomputed in the same order because
the function is deterministic given the RNG state, exactly the assumption PyTorch makes.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["checkpoint", "checkpoint_sequential"]

_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
    "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants."
)


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """Run `function(*args, **kwargs)` without keeping its saved tensors (NOTE [Checkpoint]).

    Args:
        function: the computation to checkpoint (must be deterministic given the RNG state).
        use_reentrant: pass it explicitly, as PyTorch asks (a UserWarning otherwise).
        preserve_rng_state: restore the RNG state for the recomputation (dropout masks match).

    Returns:
        What `function` returns, connected to the graph as if it ran normally.
    """
    from hookgrad._functional.random import get_rng_state, set_rng_state
    from hookgrad.autograd.grad_mode import enable_grad
    from hookgrad.autograd.saved_hooks import saved_tensors_hooks

    if use_reentrant is None:
        warnings.warn(_REENTRANT_WARNING, UserWarning, stacklevel=2)
    rng_state = get_rng_state() if preserve_rng_state else None
    recomputed: list | None = None
    count = [0]

    def pack(t: Any) -> int:
        count[0] += 1
        return count[0] - 1

    def recompute() -> list:
        kept: list = []

        def keep(t: Any) -> int:
            kept.append(t)
            return len(kept) - 1

        current = get_rng_state() if rng_state is not None else None
        if rng_state is not None:
            set_rng_state(rng_state)
        try:
            with enable_grad(), saved_tensors_hooks(keep, kept.__getitem__):
                function(*args, **kwargs)
        finally:
            if current is not None:
                set_rng_state(current)
        return kept

    def unpack(index: int) -> Any:
        nonlocal recomputed
        if recomputed is None:
            recomputed = recompute()
        return recomputed[index]

    with saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions: Any, segments: int, input: Any, *,  # noqa: A002
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Checkpoint a Sequential in `segments` chunks. Mirrors: ``checkpoint_sequential``."""
    layers = list(functions.children()) if hasattr(functions, "children") else list(functions)
    size = max(1, len(layers) // segments)

    def run(chunk: list) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for layer in chunk:
                x = layer(x)
            return x
        return forward

    end = 0
    for start in range(0, len(layers) - size, size):
        end = start + size
        input = checkpoint(run(layers[start:end]), input, use_reentrant=use_reentrant, **kwargs)
    return run(layers[end:])(input)
