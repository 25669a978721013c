"""Loading and validating training data for ``hookgrad train``; every problem is a `UserError`."""

from __future__ import annotations

import os
import warnings
import zipfile
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
    if not os.path.isfile(path):
        raise UserError(f"--data {path} is not a regular file (give an .npz with x and y, "
                        "or a CSV)")
    if path.endswith(".npz"):
        try:
            # our own handle: NumPy leaks the file when the archive is corrupt
            with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as f:
                missing = [k for k in ("x", "y") if k not in f.files]
                if missing:
                    raise UserError(
                        f"{path} has no array named {missing[0]!r}; it needs arrays 'x' "
                        f"(samples first) and 'y' (labels); found {sorted(f.files)}"
                    )
                return np.asarray(f["x"]), np.asarray(f["y"])
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
            raise UserError(f"cannot read {path} as .npz: {_first_line(e)}") from None
    try:
        with warnings.catch_warnings():  # an empty file warns; the shape check below reports it
            warnings.simplefilter("ignore", UserWarning)
            table = np.loadtxt(path, delimiter=",", ndmin=2)
    except (ValueError, OSError, UnicodeDecodeError) as e:
        raise UserError(f"cannot read {path} as a numeric CSV (last column = label): "
                        f"{_first_line(e)}") from None
    if table.shape[1] < 2:
        raise UserError(f"{path}: a CSV needs at least one feature column and a label column")
    return table[:, :-1], table[:, -1]


def _check(x: np.ndarray, y: np.ndarray, source: str) -> tuple[np.ndarray, np.ndarray, int]:
    if x.ndim < 2:
        raise UserError(f"{source}: x must have samples first and at least one feature "
                        f"dimension, got shape {x.shape}")
    if y.ndim != 1:
        raise UserError(f"{source}: y must be one label per sample (1-D), got shape {y.shape}")
    if x.ndim >= 2 and 0 in x.shape[1:]:
        raise UserError(f"{source}: x has no features (shape {x.shape})")
    if len(x) != len(y):
        raise UserError(f"{source}: x has {len(x)} samples but y has {len(y)} labels")
    if len(y) < 10:
        raise UserError(f"{source}: need at least 10 samples, got {len(y)}")
    if x.dtype.kind not in "biuf" or not np.all(np.isfinite(x)):
        raise UserError(f"{source}: x must be finite numbers (found NaN/Inf or non-numbers)")
    biggest = float(np.abs(x).max()) if x.size else 0.0
    if biggest > float(np.finfo(np.float32).max):  # the cast would make it inf
        raise UserError(f"{source}: x must fit in float32 (found |x| = {biggest:.3g}; scale "
                        "the features down)")
    k = _num_classes(y, source)
    y = y.astype(np.int64)
    missing = np.flatnonzero(np.bincount(y, minlength=k) == 0)
    if len(missing):
        raise UserError(
            f"{source}: labels must be 0..K-1 with every class present; class {missing[0]} "
            f"of 0..{k - 1} never occurs (renumber the labels)"
        )
    return x.astype(np.float32), y, k


def _num_classes(y: np.ndarray, source: str) -> int:
    """K for integer labels 0..K-1; K is bounded by the number of samples (every class must
    occur), so a label like 1e9 is refused before anything of its size is built."""
    if y.dtype.kind not in "biuf":
        raise UserError(f"{source}: labels must be integers 0..K-1 (found {y.dtype} values)")
    if not np.all(np.isfinite(y)) or np.any(y != np.round(y)) or y.min() < 0:
        raise UserError(f"{source}: labels must be integers 0..K-1")
    top = y.max()
    if top >= len(y):
        raise UserError(f"{source}: label {top:.0f} is out of range: with {len(y)} samples "
                        f"the labels must be 0..K-1 with K <= {len(y)} and every class present")
    return int(top) + 1


def _first_line(e: BaseException) -> str:
    return (str(e).splitlines() or [type(e).__name__])[0]


def load(path: str | None, seed: int, test_fraction: float = 0.2) -> Dataset:
    """The digits set (default) or a user file, split into train and held-out test parts."""
    if path is None:
        x, y = load_digits()
        source = "digits (UCI optdigits, 8x8)"
    else:
        x, y = _load_file(path)
        source = path
    x, y, k = _check(np.asarray(x), np.asarray(y), source)
    if path is not None:  # in float64: float32 sums of large features overflow
        mean, std = x.mean(dtype=np.float64), x.std(dtype=np.float64)
        x = ((x - mean) / (std if std > 0 else 1.0)).astype(np.float32)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = max(1, int(round(len(y) * test_fraction)))
    test, train = order[:n_test], order[n_test:]
    return Dataset(x[train], y[train], x[test], y[test], k, source)
