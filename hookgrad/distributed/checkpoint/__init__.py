"""``hookgrad.distributed.checkpoint``: FQN-keyed state dicts (real) and DCP names (absent).

Mirrors: ``torch.distributed.checkpoint``. `state_dict` works as PyTorch's does for unsharded
models. The sharded checkpoint format (``save``/``load``, planners, storage readers and writers)
is not implemented: those names are stand-ins of `hookgrad._unsupported` (rows in its table)
that raise NotImplementedError when used.
"""

from typing import Any

from hookgrad.distributed.checkpoint import hf_storage, state_dict


class CheckpointException(BaseException):
    """A failure on one or more ranks while checkpointing (never raised by hookgrad, which
    does not write DCP checkpoints). Mirrors: ``torch.distributed.checkpoint.CheckpointException``."""

    def __init__(self, msg: str, failures: dict) -> None:
        super().__init__(msg, failures)
        self._failures = failures

    @property
    def failures(self) -> dict:
        return self._failures


def __getattr__(name: str) -> Any:
    # PyTorch re-exports hf_storage's reader and writer here: the same objects
    if name in ("HuggingFaceStorageReader", "HuggingFaceStorageWriter"):
        return getattr(hf_storage, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["CheckpointException", "hf_storage", "state_dict"]
