"""Optimizers. Mirrors: ``torch.optim``."""
