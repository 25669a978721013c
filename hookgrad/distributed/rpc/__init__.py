"""``torch.distributed.rpc`` as in a PyTorch build without RPC support.

Mirrors: ``torch.distributed.rpc`` when ``torch._C`` has no RPC bindings: the module imports and
``is_available()`` is False. Its entry points (``init_rpc``, ``rpc_sync``, ``RRef``, ...) exist as
stand-ins (`hookgrad._unsupported`) that raise ``NotImplementedError`` when used, so programs
that import them at load time still load. hookgrad has no RPC agent (remote
references and remote calls need one); libraries such as torchopt import this module and check
``is_available()`` before touching anything else, as they do on such builds of PyTorch.

Example:
    >>> import hookgrad.distributed.rpc as rpc
    >>> rpc.is_available()
    False
"""

from __future__ import annotations

__all__: list[str] = []


def is_available() -> bool:
    """Whether RPC is built in: never in hookgrad. Mirrors: ``torch.distributed.rpc.is_available``."""
    return False
