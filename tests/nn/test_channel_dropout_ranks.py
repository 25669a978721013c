"""Channel dropout (`F.dropout1d/2d/3d`, `nn.Dropout2d`...) on every input rank PyTorch 2.13
accepts: the same masks for the same seed, the same warnings, the same errors.

Found running pytorch/examples mnist_rnn, whose ``nn.Dropout2d`` sees ``(batch, features)``
input: PyTorch warns and drops element by element; hookgrad raised. PyTorch also treats a 3-D
input to ``dropout2d`` as batched ``(N, C, L)``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad
from tests._cpu import pytorch_bernoulli_is_portable

pytestmark = pytest.mark.skipif(not pytorch_bernoulli_is_portable(),
                                reason="PyTorch draws masks from MKL on Intel CPUs")

CASES = [("dropout1d", (4, 6)), ("dropout1d", (2, 4, 6)),
         ("dropout2d", (5, 7)), ("dropout2d", (2, 3, 5)), ("dropout2d", (2, 3, 4, 5)),
         ("dropout2d", (2, 3, 2, 2, 2)),
         ("dropout3d", (3, 4, 2, 2)), ("dropout3d", (2, 3, 2, 2, 2)), ("dropout3d", (3, 4, 5)), ("dropout3d", (5,))]


def _run(lib, name, shape, inplace):
    lib.manual_seed(3)
    x = lib.arange(float(np.prod(shape))).reshape(shape) + 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = getattr(lib.nn.functional, name)(x, 0.5, True, inplace)
    return y.numpy().copy(), [str(w.message) for w in caught], y is x


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize(("name", "shape"), CASES)
def test_masks_and_warnings_match(torch, name, shape, inplace):
    want, want_warn, want_same = _run(torch, name, shape, inplace)
    got, got_warn, got_same = _run(hookgrad, name, shape, inplace)
    np.testing.assert_array_equal(got, want)
    assert got_warn == want_warn
    assert got_same == want_same


@pytest.mark.parametrize(("name", "shape"), [("dropout1d", (5,)), ("dropout1d", (2, 3, 4, 5)),
                                             ("dropout2d", (5,))])
def test_refused_ranks(torch, name, shape):
    with pytest.raises(RuntimeError) as want, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        getattr(torch.nn.functional, name)(torch.ones(shape), 0.5, True)
    with pytest.raises(RuntimeError) as got, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        getattr(hookgrad.nn.functional, name)(hookgrad.ones(shape), 0.5, True)
    assert str(got.value) == str(want.value)


def test_module_on_features_gives_pytorchs_gradient(torch):
    def run(lib):
        lib.manual_seed(0)
        x = lib.ones(4, 6, requires_grad=True)
        lib.nn.Dropout2d(0.5)(x).sum().backward()
        return x.grad.numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(run(hookgrad), run(torch))
