"""pyro-ppl and gpytorch, unmodified, on PyTorch and on hookgrad with only the import swapped:
deterministic quantities (log densities, marginal likelihoods and their gradients) compared,
and Pyro's stochastic variational inference from one seed (the same draws and, through ATen's
approximate reparametrised Beta gradients, the same ELBO steps). Each test skips when its
library is not importable (not a test dependency)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.ecosystem._tools import require_tool, run_with

pytestmark = pytest.mark.oracle


def _close(got, ref, rtol=1e-5, atol=1e-6):
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64),
                                   np.asarray(r, dtype=np.float64), rtol=rtol, atol=atol)


def _pyro(torch, pyro, *_):
    dist = pyro.distributions
    data = torch.tensor([2.5, 3.1, 0.4, 4.2, 3.3])

    def model(x):
        mu = pyro.sample("mu", dist.Normal(0.0, 10.0))
        sigma = pyro.sample("sigma", dist.LogNormal(0.0, 1.0))
        with pyro.plate("data", len(x)):
            pyro.sample("obs", dist.Normal(mu, sigma), obs=x)

    mu = torch.tensor(2.0, requires_grad=True)
    sigma = torch.tensor(1.5, requires_grad=True)
    conditioned = pyro.poutine.condition(model, data={"mu": mu, "sigma": sigma})
    lp = pyro.poutine.trace(conditioned).get_trace(data).log_prob_sum()
    grads = torch.autograd.grad(lp, [mu, sigma])
    eye = torch.eye(3)
    others = [
        dist.NegativeBinomial(torch.tensor(3.0), logits=torch.tensor(0.2)).log_prob(
            torch.tensor(4.0)),
        dist.LKJCholesky(3, torch.tensor(2.0)).log_prob(eye),
        dist.VonMises(torch.tensor(0.5), torch.tensor(2.0)).log_prob(torch.tensor(1.0)),
        dist.Wishart(torch.tensor(5.0), covariance_matrix=eye).log_prob(2 * eye),
        dist.LowRankMultivariateNormal(torch.zeros(3), torch.ones(3, 1), torch.ones(3)).log_prob(
            torch.tensor([0.1, 0.2, 0.3])),
        dist.ContinuousBernoulli(probs=torch.tensor(0.3)).log_prob(torch.tensor(0.6)),
        dist.RelaxedOneHotCategorical(torch.tensor(0.5), probs=torch.tensor([0.2, 0.8])).log_prob(
            torch.tensor([0.3, 0.7])),
    ]
    return [lp.item(), *[g.item() for g in grads], *[o.item() for o in others]]


def _gpytorch(torch, gpytorch, *_):
    x = torch.linspace(0, 1, 12)
    y = torch.sin(6 * x)

    class GP(gpytorch.models.ExactGP):
        def __init__(self, lik):
            super().__init__(x, y, lik)
            self.mean_module = gpytorch.means.ConstantMean()
            self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

        def forward(self, inp):
            return gpytorch.distributions.MultivariateNormal(self.mean_module(inp),
                                                             self.covar_module(inp))

    lik = gpytorch.likelihoods.GaussianLikelihood()
    model = GP(lik)
    model.train()
    lik.train()
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(lik, model)
    loss = -mll(model(x), y)
    grads = torch.autograd.grad(loss, list(model.parameters()))
    model.eval()
    lik.eval()
    with torch.no_grad():
        pred = lik(model(torch.tensor([0.25, 0.75])))
    return [loss.item(), *[g.item() for g in grads], *pred.mean.tolist(),
            *pred.variance.tolist()]


def test_pyro_model_log_density_and_new_families():
    require_tool("pyro")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _close(run_with("hookgrad", ("pyro",), _pyro), run_with("torch", ("pyro",), _pyro))


def test_gpytorch_exact_gp_marginal_likelihood_and_prediction():
    require_tool("gpytorch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _close(run_with("hookgrad", ("gpytorch", "linear_operator"), _gpytorch),
               run_with("torch", ("gpytorch", "linear_operator"), _gpytorch), rtol=1e-4)


def _pyro_svi(torch, pyro, *_):
    dist = pyro.distributions
    pyro.set_rng_seed(0)
    pyro.clear_param_store()
    data = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0])

    def model(x):
        fairness = pyro.sample("f", dist.Beta(10.0, 10.0))
        with pyro.plate("d", len(x)):
            pyro.sample("obs", dist.Bernoulli(fairness), obs=x)

    def guide(x):
        a = pyro.param("a", torch.tensor(15.0), constraint=dist.constraints.positive)
        b = pyro.param("b", torch.tensor(15.0), constraint=dist.constraints.positive)
        pyro.sample("f", dist.Beta(a, b))

    svi = pyro.infer.SVI(model, guide, pyro.optim.Adam({"lr": 0.05}), loss=pyro.infer.Trace_ELBO())
    losses = [svi.step(data) for _ in range(20)]
    return [losses, pyro.param("a").item(), pyro.param("b").item()]


def test_pyro_svi_with_a_reparametrised_beta_guide():
    require_tool("pyro")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _close(run_with("hookgrad", ("pyro",), _pyro_svi), run_with("torch", ("pyro",), _pyro_svi),
               rtol=1e-4)
