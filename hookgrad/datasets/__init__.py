"""Small real data sets shipped inside the package (no network needed).

`load_digits` reads the 8x8 handwritten digits (UCI optdigits test set; attribution and licence
in ``DIGITS_LICENSE.md`` beside the data file).
"""

from __future__ import annotations

from importlib import resources

import numpy as np

__all__ = ["load_digits"]


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """The 1,797 digits as ``(x, y)``: x float32 (N, 1, 8, 8) scaled to [0, 1], y int64 (N,).

    hookgrad extension (no PyTorch counterpart; torchvision ships other data sets).
    """
    with resources.files(__name__).joinpath("digits.npz").open("rb") as f:
        data = np.load(f, allow_pickle=False)
        x = data["x"].astype(np.float32)[:, None, :, :] / 16.0
        y = data["y"].astype(np.int64)
    return x, y
