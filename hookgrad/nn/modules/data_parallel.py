"""`DataParallel` on a single device: a transparent wrapper (hookgrad has one CPU device).

Imported by ``hookgrad.nn`` and ``hookgrad.nn.parallel``.
"""

from __future__ import annotations

from typing import Any

from hookgrad.nn.modules.module import Module


class DataParallel(Module):
    """Wrap ``module``; forward calls it directly. With one device there is nothing to split,
    so this only gives scripts the ``.module`` attribute and ``module.``-prefixed state dicts.

    Example:
        >>> import hookgrad
        >>> dp = DataParallel(hookgrad.nn.Linear(2, 1))
        >>> sorted(dp.state_dict())
        ['module.bias', 'module.weight']

    Mirrors: ``torch.nn.DataParallel`` (single-device behaviour).
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        if device_ids is not None and len(list(device_ids)) > 1:
            raise ValueError("hookgrad DataParallel supports a single device only")
        self.module = module
        self.device_ids = [] if device_ids is None else list(device_ids)
        self.output_device, self.dim = output_device, dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """Call the wrapped module."""
        return self.module(*inputs, **kwargs)
