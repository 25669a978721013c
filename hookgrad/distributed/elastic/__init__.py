"""Mirrors: ``torch.distributed.elastic`` (only the error recording of entry points: hookgrad
has no elastic agent; launch scripts and libraries import ``record`` from it)."""
