"""Testing helpers. Mirrors: ``torch.testing``."""
