"""ATen-level ``torch.<op>`` nn functions against PyTorch: values, gradients, node names where
the op is the same, in-place forms, random-op structure (which units drop; hookgrad's random
stream is its own) and exception types and messages."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad
from tests._errors import err
from tests.nn._compare import to_lib

RNG = np.random.default_rng(0)


def _both(torch, fn, arrays, grad=True):
    """Run fn(lib, *tensors) on both libraries; compare output values and input gradients."""
    res = []
    for lib in (torch, hookgrad):
        ts = [to_lib(lib, a, grad and a.dtype.kind == "f") for a in arrays]
        out = fn(lib, *ts)
        outs = out if isinstance(out, tuple) else (out,)
        if grad and outs[0].requires_grad:
            outs[0].backward(to_lib(lib, np.linspace(-1, 1, outs[0].numel()).reshape(
                tuple(outs[0].shape))))
        res.append(([o.detach().numpy() for o in outs],
                    [t.grad.numpy() if t.grad is not None else None for t in ts]))
    for (vt, gt), (vh, gh) in zip([res[0]], [res[1]]):
        for a, b in zip(vt, vh):
            np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-10)
        for a, b in zip(gt, gh):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-10)


CASES = {
    "constant_pad_nd": (lambda lib, x: lib.constant_pad_nd(x, [1, 2, 0, 1], 2.5), [(2, 3, 4)]),
    "constant_pad_nd_neg": (lambda lib, x: lib.constant_pad_nd(x, [-1, 1]), [(2, 3)]),
    "convolution_1d": (lambda lib, x, w, b: lib.convolution(x, w, b, [2], [1], [1], False, [0], 1),
                       [(2, 2, 7), (3, 2, 3), (3,)]),
    "convolution_t2d": (lambda lib, x, w, b: lib.convolution(x, w, b, [2, 1], [1, 0], [1, 1], True,
                                                             [1, 0], 2), [(1, 4, 3, 3),
                                                                          (4, 1, 2, 2), (2,)]),
    "conv_tbc": (lambda lib, x, w, b: lib.conv_tbc(x, w, b, 1), [(6, 2, 3), (3, 3, 4), (4,)]),
    "F.conv_tbc": (lambda lib, x, w, b: lib.nn.functional.conv_tbc(x, w, b), [(5, 2, 3),
                                                                             (2, 3, 4), (4,)]),
    "cosine_embedding_loss": (lambda lib, a, b: lib.cosine_embedding_loss(
        a, b, lib.tensor([1, -1, 1]), 0.2, 2), [(3, 4), (3, 4)]),
    "hinge_embedding_loss": (lambda lib, a: lib.hinge_embedding_loss(
        a, lib.tensor([1.0, -1, -1, 1]), 0.5, 0), [(4,)]),
    "margin_ranking_loss": (lambda lib, a, b: lib.margin_ranking_loss(
        a, b, lib.tensor([1.0, -1, 1]), 0.1, 1), [(3,), (3,)]),
    "triplet_margin_loss": (lambda lib, a, p, n: lib.triplet_margin_loss(
        a, p, n, 1.0, 2, 1e-6, True, 1), [(3, 4), (3, 4), (3, 4)]),
    "poisson_nll_loss": (lambda lib, a, t: lib.poisson_nll_loss(a, t.abs(), True, True, 1e-8, 2),
                         [(3, 4), (3, 4)]),
    "rms_norm": (lambda lib, x, w: lib.rms_norm(x, [4], w, 1e-5), [(3, 4), (4,)]),
    "channel_shuffle": (lambda lib, x: lib.channel_shuffle(x, 2), [(2, 4, 3)]),
    "native_channel_shuffle": (lambda lib, x: lib.native_channel_shuffle(x.detach(), 3),
                               [(1, 6, 2, 2)]),
    "rrelu_eval": (lambda lib, x: lib.rrelu(x, 0.1, 0.3, False), [(3, 4)]),
    "alpha_dropout_eval": (lambda lib, x: lib.alpha_dropout(x, 0.3, False), [(3, 4)]),
    "feature_dropout_p0": (lambda lib, x: lib.feature_dropout(x, 0.0, True), [(3, 4, 2)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(torch, name):
    fn, shapes = CASES[name]
    _both(torch, fn, [RNG.standard_normal(s) for s in shapes])


def test_node_names(torch):
    for fn in (lambda lib, x: lib.constant_pad_nd(x, [1, 1]),
               lambda lib, x: lib.convolution(x, lib.ones(2, 3, 2, dtype=lib.float64), None, [1],
                                              [0], [1], False, [0], 1)):
        names = [fn(lib, lib.ones(1, 3, 4, dtype=lib.float64, requires_grad=True)).grad_fn.name()
                 for lib in (torch, hookgrad)]
        assert names[0] == names[1]


@pytest.mark.parametrize("name", ["feature_dropout", "feature_alpha_dropout", "alpha_dropout"])
def test_random_dropouts_structure(torch, name):
    hookgrad.manual_seed(0)
    x = hookgrad.ones(40, 8, 5, dtype=hookgrad.float64)
    out = getattr(hookgrad, name)(x, 0.4, True)
    values = np.unique(np.round(out.numpy(), 12))
    assert len(values) == 2  # kept and dropped units
    ref = getattr(torch, name)(torch.ones(40, 8, 5, dtype=torch.float64), 0.4, True)
    np.testing.assert_allclose(sorted(values), sorted(np.unique(np.round(ref.numpy(), 12))))
    if name.startswith("feature"):  # whole feature maps: constant along the last dim
        assert (out.numpy() == out.numpy()[..., :1]).all()
    y = x.clone()
    res = getattr(hookgrad, name + "_")(y, 0.4, True)
    assert res is y and len(np.unique(np.round(y.numpy(), 12))) == 2


def test_inplace_eval_and_rrelu_(torch):
    x = RNG.standard_normal((3, 4))
    for name in ("alpha_dropout_", "feature_dropout_", "feature_alpha_dropout_"):
        h = to_lib(hookgrad, x)
        assert getattr(hookgrad, name)(h, 0.5, False) is h
        np.testing.assert_array_equal(h.numpy(), x)
    outs = []
    for lib in (torch, hookgrad):
        t = to_lib(lib, x)
        assert lib.rrelu_(t, 0.2, 0.4, False) is t
        outs.append(t.numpy())
    np.testing.assert_allclose(outs[1], outs[0])


def test_embedding_renorm_and_update_stats(torch):
    w = RNG.standard_normal((6, 3)) * 3
    x = RNG.standard_normal((4, 3, 5))
    outs = []
    for lib in (torch, hookgrad):
        wt = to_lib(lib, w)
        r = lib.embedding_renorm_(wt, lib.tensor([0, 2, 2, 5]), 1.5, 2.0)
        assert r is wt
        rm, rv = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
        mean, var = lib.batch_norm_update_stats(to_lib(lib, x), rm, rv, 0.1)
        none = lib.batch_norm_update_stats(to_lib(lib, x), None, None, 0.1)
        outs.append([wt.numpy(), mean.numpy(), var.numpy(), rm.numpy(), rv.numpy(),
                     none[1].numpy()])
    for t, h in zip(*outs):
        np.testing.assert_allclose(h, t, rtol=1e-6, atol=1e-7)


def _calls(lib):
    x = lib.ones(4, 3, 5)
    m, v = lib.zeros(3), lib.ones(3)
    return [
        lambda: lib.feature_dropout(lib.ones(5), 0.5, True),
        lambda: lib.feature_alpha_dropout(lib.ones(5), 0.5, True),
        lambda: lib.alpha_dropout(lib.ones(5), 1.5, True),
        lambda: lib.feature_dropout(lib.ones(2, 3), -0.1, True),
        lambda: lib.constant_pad_nd(x, [1, 0, 0]),
        lambda: lib.conv_tbc(lib.ones(5, 2, 3), lib.ones(2, 2, 4), lib.ones(4), 1),
        lambda: lib.conv_tbc(lib.ones(5, 2), lib.ones(2, 2, 4), lib.ones(4), 1),
        lambda: lib.conv_tbc(lib.ones(5, 2, 3), lib.ones(2, 3, 4), lib.ones(3), 1),
        lambda: lib.batch_norm_stats(x, 1e-5),
        lambda: lib.batch_norm_elemt(x, v, m, m, v, 1e-5),
        lambda: lib.batch_norm_gather_stats(x, m[None], v[None], m, v, 0.1, 1e-5, 20),
        lambda: lib.batch_norm_gather_stats_with_counts(x, m[None], v[None], m, v, 0.1, 1e-5,
                                                        lib.tensor([20.0])),
        lambda: lib.batch_norm_backward_reduce(x, x, m, v, v, True, True, True),
        lambda: lib.batch_norm_backward_elemt(x, x, m, v, v, m, m, lib.tensor([20])),
    ]


def test_errors_match_torch(torch):
    for h, t in zip(_calls(hookgrad), _calls(torch)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            eh, et = err(h), err(t)
        assert eh[0] == et[0]
        if "Could not run" in et[1]:
            assert eh[1].split(" This could")[0] == et[1].split(" This could")[0]
        else:
            assert eh == et
