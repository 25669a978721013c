"""Recursive comparison of JSON-like scenario results with a float tolerance."""

from __future__ import annotations

import contextlib
import math
import warnings

# PyTorch 2.13's FutureWarnings on deprecated collective names that scenarios call on purpose.
# Rank threads share the process's warning filters, so they are set around all threads at once.
_DEPRECATED = r"`torch\.distributed\.(all_gather_coalesced|all_gather_into_tensor|" \
              r"reduce_scatter_tensor)`"


@contextlib.contextmanager
def scenario_warnings():
    """The warning filters every rank thread of a scenario runs under."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="find_unused_parameters=True was specified")
        warnings.filterwarnings("ignore", category=FutureWarning, message=_DEPRECATED)
        yield


def assert_same(a, b, tol=1e-5, path="result"):
    if isinstance(a, float) or isinstance(b, float):
        assert isinstance(a, int | float) and isinstance(b, int | float), f"{path}: {a!r} != {b!r}"
        assert math.isclose(a, b, rel_tol=tol, abs_tol=tol), f"{path}: {a!r} != {b!r}"
    elif isinstance(a, list | tuple):
        assert isinstance(b, list | tuple) and len(a) == len(b), f"{path}: {a!r} != {b!r}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, tol, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), f"{path}: keys {a} != {b}"
        for k in a:
            assert_same(a[k], b[k], tol, f"{path}[{k!r}]")
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"
