"""Mirrors: ``torch.accelerator.memory`` (every call needs a device, so each raises)."""

from __future__ import annotations

from hookgrad.accelerator._none import no_device

__all__ = ["empty_cache", "empty_host_cache", "get_memory_info", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "reset_accumulated_memory_stats", "reset_peak_memory_stats"]

empty_cache = no_device("empty_cache")
empty_host_cache = no_device("empty_host_cache")
get_memory_info = no_device("get_memory_info")
max_memory_allocated = no_device("max_memory_allocated")
max_memory_reserved = no_device("max_memory_reserved")
memory_allocated = no_device("memory_allocated")
memory_reserved = no_device("memory_reserved")
memory_stats = no_device("memory_stats")
reset_accumulated_memory_stats = no_device("reset_accumulated_memory_stats")
reset_peak_memory_stats = no_device("reset_peak_memory_stats")
