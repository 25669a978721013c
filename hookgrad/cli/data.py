"""Loading and validating training data for ``hookgrad train``; every problem is a `UserError`."""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

import numpy as np

from hookgrad.datasets import load_digits


class UserError(Exception):
    """A mistake in the user's input: reported as one line, exit code 2, no traceback."""


@dataclass
class Dataset:
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    num_classes: int
    source: str


def _load_file(path: str) -> tuple[np.ndarray, np.ndarray]:
    if not os.path.exists(path):
        raise UserError(f"data file not found: {path} (give an .npz with x and y, or a CSV)")
    if path.endswith(".npz"):
        try:
            with np.load(path, allow_pickle=False) as f:
                missing = [k for k in ("x", "y") if k not in f.files]
                if missing:
                    raise UserError(
                        f"{path} has no array named {missing[0]!r}; it needs arrays 'x' "
                        f"(samples first) and 'y' (labels); found {sorted(f.files)}"
                    )
                return np.asarray(f["x"]), np.asarray(f["y"])
        except (OSError, ValueError) as e:
            raise UserError(f"cannot read {path} as .npz: {e}") from None
    try:
        with warnings.catch_warnings():  # an empty file warns; the shape check below reports it
            warnings.simplefilter("ignore", UserWarning)
            table = np.loadtxt(path, delimiter=",", ndmin=2)
    except ValueError as e:
        raise UserError(f"cannot read {path} as a numeric CSV (last column = label): {e}") from None
    if table.shape[1] < 2:
        raise UserError(f"{path}: a CSV needs at least one feature column and a label column")
    return table[:, :-1], table[:, -1]


def _check(x: np.ndarray, y: np.ndarray, source: str) -> tuple[np.ndarray, np.ndarray, int]:
    if x.ndim < 2:
        raise UserError(f"{source}: x must have samples first and at least one feature "
                        f"dimension, got shape {x.shape}")
    if y.ndim != 1:
        raise UserError(f"{source}: y must be one label per sample (1-D), got shape {y.shape}")
    if len(x) != len(y):
        raise UserError(f"{source}: x has {len(x)} samples but y has {len(y)} labels")
    if len(y) < 10:
        raise UserError(f"{source}: need at least 10 samples, got {len(y)}")
    if not np.issubdtype(x.dtype, np.number) or not np.all(np.isfinite(x)):
        raise UserError(f"{source}: x must be finite numbers (found NaN/Inf or non-numbers)")
    if not np.all(np.isfinite(y)) or np.any(y != np.round(y)) or y.min() < 0:
        raise UserError(f"{source}: labels must be integers 0..K-1")
    y = y.astype(np.int64)
    k = int(y.max()) + 1
    missing = sorted(set(range(k)) - set(np.unique(y).tolist()))
    if missing:
        raise UserError(
            f"{source}: labels must be 0..K-1 with every class present; class {missing[0]} "
            f"of 0..{k - 1} never occurs (renumber the labels)"
        )
    return x.astype(np.float32), y, k


def load(path: str | None, seed: int, test_fraction: float = 0.2) -> Dataset:
    """The digits set (default) or a user file, split into train and held-out test parts."""
    if path is None:
        x, y = load_digits()
        source = "digits (UCI optdigits, 8x8)"
    else:
        x, y = _load_file(path)
        source = path
    x, y, k = _check(np.asarray(x), np.asarray(y), source)
    if path is not None:
        mean, std = x.mean(), x.std()
        x = (x - mean) / (std if std > 0 else 1.0)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = max(1, int(round(len(y) * test_fraction)))
    test, train = order[:n_test], order[n_test:]
    return Dataset(x[train], y[train], x[test], y[test], k, source)
