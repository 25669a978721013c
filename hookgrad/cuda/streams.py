"""Mirrors: ``torch.cuda.streams`` (``Stream`` and ``Event``)."""

from hookgrad.cuda import Event, Stream

__all__ = ["Stream", "Event"]
