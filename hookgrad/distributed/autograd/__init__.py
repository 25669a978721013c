"""``torch.distributed.autograd`` as in a PyTorch build without distributed autograd.

Mirrors: ``torch.distributed.autograd`` when ``torch._C`` has no distributed-autograd bindings
(they come with RPC, which hookgrad lacks): ``is_available()`` is False, and `context` raises
on entry, where PyTorch's fails on the missing binding. ``backward``, ``get_gradients`` and
``DistAutogradContext`` are stand-ins (`hookgrad._unsupported`) that raise
``NotImplementedError``.

Example:
    >>> import hookgrad.distributed.autograd as dist_autograd
    >>> dist_autograd.is_available()
    False
"""

from __future__ import annotations

from typing import Any

__all__ = ["context", "is_available"]


def is_available() -> bool:
    """Whether distributed autograd is built in: never in hookgrad.

    Mirrors: ``torch.distributed.autograd.is_available``.
    """
    return False


class context:  # noqa: N801 - PyTorch's name
    """Distributed-autograd context. Mirrors: ``torch.distributed.autograd.context``."""

    def __enter__(self) -> Any:
        # PyTorch without the bindings fails here with a NameError on ``_new_context``;
        # a clear RuntimeError says why
        raise RuntimeError("torch.distributed.autograd is not available: hookgrad has no RPC "
                           "agent (torch.distributed.rpc.is_available() is False)")

    def __exit__(self, *exc: Any) -> None:
        return None
