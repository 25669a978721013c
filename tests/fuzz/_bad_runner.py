"""Running the bad-input corpus on a library: what each entry raises, and state checks."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from tests.fuzz import (  # noqa: F401 - they fill the corpus
    _bad_api, _bad_files, _bad_modules, _bad_more, _bad_ops, _bad_ops2)
from tests.fuzz._bad_inputs import CORPUS, INPLACE


def outcome(lib: Any, fn: Any) -> str:
    """The exception type `fn(lib)` raises, or "accepted"."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(lib)
        except Exception as e:  # the type is what is compared
            return type(e).__name__
    return "accepted"


def inplace_outcome(lib: Any, make: Any, op: Any) -> tuple:
    """Exception type of an in-place entry, and whether its target kept its values."""
    t = make(lib)
    before = np.array(t.detach().numpy(), copy=True)
    kind = outcome(lib, lambda lib: op(lib, t))
    after = t.detach().numpy()
    return kind, before.shape == after.shape and bool(np.array_equal(before, after))


def entries() -> list[str]:
    return sorted(CORPUS) + sorted(INPLACE)
