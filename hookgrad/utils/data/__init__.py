"""Data loading. Mirrors: ``torch.utils.data``."""
