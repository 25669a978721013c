"""``torch.fx.experimental.proxy_tensor``: hookgrad has no operator-level (make_fx) tracing.

Libraries call `get_proxy_mode` to ask whether they are being traced; in hookgrad they never
are at that level (hookgrad.fx traces at the module/function level), so it returns None, as
PyTorch's does outside a trace. `make_fx` raises, naming `hookgrad.fx.symbolic_trace` instead.

Mirrors: ``torch.fx.experimental.proxy_tensor``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["get_proxy_mode", "make_fx"]


def get_proxy_mode() -> None:
    """None: no operator-level proxy tracing is ever active in hookgrad.

    Mirrors: ``torch.fx.experimental.proxy_tensor.get_proxy_mode``.
    """
    return None


def make_fx(f: Any, *args: Any, **kwargs: Any) -> Any:
    """Raises NotImplementedError: hookgrad has no operator-level tracer.

    Mirrors: ``torch.fx.experimental.proxy_tensor.make_fx`` (use ``hookgrad.fx.symbolic_trace``).
    """
    raise NotImplementedError(
        "make_fx traces at the ATen operator level, which hookgrad does not have; "
        "use hookgrad.fx.symbolic_trace for a module- and function-level graph")


make_fx.__hookgrad_unsupported__ = "no ATen-level tracing"  # type: ignore[attr-defined]
