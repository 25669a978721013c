"""Mirrors ``torch.distributed.checkpoint.hf_storage``: importable; its reader and writer are
stand-ins that raise (rows of `hookgrad._unsupported.table`)."""
