"""nn.utils against the oracle: gradient clipping and parameter/vector conversion."""

from __future__ import annotations

import math

import numpy as np
import pytest

import hookgrad
from tests.nn._compare import copy_state

pytestmark = pytest.mark.oracle


def _models(torch):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    hm = hookgrad.nn.Sequential(hookgrad.nn.Linear(3, 4), hookgrad.nn.Tanh(),
                                hookgrad.nn.Linear(4, 2))
    copy_state(tm, hm, hookgrad)
    x = [[1.0, -2.0, 3.0], [0.5, 0.5, -4.0]]
    (tm(torch.tensor(x)) * 10).sum().backward()
    (hm(hookgrad.tensor(x)) * 10).sum().backward()
    return tm, hm


def _grads(m):
    return [p.grad.numpy().copy() for p in m.parameters()]


@pytest.mark.parametrize("max_norm,norm_type", [(1.0, 2.0), (0.1, 1.0), (0.5, math.inf),
                                                (1e6, 2.0), (2.0, 3)])
def test_clip_grad_norm_matches_torch(torch, max_norm, norm_type):
    tm, hm = _models(torch)
    tt = torch.nn.utils.clip_grad_norm_(tm.parameters(), max_norm, norm_type)
    ht = hookgrad.nn.utils.clip_grad_norm_(hm.parameters(), max_norm, norm_type)
    assert ht.item() == pytest.approx(tt.item(), rel=1e-5)
    for a, b in zip(_grads(hm), _grads(tm)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_clip_grad_norm_keeps_grad_identity_and_handles_empty(torch):
    _, hm = _models(torch)
    g = hm[0].weight.grad
    hookgrad.nn.utils.clip_grad_norm_(hm.parameters(), 0.01)
    assert hm[0].weight.grad is g
    assert hookgrad.nn.utils.clip_grad_norm_([], 1.0).item() == 0.0
    p = hookgrad.nn.Parameter(hookgrad.ones(2))
    p.grad = hookgrad.tensor([math.inf, 1.0])
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        hookgrad.nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)


def test_clip_grad_value_matches_torch(torch):
    tm, hm = _models(torch)
    torch.nn.utils.clip_grad_value_(tm.parameters(), 0.5)
    hookgrad.nn.utils.clip_grad_value_(hm.parameters(), 0.5)
    for a, b in zip(_grads(hm), _grads(tm)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_parameters_to_vector_and_back(torch):
    tm, hm = _models(torch)
    tv = torch.nn.utils.parameters_to_vector(tm.parameters())
    hv = hookgrad.nn.utils.parameters_to_vector(hm.parameters())
    np.testing.assert_allclose(hv.detach().numpy(), tv.detach().numpy())
    assert hv.grad_fn.name() == tv.grad_fn.name()
    new = hookgrad.arange(hv.numel(), dtype=hookgrad.float32)
    hookgrad.nn.utils.vector_to_parameters(new, hm.parameters())
    torch.nn.utils.vector_to_parameters(torch.arange(tv.numel(), dtype=torch.float32),
                                        tm.parameters())
    for a, b in zip(hm.parameters(), tm.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    for lib in (torch, hookgrad):
        with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
            lib.nn.utils.vector_to_parameters([1.0], hm.parameters())
