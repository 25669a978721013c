"""Benchmark harness: hookgrad against PyTorch (and peers when installed), same run, same data."""
