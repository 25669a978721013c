"""``torch.utils.data.datapipes``: the DataPipe base classes and decorators.

PyTorch's built-in pipes (``datapipes.iter``/``datapipes.map``: ``Mapper``, ``Filter``, ...) are
not provided; a pipeline built from user-defined DataPipes works with the rest.

Mirrors: ``torch.utils.data.datapipes`` (``datapipe``, ``_decorator``).
"""

from __future__ import annotations

from hookgrad.utils.data.datapipes import _decorator, datapipe

__all__ = ["datapipe"]
