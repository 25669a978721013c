"""Neural-network modules. Mirrors: ``torch.nn``."""
