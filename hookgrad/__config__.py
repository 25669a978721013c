"""Build configuration. Mirrors: ``torch.__config__`` (``show()`` / ``parallel_info()``).

hookgrad is pure Python on NumPy: the report names NumPy's version and BLAS and the thread
counts hookgrad runs with (libraries such as PyG call these at import time).

Example:
    >>> show().splitlines()[0]
    'hookgrad built with:'
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["show", "parallel_info"]


def show() -> str:
    """A description of how hookgrad runs. Mirrors: ``torch.__config__.show``."""
    return ("hookgrad built with:\n"
            f"  - NumPy {np.__version__} (array backend for the cpu device)\n"
            "  - no CUDA, no cuDNN, no MKL-DNN (pure-Python kernels on NumPy)\n")


def parallel_info() -> str:
    """Thread counts. Mirrors: ``torch.__config__.parallel_info``."""
    threads = os.cpu_count() or 1
    return ("ATen/Parallel:\n"
            "\tat::get_num_threads() : 1\n"
            "\tat::get_num_interop_threads() : 1\n"
            f"NumPy {np.__version__} (its BLAS may use up to {threads} threads)\n")
