"""Mirrors: ``torch.distributed.elastic.multiprocessing`` (its ``errors`` submodule)."""
