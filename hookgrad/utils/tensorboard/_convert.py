"""From what a user logs (tensors, arrays, numbers) to the NumPy arrays the summaries encode.

Mirrors: ``torch.utils.tensorboard._convert_np`` and the image helpers of ``_utils``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._tensor import Tensor


def make_np(x: Any) -> np.ndarray:
    """An array for `x`: arrays as they are, Python/NumPy scalars as 1-element arrays, tensors
    detached (meta tensors, which have no values, as one random number, as PyTorch does)."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        if x.device.type == "meta":
            return np.random.randn(1)
        return x.detach().cpu().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def scale_factor(array: np.ndarray) -> int:
    """uint8 images are already 0..255; anything else is read as 0..1."""
    return 1 if array.dtype == np.uint8 else 255


def make_grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """``N x {1,3} x H x W`` images tiled row by row on a black ``3 x rows*H x cols*W`` canvas."""
    if not isinstance(images, np.ndarray):
        raise AssertionError("plugin error, should pass numpy array here")
    if images.shape[1] == 1:
        images = np.concatenate([images] * 3, 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    count, _, height, width = images.shape
    ncols = min(count, ncols)
    nrows = -(-count // ncols)
    canvas = np.zeros((3, height * nrows, width * ncols), dtype=images.dtype)
    for i in range(count):
        row, col = divmod(i, ncols)
        canvas[:, row * height:(row + 1) * height, col * width:(col + 1) * width] = images[i]
    return canvas


def to_hwc(array: np.ndarray, dataformats: str) -> np.ndarray:
    """`array` laid out as `dataformats` (letters of NCHW) as one ``H x W x C`` RGB(A) image;
    a batch is tiled by `make_grid`, a grey image repeated over three channels."""
    if len(set(dataformats)) != len(dataformats):
        raise AssertionError(f"You can not use the same dimension shorthand twice. "
                             f"input_format: {dataformats}")
    if array.ndim != len(dataformats):
        raise AssertionError(f"size of input tensor and input format are different. tensor "
                             f"shape: {array.shape}, input_format: {dataformats}")
    fmt = dataformats.upper()
    if len(fmt) == 4:
        nchw = array.transpose([fmt.find(c) for c in "NCHW"])
        return make_grid(nchw).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = array.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    if len(fmt) == 2:
        return np.stack([array.transpose([fmt.find(c) for c in "HW"])] * 3, 2)
    raise AssertionError(f"unsupported dataformats {dataformats!r}")
