"""Reparametrised Gamma, Beta and Dirichlet draws: the same samples and the same gradients as
PyTorch's, which come from ATen's approximations of ``d sample / d alpha`` (so an estimator
built on them, such as an ELBO, trains as on PyTorch)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hookgrad


def _draws(lib: Any, dtype: str) -> list:
    lib.manual_seed(3)
    dt = getattr(lib, dtype)
    rng = np.random.default_rng(0)
    conc = lib.tensor(np.exp(rng.uniform(-2.5, 3.5, (64, 5))), dtype=dt, requires_grad=True)
    x = lib.distributions.Dirichlet(conc).rsample()
    (x * lib.arange(5, dtype=dt)).sum().backward()
    a = lib.tensor(np.exp(rng.uniform(-2, 3, 40)), dtype=dt, requires_grad=True)
    b = lib.tensor(np.exp(rng.uniform(-2, 3, 40)), dtype=dt, requires_grad=True)
    beta = lib.distributions.Beta(a, b).rsample((3,))
    beta.pow(2).sum().backward()
    rate = lib.tensor(np.exp(rng.uniform(-1, 1, 40)), dtype=dt, requires_grad=True)
    g = lib.distributions.Gamma(a.detach().requires_grad_(), rate).rsample()
    g.sum().backward()
    return [x.grad_fn.name() if hasattr(x.grad_fn, "name") else type(x.grad_fn).__name__,
            x.detach().numpy(), conc.grad.numpy(), beta.detach().numpy(), a.grad.numpy(),
            b.grad.numpy(), g.detach().numpy(), rate.grad.numpy()]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_samples_and_gradients_equal_torch(torch: Any, dtype: str) -> None:
    ref, got = _draws(torch, dtype), _draws(hookgrad, dtype)
    assert got[0] == ref[0] == "_DirichletBackward"
    for r, g in zip(ref[1:], got[1:], strict=True):
        assert r.dtype == g.dtype
        # float32: bit-equal but for rare last-ulp libm differences; float64: libm ulps amplified by cancellation near the mean
        np.testing.assert_allclose(g, r, rtol=1e-5 if dtype == "float32" else 1e-8, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradient_kernels_equal_torch_over_every_branch(torch: Any, dtype: str) -> None:
    rng = np.random.default_rng(1)
    ndt = np.dtype(dtype)
    alpha = np.exp(rng.uniform(-3, 4, 6000)).astype(ndt)
    x = np.maximum(rng.gamma(alpha.astype(np.float64)), 1e-30).astype(ndt)
    ref = torch._standard_gamma_grad(torch.from_numpy(alpha), torch.from_numpy(x)).numpy()
    got = hookgrad._standard_gamma_grad(hookgrad.from_numpy(alpha), hookgrad.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-12 if dtype == "float64" else 0, atol=0)
    conc = np.exp(rng.uniform(-3, 3.5, (3000, 4))).astype(ndt)
    g = rng.gamma(conc.astype(np.float64))
    info = np.finfo(ndt)
    s = np.clip((g / g.sum(-1, keepdims=True)).astype(ndt), info.tiny, 1 - info.eps)
    total = np.repeat(conc.sum(-1, keepdims=True), 4, axis=1)
    args = (s, conc, total)
    ref = torch._dirichlet_grad(*map(torch.from_numpy, args)).numpy()
    got = hookgrad._dirichlet_grad(*map(hookgrad.from_numpy, args)).numpy()
    assert got.dtype == ref.dtype
    np.testing.assert_allclose(got, ref, rtol=1e-5 if dtype == "float32" else 1e-8, atol=0)
    if dtype == "float32":  # the series branches run in float32 as ATen's: nearly all bit-equal
        assert (got == ref).mean() > 0.995
