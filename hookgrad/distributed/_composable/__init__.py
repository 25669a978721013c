"""Composable distributed APIs. Mirrors: ``torch.distributed._composable`` (only ``fsdp``)."""
