"""Helpers so one scenario runs on PyTorch (``torch.compile``) and on hookgrad."""

from __future__ import annotations

from typing import Any

import hookgrad


def is_torch(lib: Any) -> bool:
    return lib is not hookgrad


def dynamo(lib: Any) -> Any:
    if is_torch(lib):
        import torch._dynamo
        import torch._dynamo.testing  # noqa: F401
        return torch._dynamo
    return hookgrad._dynamo


def compiled_autograd(lib: Any) -> Any:
    if is_torch(lib):
        from torch._dynamo import compiled_autograd as ca
        return ca
    return hookgrad._dynamo.compiled_autograd


def nop(lib: Any) -> Any:
    if is_torch(lib):
        from functorch.compile import nop as torch_nop
        return torch_nop
    return hookgrad._functorch.compile.nop


def aot_module_simplified(lib: Any) -> Any:
    if is_torch(lib):
        from torch._functorch.aot_autograd import aot_module_simplified as f
        return f
    return hookgrad._functorch.aot_autograd.aot_module_simplified


def plain(t: Any) -> Any:
    """Tensor (or None) as nested Python floats, rounded for cross-library comparison."""
    if t is None:
        return None
    values = t.detach().tolist()
    return _round(values)


def _round(v: Any) -> Any:
    if isinstance(v, list):
        return [_round(x) for x in v]
    return round(float(v), 4)


def both(torch: Any, scenario: Any) -> tuple[Any, Any]:
    """Run `scenario(lib)` on PyTorch and hookgrad; return both observations."""
    return scenario(torch), scenario(hookgrad)
