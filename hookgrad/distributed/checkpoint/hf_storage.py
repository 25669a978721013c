"""Mirrors ``torch.distributed.checkpoint.hf_storage``: importable, not implemented (see
`hookgrad.distributed.checkpoint._absent`)."""

from hookgrad.distributed.checkpoint._absent import absent_class

__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter"]

HuggingFaceStorageReader = absent_class("HuggingFaceStorageReader", __name__)
HuggingFaceStorageWriter = absent_class("HuggingFaceStorageWriter", __name__)
