"""Pooling layers against the oracle: values, grad_fn names, input gradients, reprs."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from hookgrad.testing._oracle import assert_same
from tests.nn._compare import compare_module

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(3)


def randn(*shape):
    return RNG.standard_normal(shape).astype("float32")


@pytest.mark.parametrize(
    "kw",
    [
        dict(kernel_size=2),
        dict(kernel_size=3, stride=2, padding=1),
        dict(kernel_size=(2, 3), stride=(1, 2), dilation=(2, 1), ceil_mode=True),
        dict(kernel_size=3, stride=2, ceil_mode=True, padding=1),
    ],
)
def test_max_pool2d(torch, kw):
    compare_module(torch, lambda lib: lib.nn.MaxPool2d(**kw), [(randn(2, 3, 7, 8), True)])
    compare_module(torch, lambda lib: lib.nn.MaxPool2d(**kw), [(randn(3, 7, 8), True)])


def test_max_pool_return_indices(torch):
    data = randn(2, 2, 5, 6).tolist()

    def scenario(lib, log):
        x = lib.tensor(data, requires_grad=True)
        out, idx = lib.nn.MaxPool2d(3, 2, 1, return_indices=True)(x)
        out1, idx1 = lib.nn.MaxPool1d(2, return_indices=True)(x[0, 0])
        (out.sum() + out1.sum()).backward()
        return out, idx, out1, idx1, x.grad

    assert_same(scenario, torch)


@pytest.mark.parametrize(
    "kw",
    [dict(kernel_size=3), dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)],
)
def test_max_pool1d(torch, kw):
    compare_module(torch, lambda lib: lib.nn.MaxPool1d(**kw), [(randn(2, 3, 11), True)])
    compare_module(torch, lambda lib: lib.nn.MaxPool1d(**kw), [(randn(3, 11), True)])


@pytest.mark.parametrize(
    "kw",
    [
        dict(kernel_size=2),
        dict(kernel_size=3, stride=2, padding=1),
        dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
        dict(kernel_size=(3, 2), stride=1, padding=(1, 0), divisor_override=3),
    ],
)
def test_avg_pool2d(torch, kw):
    compare_module(torch, lambda lib: lib.nn.AvgPool2d(**kw), [(randn(2, 3, 7, 6), True)])


def test_avg_pool1d(torch):
    def make(lib):
        return lib.nn.AvgPool1d(3, 2, 1, ceil_mode=True, count_include_pad=False)

    compare_module(torch, make, [(randn(2, 3, 8), True)])


@pytest.mark.parametrize("size", [1, 3, (2, 5), (None, 2), (7, 6)])
def test_adaptive_avg_pool2d(torch, size):
    compare_module(torch, lambda lib: lib.nn.AdaptiveAvgPool2d(size), [(randn(2, 3, 7, 6), True)])
    compare_module(torch, lambda lib: lib.nn.AdaptiveAvgPool2d(size), [(randn(3, 7, 6), True)])


def test_adaptive_avg_pool1d(torch):
    compare_module(torch, lambda lib: lib.nn.AdaptiveAvgPool1d(4), [(randn(2, 3, 10), True)])


def test_reprs_match(torch):
    for cls, args, kw in [
        ("MaxPool2d", (3,), {"stride": 2, "padding": 1}),
        ("MaxPool1d", (2,), {"ceil_mode": True}),
        ("AvgPool2d", ((2, 3),), {}),
        ("AvgPool1d", (2,), {"stride": 1}),
        ("AdaptiveAvgPool2d", ((2, None),), {}),
        ("AdaptiveAvgPool1d", (3,), {}),
    ]:
        assert repr(getattr(hookgrad.nn, cls)(*args, **kw)) == repr(
            getattr(torch.nn, cls)(*args, **kw)
        )
