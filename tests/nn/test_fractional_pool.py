"""Fractional max pooling (``F.fractional_max_pool2d/3d``, ``nn.FractionalMaxPool2d/3d``) against
PyTorch: values and indices with given samples (float32 window placement included), gradients,
module construction, repr and state_dict, argument errors.
(The float64 gradchecks are the OpSpecs in ``hookgrad/testing/_opspec/nn_extra.py``.)"""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err
from tests.nn._compare import to_lib


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("nd,shape,kw", [
    (2, (3, 4, 11, 13), {"kernel_size": 3, "output_size": (5, 4)}),
    (2, (4, 9, 10), {"kernel_size": (2, 3), "output_ratio": (0.7, 0.4)}),
    (2, (2, 2, 25, 31), {"kernel_size": 2, "output_size": 7}),
    (3, (2, 3, 7, 8, 9), {"kernel_size": 2, "output_size": (3, 4, 5)}),
    (3, (2, 6, 7, 5), {"kernel_size": (3, 2, 1), "output_ratio": 0.5}),
])
def test_values_indices_grads(torch, dtype, nd, shape, kw):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    x.flat[::7] = x.flat[3]  # ties: the first maximum in window order wins
    batch = shape[0] if len(shape) == nd + 2 else 1
    samples = rng.uniform(0, 1, (batch, shape[-nd - 1], nd)).astype(dtype)
    samples[0, 0] = 0.9999  # the largest start offsets
    res = []
    for lib in (torch, hookgrad):
        xt = to_lib(lib, x, True)
        fn = getattr(lib.nn.functional, f"fractional_max_pool{nd}d")
        out, idx = fn(xt, return_indices=True, _random_samples=to_lib(lib, samples), **kw)
        out.backward(to_lib(lib, np.arange(out.numel()).reshape(tuple(out.shape)).astype(dtype)))
        res.append((out.detach().numpy(), idx.numpy(), xt.grad.numpy(), out.grad_fn.name()))
    for t, h in zip(*res):
        if isinstance(t, str):
            assert h == t
        else:
            assert h.dtype == t.dtype
            np.testing.assert_array_equal(h, t)


def test_nan_wins(torch):
    x = np.arange(16.0).reshape(1, 1, 4, 4)
    x[0, 0, 1, 1] = np.nan
    outs = []
    for lib in (torch, hookgrad):
        out, idx = lib.nn.functional.fractional_max_pool2d(
            to_lib(lib, x), 2, output_size=2, return_indices=True,
            _random_samples=to_lib(lib, np.full((1, 1, 2), 0.5)))
        outs.append((out.numpy(), idx.numpy()))
    np.testing.assert_array_equal(outs[1][0], outs[0][0])
    np.testing.assert_array_equal(outs[1][1], outs[0][1])


def test_random_samples_drawn(torch):
    """Without samples the windows are random, each still a valid window maximum."""
    x = hookgrad.randn(2, 3, 9, 9)
    out, idx = hookgrad.nn.functional.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5),
                                                            return_indices=True)
    assert tuple(out.shape) == (2, 3, 4, 4)
    gathered = x.flatten(2).gather(2, idx.flatten(2)).reshape(out.shape)
    assert hookgrad.equal(gathered, out)


def test_modules_match_torch(torch):
    samples = np.random.default_rng(1).uniform(0, 1, (1, 2, 2)).astype("float32")
    for make in (
        lambda lib: lib.nn.FractionalMaxPool2d(3, output_ratio=0.5),
        lambda lib: lib.nn.FractionalMaxPool2d((2, 3), output_size=(3, 2), return_indices=True),
        lambda lib: lib.nn.FractionalMaxPool2d(2, output_size=3,
                                               _random_samples=to_lib(lib, samples)),
        lambda lib: lib.nn.FractionalMaxPool3d(2, output_size=(2, 3, 2)),
        lambda lib: lib.nn.modules.pooling.FractionalMaxPool3d((1, 2, 2), output_ratio=(.5, .5, .5),
                                                               return_indices=True),
    ):
        t, h = make(torch), make(hookgrad)
        assert repr(h) == repr(t)
        assert type(h).__module__ == "hookgrad.nn.modules.pooling"
        assert list(h.state_dict()) == list(t.state_dict())
        assert [n for n, _ in h.named_buffers()] == [n for n, _ in t.named_buffers()]
        for attr in ("kernel_size", "output_size", "output_ratio", "return_indices"):
            assert getattr(h, attr) == getattr(t, attr)
    x = np.random.default_rng(2).standard_normal((1, 2, 7, 7)).astype("float32")
    outs = [lib.nn.FractionalMaxPool2d(2, output_size=3, _random_samples=to_lib(lib, samples))(
        to_lib(lib, x)).numpy() for lib in (torch, hookgrad)]
    np.testing.assert_array_equal(outs[1], outs[0])


def _calls(lib):
    F = lib.nn.functional
    x = lib.zeros(1, 2, 6, 7)
    s = lib.full((1, 2, 2), 0.5)
    x3, s3 = lib.zeros(1, 2, 5, 6, 7), lib.full((1, 2, 3), 0.5)
    return [
        lambda: F.fractional_max_pool2d(x, 2),
        lambda: F.fractional_max_pool2d(x, 2, output_ratio=0.5),
        lambda: F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5, 0.5)),
        lambda: F.fractional_max_pool2d(x, 2, output_size=(6, 3), _random_samples=s),
        lambda: F.fractional_max_pool2d(x, 2, output_size=(3, 7), _random_samples=s),
        lambda: F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s[:, :1]),
        lambda: F.fractional_max_pool2d(x[0, 0], 2, output_size=3, _random_samples=s),
        lambda: F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=s.double()),
        lambda: F.fractional_max_pool2d(x, (2, 2, 2), output_size=3, _random_samples=s),
        lambda: F.fractional_max_pool2d(x, 2, output_size=(3, 3, 3), _random_samples=s),
        lambda: F.fractional_max_pool2d(x.long(), 2, output_size=3, _random_samples=s.long()),
        lambda: F.fractional_max_pool2d(lib.zeros(2, 2, 6, 7), 2, output_size=3,
                                        _random_samples=s),
        lambda: F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=lib.zeros(1, 2, 3)),
        lambda: F.fractional_max_pool2d(x, 2, output_size=3, _random_samples=lib.zeros(1, 2)),
        lambda: F.fractional_max_pool3d(x3, 2),
        lambda: F.fractional_max_pool3d(x3, 2, output_size=(5, 3, 3), _random_samples=s3),
        lambda: F.fractional_max_pool3d(x3, 2, output_size=(2, 6, 3), _random_samples=s3),
        lambda: F.fractional_max_pool3d(x3[0, 0], 2, output_size=2, _random_samples=s3),
        lambda: F.fractional_max_pool3d(x3, (2, 2), output_size=2, _random_samples=s3),
        lambda: F.fractional_max_pool3d(x3.int(), 2, output_size=2, _random_samples=s3.int()),
        lambda: lib.nn.FractionalMaxPool2d(2),
        lambda: lib.nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5),
        lambda: lib.nn.FractionalMaxPool2d(2, output_ratio=1.5),
        lambda: lib.nn.FractionalMaxPool3d(0, output_size=2),
        lambda: lib.nn.FractionalMaxPool3d((2, -1, 2), output_size=2),
        lambda: lib.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.5, 1)),
    ]


def test_errors_match_torch(torch):
    for h, t in zip(_calls(hookgrad), _calls(torch)):
        assert err(h) == err(t)
