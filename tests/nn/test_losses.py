"""Losses against the oracle: every reduction, values, node names, input/target gradients."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad
from tests.hooks._scenario import check
from tests.nn._compare import compare_module, to_lib

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(7)
REDUCTIONS = ["mean", "sum", "none"]


def randn(*shape):
    return RNG.standard_normal(shape).astype("float32")


def probs(*shape):
    return RNG.uniform(0.05, 0.95, shape).astype("float32")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kwargs", [
    ("MSELoss", {}), ("L1Loss", {}), ("SmoothL1Loss", {}), ("SmoothL1Loss", {"beta": 0.5}),
    ("SmoothL1Loss", {"beta": 0.0}), ("HuberLoss", {"delta": 0.7}),
])
def test_regression_losses(torch, name, kwargs, reduction):
    x, t = randn(4, 3), randn(4, 3)
    compare_module(torch, lambda lib: getattr(lib.nn, name)(reduction=reduction, **kwargs),
                   [(x, True), (t, True)])


def test_mse_broadcast_warns_like_torch(torch):
    def sc(lib, log):
        x = lib.ones(2, 3, requires_grad=True)
        out = lib.nn.functional.mse_loss(x, lib.zeros(3))
        out.backward()
        return out, x.grad, out.grad_fn.name()

    mine = check(sc, torch)
    assert mine["warnings"][0][0] == "UserWarning"


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kwargs", [{}, {"ignore_index": 1}, {"weight": True},
                                    {"weight": True, "ignore_index": 0}])
def test_nll_loss(torch, reduction, kwargs):
    x, t = randn(5, 4), np.array([0, 1, 3, 1, 2])
    w = np.array([0.5, 2.0, 1.0, 3.0], dtype="float32")

    def make(lib):
        kw = dict(kwargs)
        if kw.pop("weight", False):
            kw["weight"] = to_lib(lib, w)
        return lib.nn.NLLLoss(reduction=reduction, **kw)

    compare_module(torch, make, [(x, True), (t, False)])


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 4, 2), (3,)])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_spatial_and_1d(torch, shape, reduction):
    x = randn(*shape)
    t = RNG.integers(0, 3, (shape[0],) + shape[2:]) if len(shape) > 1 else np.array(2)
    compare_module(torch, lambda lib: lib.nn.NLLLoss(reduction=reduction), [(x, True), (t, False)])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kwargs", [
    {}, {"ignore_index": 2}, {"label_smoothing": 0.2}, {"weight": True},
    {"weight": True, "label_smoothing": 0.1, "ignore_index": 1},
])
def test_cross_entropy_class_indices(torch, reduction, kwargs):
    x, t = randn(6, 4), np.array([0, 1, 3, 2, 2, 1])
    w = np.array([0.5, 2.0, 1.0, 3.0], dtype="float32")

    def make(lib):
        kw = dict(kwargs)
        if kw.pop("weight", False):
            kw["weight"] = to_lib(lib, w)
        return lib.nn.CrossEntropyLoss(reduction=reduction, **kw)

    compare_module(torch, make, [(x, True), (t, False)])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kwargs", [{}, {"label_smoothing": 0.3}, {"weight": True}])
def test_cross_entropy_class_probabilities(torch, reduction, kwargs):
    x = randn(5, 3)
    p = np.exp(randn(5, 3))
    p = (p / p.sum(1, keepdims=True)).astype("float32")
    w = np.array([0.5, 2.0, 1.5], dtype="float32")

    def make(lib):
        kw = dict(kwargs)
        if kw.pop("weight", False):
            kw["weight"] = to_lib(lib, w)
        return lib.nn.CrossEntropyLoss(reduction=reduction, **kw)

    compare_module(torch, make, [(x, True), (p, True)])


def test_cross_entropy_spatial(torch):
    x, t = randn(2, 3, 4, 5), RNG.integers(0, 3, (2, 4, 5))
    compare_module(torch, lambda lib: lib.nn.CrossEntropyLoss(), [(x, True), (t, False)])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_bce_loss(torch, reduction, weighted):
    x, t = probs(4, 3), probs(4, 3)
    w = RNG.uniform(0.5, 2, (3,)).astype("float32")

    def make(lib):
        return lib.nn.BCELoss(weight=to_lib(lib, w) if weighted else None, reduction=reduction)

    compare_module(torch, make, [(x, True), (t, True)])


def test_bce_clamps_log_and_validates(torch):
    x = np.array([0.0, 1.0, 0.5], dtype="float32")
    t = np.array([1.0, 0.0, 1.0], dtype="float32")
    compare_module(torch, lambda lib: lib.nn.BCELoss(reduction="none"), [(x, False), (t, False)])
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
            lib.nn.functional.binary_cross_entropy(lib.tensor([1.5]), lib.tensor([1.0]))
        with pytest.raises(ValueError, match="Using a target size"):
            lib.nn.functional.binary_cross_entropy(lib.tensor([0.5, 0.5]), lib.tensor([1.0]))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("opts", ["plain", "pos_weight", "weight", "both"])
def test_bce_with_logits(torch, reduction, opts):
    x, t = randn(4, 3) * 3, probs(4, 3)
    pw = RNG.uniform(0.5, 3, (3,)).astype("float32")
    w = RNG.uniform(0.5, 2, (4, 3)).astype("float32")

    def make(lib):
        return lib.nn.BCEWithLogitsLoss(
            weight=to_lib(lib, w) if opts in ("weight", "both") else None,
            pos_weight=to_lib(lib, pw) if opts in ("pos_weight", "both") else None,
            reduction=reduction)

    compare_module(torch, make, [(x, True), (t, True)])


@pytest.mark.parametrize("reduction", ["batchmean", "sum", "none", "mean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(torch, reduction, log_target):
    x = np.log(probs(3, 4))
    t = np.log(probs(3, 4)) if log_target else probs(3, 4)
    t[0, 0] = -30.0 if log_target else 0.0  # exp(t) ~ 0 / an exact zero target
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        compare_module(torch, lambda lib: lib.nn.KLDivLoss(reduction=reduction,
                                                           log_target=log_target),
                       [(x, True), (t, False)])


def test_kl_div_mean_warns(torch):
    def sc(lib, log):
        return lib.nn.functional.kl_div(lib.zeros(2), lib.ones(2), reduction="mean")

    mine = check(sc, torch)
    assert mine["warnings"][0][1].startswith("reduction: 'mean' divides")


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.MSELoss(reduction="foo")(lib.ones(2), lib.ones(2)),
    lambda lib: lib.nn.functional.nll_loss(lib.ones(2, 3), lib.tensor([0, 5])),
    lambda lib: lib.nn.functional.nll_loss(lib.ones(2, 3), lib.tensor([0, 1, 1])),
    lambda lib: lib.nn.functional.nll_loss(lib.ones(2, 3), lib.tensor([0.0, 1.0])),
    lambda lib: lib.nn.functional.nll_loss(lib.ones(2, 3), lib.tensor([-100, -100])).isnan(),
    lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(lib.ones(2), lib.ones(1)),
    lambda lib: lib.nn.functional.cross_entropy(lib.ones(2, 3), lib.ones(2, 3, dtype=lib.int64)),
    lambda lib: lib.nn.MSELoss(size_average=False)(lib.ones(2), lib.zeros(2)),
    lambda lib: lib.nn.functional.mse_loss(lib.ones(2), lib.ones(2), weight=lib.ones(3)),
])
def test_loss_errors_and_legacy_args(torch, call):
    check(lambda lib, log: call(lib), torch)


def test_loss_double_backward(torch):
    results = []
    for lib in (torch, hookgrad):
        x = lib.tensor([[0.2, -1.0, 0.5], [1.5, 0.1, -0.3]], dtype=lib.float64,
                       requires_grad=True)
        t = lib.tensor([2, 0])
        out = (lib.nn.functional.cross_entropy(x, t)
               + lib.nn.functional.mse_loss(x, x.detach() * 2)
               + lib.nn.functional.binary_cross_entropy_with_logits(x, x.detach().sigmoid())
               + lib.nn.functional.smooth_l1_loss(x, x.detach() * 0.1, beta=2.0))
        (g,) = lib.autograd.grad(out, [x], create_graph=True)
        (g * g).sum().backward()
        results.append((g.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-6)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5)


def test_loss_reprs(torch):
    for name in ("MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss",
                 "BCEWithLogitsLoss", "KLDivLoss", "SmoothL1Loss", "HuberLoss"):
        assert repr(getattr(hookgrad.nn, name)()) == repr(getattr(torch.nn, name)())
    assert list(hookgrad.nn.CrossEntropyLoss(weight=hookgrad.ones(2)).state_dict()) == \
        list(torch.nn.CrossEntropyLoss(weight=torch.ones(2)).state_dict())
