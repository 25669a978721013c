"""Probabilistic-programming libraries, unmodified, on PyTorch and on hookgrad (import swapped):
Pyro's stochastic variational inference with a reparametrised Beta guide (its gradients are
ATen's approximate Dirichlet gradients) and GPyTorch's exact Gaussian process. Neither library
is a test dependency: each test skips when its library is not importable (docs/ecosystem.md)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

from tests.ecosystem._tools import require_tool, run_with

pytestmark = pytest.mark.oracle


def _pyro_svi(torch: Any, pyro: Any, *_: Any) -> list:
    import pyro.distributions as dist  # noqa: PLC0415 - bound to the library under test
    from pyro.infer import SVI, Trace_ELBO  # noqa: PLC0415
    from pyro.optim import Adam  # noqa: PLC0415

    pyro.set_rng_seed(0)
    pyro.clear_param_store()
    data = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0])

    def model(data: Any) -> None:
        fairness = pyro.sample("f", dist.Beta(10.0, 10.0))
        with pyro.plate("d", len(data)):
            pyro.sample("obs", dist.Bernoulli(fairness), obs=data)

    def guide(data: Any) -> None:
        a = pyro.param("a", torch.tensor(15.0), constraint=dist.constraints.positive)
        b = pyro.param("b", torch.tensor(15.0), constraint=dist.constraints.positive)
        pyro.sample("f", dist.Beta(a, b))

    svi = SVI(model, guide, Adam({"lr": 0.05}), loss=Trace_ELBO())
    losses = [svi.step(data) for _ in range(20)]
    return [*losses, pyro.param("a").item(), pyro.param("b").item()]


def _gpytorch_exact_gp(torch: Any, gpytorch: Any, *_: Any) -> list:
    torch.manual_seed(0)
    tx = torch.linspace(0, 1, 20)
    ty = torch.sin(tx * 6.28) + 0.1 * torch.randn(20)

    class GP(gpytorch.models.ExactGP):
        def __init__(self, x: Any, y: Any, likelihood: Any) -> None:
            super().__init__(x, y, likelihood)
            self.mean = gpytorch.means.ConstantMean()
            self.cov = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

        def forward(self, x: Any) -> Any:
            return gpytorch.distributions.MultivariateNormal(self.mean(x), self.cov(x))

    likelihood = gpytorch.likelihoods.GaussianLikelihood()
    model = GP(tx, ty, likelihood)
    model.train()
    likelihood.train()
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
    losses = []
    for _ in range(10):
        opt.zero_grad()
        loss = -mll(model(tx), ty)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    likelihood.eval()
    with torch.no_grad():
        pred = likelihood(model(torch.linspace(0, 1, 5)))
    return [*losses, *pred.mean.tolist(), *pred.variance.tolist()]


_CASES = {
    "pyro": (("pyro", "pyroapi", "opt_einsum"), _pyro_svi),
    "gpytorch": (("gpytorch", "linear_operator", "jaxtyping"), _gpytorch_exact_gp),
}


@pytest.mark.parametrize("lib", sorted(_CASES))
def test_inference_runs_as_on_torch(lib: str) -> None:
    require_tool(lib)
    tools, scenario = _CASES[lib]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = run_with("torch", tools, scenario)
        got = run_with("hookgrad", tools, scenario)
    np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-4, atol=1e-6)
