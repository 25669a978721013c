"""Utilities. Mirrors: ``torch.utils``."""
