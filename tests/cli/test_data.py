"""``hookgrad.datasets.load_digits`` and the data loading/splitting behind ``hookgrad train``."""

from __future__ import annotations

from importlib import resources

import numpy as np

from hookgrad.cli.data import load
from hookgrad.datasets import load_digits
from tests.cli._run import write_npz


def test_load_digits_shapes_dtypes_and_range():
    x, y = load_digits()
    assert x.shape == (1797, 1, 8, 8) and x.dtype == np.float32
    assert y.shape == (1797,) and y.dtype == np.int64
    assert x.min() == 0.0 and x.max() == 1.0
    assert np.all(x * 16 == np.round(x * 16))  # pixel counts 0..16, scaled
    assert np.bincount(y).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]


def test_load_digits_is_the_uci_optdigits_test_set():
    """First image and labels as in the UCI file (and scikit-learn's copy of it)."""
    x, y = load_digits()
    assert (x[0, 0, :2] * 16).tolist() == [[0, 0, 5, 13, 9, 1, 0, 0],
                                           [0, 0, 13, 15, 10, 15, 5, 0]]
    assert y[:10].tolist() == list(range(10))


def test_load_digits_returns_fresh_arrays():
    x1, y1 = load_digits()
    x1[:] = 0
    x2, _ = load_digits()
    assert x2.max() == 1.0


def test_digits_licence_ships_with_the_data():
    files = resources.files("hookgrad.datasets")
    assert files.joinpath("digits.npz").is_file()
    text = files.joinpath("DIGITS_LICENSE.md").read_text()
    assert "CC BY 4.0" in text and "Alpaydin" in text


def test_cli_split_is_seeded_disjoint_and_twenty_percent():
    a, b, c = load(None, seed=0), load(None, seed=0), load(None, seed=1)
    assert len(a.y_test) == round(1797 * 0.2) and len(a.y_train) == 1797 - len(a.y_test)
    assert np.array_equal(a.x_test, b.x_test) and not np.array_equal(a.x_test, c.x_test)
    assert a.num_classes == 10 and a.x_train.dtype == np.float32
    rows = {r.tobytes() for r in a.x_train.reshape(len(a.x_train), -1)}
    overlap = sum(r.tobytes() in rows for r in a.x_test.reshape(len(a.x_test), -1))
    assert overlap < 5  # the UCI set has a few duplicate images, never whole-split overlap


def test_cli_user_data_is_standardised(tmp_path):
    ds = load(write_npz(tmp_path / "d.npz", n=50), seed=0)
    x = np.concatenate([ds.x_train, ds.x_test])
    assert abs(float(x.mean())) < 1e-5 and abs(float(x.std()) - 1) < 1e-5
    assert ds.num_classes == 3 and ds.y_train.dtype == np.int64
