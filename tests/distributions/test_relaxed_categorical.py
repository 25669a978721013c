"""`RelaxedOneHotCategorical` and `ExpRelaxedCategorical` against torch."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.distributions._family_check import check_errors, check_family, p, t

_P = [[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]


def _relaxed(L):
    probs = p(L, _P)
    return L.distributions.RelaxedOneHotCategorical(t(L, 0.7), probs=probs), [probs]


def _relaxed_logits(L):
    logits, temp = p(L, [0.1, -0.5, 1.2]), p(L, 1.3)
    return L.distributions.RelaxedOneHotCategorical(temp, logits=logits), [logits, temp]


def _exp_relaxed(L):
    probs = p(L, _P)
    from_module = L.distributions.relaxed_categorical.ExpRelaxedCategorical
    return from_module(t(L, 0.7), probs=probs), [probs]


def _simplex(L):
    return t(L, [[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]])


def _log_simplex(L):
    return _simplex(L).log()


@pytest.mark.parametrize("make,value", [(_relaxed, _simplex), (_relaxed_logits, _simplex),
                                        (_exp_relaxed, _log_simplex)])
def test_matches_torch(torch, make, value):
    check_family(torch, make, value)


def test_samples_lie_on_the_simplex_and_track_probs(torch):
    hookgrad.manual_seed(0)
    d = hookgrad.distributions.RelaxedOneHotCategorical(t(hookgrad, 0.1), probs=t(hookgrad, _P))
    draw = d.sample((20000,))
    np.testing.assert_allclose(draw.sum(-1).numpy(), 1.0, atol=1e-12)
    # at a low temperature the draws are nearly one-hot, so argmax frequencies follow probs
    hits = np.eye(3)[draw.numpy().argmax(-1)].mean(0)
    np.testing.assert_allclose(hits, np.array(_P), atol=0.02)


def test_errors_match_torch(torch):
    D = lambda L: L.distributions  # noqa: E731
    check_errors(torch, [
        lambda L: D(L).RelaxedOneHotCategorical(t(L, 0.5)),
        lambda L: D(L).RelaxedOneHotCategorical(t(L, 0.5), probs=t(L, [-0.1, 1.1])),
        lambda L: D(L).RelaxedOneHotCategorical(t(L, 0.5), probs=t(L, [0.5, 0.5])).log_prob(
            t(L, [0.4, 0.4])),
    ])


def test_new_tensors_follow_the_parameters(torch):
    for L in (torch, hookgrad):
        d = L.distributions.relaxed_categorical.ExpRelaxedCategorical(t(L, 0.5),
                                                                      probs=t(L, [0.5, 0.5]))
        made = d._new(2, 3)
        assert tuple(made.shape) == (2, 3) and made.dtype == L.float64
