"""Mirrors: ``torch.cuda.memory`` (the allocator queries, as ``hookgrad.cuda`` answers them
on a machine without CUDA)."""

from hookgrad.cuda import (
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_stats,
    memory_summary,
    reset_peak_memory_stats,
)

__all__ = ["empty_cache", "max_memory_allocated", "max_memory_reserved", "mem_get_info",
           "memory_allocated", "memory_reserved", "memory_stats", "memory_summary",
           "reset_peak_memory_stats"]
