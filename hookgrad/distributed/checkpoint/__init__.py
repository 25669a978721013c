"""``hookgrad.distributed.checkpoint``: FQN-keyed state dicts (real) and DCP names (absent).

Mirrors: ``torch.distributed.checkpoint``. `state_dict` works as PyTorch's does for unsharded
models. The sharded checkpoint format (``save``/``load``, planners, storage readers and writers)
is not implemented: every such name exists and raises NotImplementedError when used (see
`_absent`).
"""

from hookgrad.distributed.checkpoint import hf_storage, state_dict
from hookgrad.distributed.checkpoint._absent import absent_class, absent_function
from hookgrad.distributed.checkpoint.hf_storage import (HuggingFaceStorageReader,
                                                         HuggingFaceStorageWriter)


class CheckpointException(BaseException):
    """A failure on one or more ranks while checkpointing (never raised by hookgrad, which
    does not write DCP checkpoints). Mirrors: ``torch.distributed.checkpoint.CheckpointException``."""

    def __init__(self, msg: str, failures: dict) -> None:
        super().__init__(msg, failures)
        self._failures = failures

    @property
    def failures(self) -> dict:
        return self._failures


_CLASSES = ["BytesStorageMetadata", "ChunkStorageMetadata", "DefaultLoadPlanner",
            "DefaultSavePlanner", "FileSystemReader", "FileSystemWriter", "LoadPlan", "LoadPlanner",
            "Metadata", "QuantizedHuggingFaceStorageReader", "ReadItem", "SavePlan", "SavePlanner",
            "StorageReader", "StorageWriter", "TensorStorageMetadata", "WriteItem"]
_FUNCTIONS = ["save", "load", "async_save", "save_state_dict", "load_state_dict",
              "load_sharded_optimizer_state_dict"]
globals().update({n: absent_class(n, __name__) for n in _CLASSES})
globals().update({n: absent_function(n, __name__) for n in _FUNCTIONS})

__all__ = ["CheckpointException", "HuggingFaceStorageReader", "HuggingFaceStorageWriter",
           "hf_storage", "state_dict", *_CLASSES, *_FUNCTIONS]
