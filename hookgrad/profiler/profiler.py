"""Mirrors: ``torch.profiler.profiler`` (where ``profile``, ``schedule`` and friends live)."""

from __future__ import annotations

from hookgrad.profiler import (
    ProfilerAction,
    profile,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = ["supported_activities", "ProfilerAction", "schedule", "tensorboard_trace_handler",
           "profile"]
