"""Mirrors: ``torch.nn.parallel.data_parallel`` (the module and its functional form).

`DataParallel` on a machine without accelerators runs the wrapped module as is (PyTorch does
the same). The functional `data_parallel` has no such fallback in PyTorch: it looks for an
accelerator first and raises when there is none, so it does here.
"""

from __future__ import annotations

from typing import Any

from hookgrad.nn.modules.data_parallel import DataParallel

__all__ = ["DataParallel", "data_parallel"]


def data_parallel(module: Any, inputs: Any, device_ids: Any = None, output_device: Any = None,
                  dim: int = 0, module_kwargs: Any = None) -> Any:
    """Evaluate `module` in parallel over `device_ids`. Mirrors:
    ``torch.nn.parallel.data_parallel`` (CPU-only: PyTorch's ``RuntimeError``)."""
    raise RuntimeError("device type could not be determined")
