"""Mirrors: ``torch._library`` (only what PyTorch's nn/utils sources import)."""
