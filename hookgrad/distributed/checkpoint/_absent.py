"""Distributed-checkpoint (DCP) names that hookgrad does not implement, made on one pattern.

PyTorch's DCP writes sharded checkpoints (a ``.metadata`` file plus ``.distcp`` shards, or
Hugging Face safetensors shards) through planners and storage readers/writers. hookgrad has no
sharded tensors and does not write that format; its single-process checkpoints are
``hookgrad.save``/``load`` files, which PyTorch reads. Libraries import these names at load
time (transformers), so they exist; using one raises NotImplementedError saying so.
"""

from __future__ import annotations

from typing import Any, NoReturn

WHY = ("hookgrad does not implement torch.distributed.checkpoint's sharded format (DCP); save "
       "a full state dict with hookgrad.save instead (PyTorch loads it), and use "
       "hookgrad.distributed.checkpoint.state_dict for FQN-keyed model/optimizer state")


def absent_class(name: str, module: str) -> type:
    """A class named `name` whose construction raises NotImplementedError."""
    def __init__(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
        raise NotImplementedError(f"{name}: {WHY}")

    return type(name, (), {"__init__": __init__, "__module__": module,
                           "__doc__": f"Mirrors ``torch.{module[9:]}.{name}``; raises "
                                      "NotImplementedError when constructed.",
                           "__hookgrad_unsupported__": WHY})


def absent_function(name: str, module: str) -> Any:
    """A function named `name` that raises NotImplementedError."""
    def function(*args: Any, **kwargs: Any) -> NoReturn:
        raise NotImplementedError(f"{name}: {WHY}")

    function.__name__ = function.__qualname__ = name
    function.__module__ = module
    function.__doc__ = f"Mirrors ``torch.{module[9:]}.{name}``; raises NotImplementedError."
    function.__hookgrad_unsupported__ = WHY  # type: ignore[attr-defined]
    return function
