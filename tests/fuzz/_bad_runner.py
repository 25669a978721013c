"""Running the bad-input corpus on a library: what each entry raises, and state checks."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from tests.fuzz import (  # noqa: F401 - they fill the corpus
    _bad_api, _bad_areas, _bad_files, _bad_files2, _bad_math, _bad_modules, _bad_more,
    _bad_nn, _bad_ops, _bad_ops2)
from tests.fuzz._bad_inputs import CORPUS, INPLACE, STATEFUL


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


def _same(before: list, after: list) -> bool:
    if len(before) != len(after):
        return False
    for a, b in zip(before, after):
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                    and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)):
                return False
        elif a != b:
            return False
    return True


def stateful_outcome(lib: Any, make: Any, op: Any, observe: Any) -> tuple:
    """Exception type of a stateful entry, and whether the object looks as it did before."""
    obj = make(lib)
    before = observe(obj)
    kind = outcome(lib, lambda lib: op(lib, obj))
    return kind, _same(before, observe(obj))


def run_entry(lib: Any, key: str) -> Any:
    """The outcome of corpus entry `key` on `lib` (a type name, or a (type, unchanged) pair),
    with distributions validating their arguments (PyTorch's default, which other tests, and
    ``torch.compile``, may leave switched off)."""
    dist = lib.distributions.Distribution
    before = dist._validate_args
    dist.set_default_validate_args(True)
    try:
        if key in CORPUS:
            return outcome(lib, CORPUS[key])
        if key in STATEFUL:
            return stateful_outcome(lib, *STATEFUL[key])
        return inplace_outcome(lib, *INPLACE[key])
    finally:
        dist.set_default_validate_args(before)


def entries() -> list[str]:
    return sorted(CORPUS) + sorted(INPLACE) + sorted(STATEFUL)
