"""``F.linear_cross_entropy`` and ``nn.LinearCrossEntropyLoss`` against PyTorch: losses and
gradients (class targets, probabilities, K-dimensional heads, bias, class weights, smoothing,
ignore_index, unbatched, the chunked ``options`` path), module structure and errors."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err
from tests.nn._compare import copy_state, to_lib

RNG = np.random.default_rng(0)
X, W, B = RNG.standard_normal((5, 4)), RNG.standard_normal((6, 4)), RNG.standard_normal(6)
T = np.array([0, 5, 2, 2, 1])


def _options(lib):
    if lib is hookgrad:
        return hookgrad.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    return lib.nn.LinearCrossEntropyOptions(batch_chunk_size=2)


@pytest.mark.parametrize("kw", [{}, {"reduction": "sum", "ignore_index": 2},
                                {"reduction": "none"}, {"label_smoothing": 0.2},
                                {"weight": np.linspace(0.5, 1.5, 6)}, {"options": True},
                                {"options": True, "reduction": "none"}])
@pytest.mark.parametrize("bias", [False, True])
def test_functional(torch, kw, bias):
    res = []
    for lib in (torch, hookgrad):
        x, w = to_lib(lib, X, True), to_lib(lib, W, True)
        b = to_lib(lib, B, True) if bias else None
        args = dict(kw)
        if "weight" in args:
            args["weight"] = to_lib(lib, args["weight"])
        if args.get("options"):
            args["options"] = _options(lib)
        loss = lib.nn.functional.linear_cross_entropy(x, w, to_lib(lib, T), linear_bias=b,
                                                      **args)
        loss.sum().backward()
        res.append([loss.detach().numpy(), x.grad.numpy(), w.grad.numpy()]
                   + ([b.grad.numpy()] if bias else []))
    for a, h in zip(*res):
        np.testing.assert_allclose(h, a, rtol=1e-10, atol=1e-12)


def test_k_dimensional_probabilities_and_unbatched(torch):
    w3 = RNG.standard_normal((3, 2, 4))
    probs = RNG.dirichlet(np.ones(3), size=(5, 2)).transpose(0, 2, 1).copy()
    res = []
    for lib in (torch, hookgrad):
        F = lib.nn.functional
        x, w = to_lib(lib, X, True), to_lib(lib, w3, True)
        a = F.linear_cross_entropy(x, w, to_lib(lib, RNG.integers(0, 3, (5, 2)) * 0 + 1))
        p = F.linear_cross_entropy(x, w, to_lib(lib, probs), reduction="none")
        u = F.linear_cross_entropy(to_lib(lib, X[0]), to_lib(lib, W), lib.tensor(3))
        (a + p.sum() + u).backward()
        res.append([a.detach().numpy(), p.detach().numpy(), u.detach().numpy(), x.grad.numpy(),
                    w.grad.numpy()])
    for a, h in zip(*res):
        np.testing.assert_allclose(h, a, rtol=1e-10, atol=1e-12)


def test_module(torch):
    out = []
    for lib in (torch, hookgrad):
        m = lib.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=True,
                                          dtype=lib.float64, label_smoothing=0.1)
        out.append(m)
    copy_state(out[0], out[1], hookgrad)
    assert repr(out[1]) == repr(out[0])
    assert list(out[1].state_dict()) == list(out[0].state_dict())
    losses = [m(to_lib(lib, X), to_lib(lib, np.ones((5, 2), np.int64)))
              for lib, m in zip((torch, hookgrad), out)]
    np.testing.assert_allclose(losses[1].detach().numpy(), losses[0].detach().numpy(),
                               rtol=1e-10)
    assert hookgrad.nn.modules.loss.LinearCrossEntropyLoss is hookgrad.nn.LinearCrossEntropyLoss


def _calls(lib):
    F = lib.nn.functional
    x, w = lib.zeros(5, 4), lib.zeros(6, 4)
    t = lib.zeros(5, dtype=lib.int64)
    return [
        lambda: F.linear_cross_entropy(lib.zeros(2, 5, 4), w, t),
        lambda: F.linear_cross_entropy(x, lib.zeros(4), t),
        lambda: F.linear_cross_entropy(x, lib.zeros(6, 3), t),
        lambda: F.linear_cross_entropy(x, w, t, linear_bias=lib.zeros(5)),
        lambda: F.linear_cross_entropy(lib.zeros(4), lib.zeros(6, 2, 4), t),
        lambda: F.linear_cross_entropy(x, w, lib.zeros(5, 6), ignore_index=1),
        lambda: lib.nn.LinearCrossEntropyLoss(4, 6, weight=lib.ones(5)),
        lambda: lib.nn.LinearCrossEntropyLoss(4, 6, label_smoothing=1.5),
    ]


def test_errors_match_torch(torch):
    for h, t in zip(_calls(hookgrad), _calls(torch)):
        assert err(h) == err(t)
    with pytest.warns(UserWarning, match="``options`` ignored"):
        hookgrad.nn.functional.linear_cross_entropy(
            hookgrad.zeros(5, 4), hookgrad.zeros(6, 4), hookgrad.zeros(5, dtype=hookgrad.int64),
            label_smoothing=0.1, options=_options(hookgrad))
