"""Probability distributions, transforms and ``kl_divergence``.

Formulas, argument validation (on by default) and error messages follow PyTorch; random draws
use hookgrad's generator, so samples match PyTorch in distribution, not value by value.

Mirrors: ``torch.distributions``.
"""

from __future__ import annotations

from hookgrad.distributions import constraint_registry, constraints, transforms
from hookgrad.distributions import _kl_more  # noqa: F401 - registers its KL rules
from hookgrad.distributions._transforms_more import (
    CatTransform,
    CumulativeDistributionTransform,
    PositiveDefiniteTransform,
    StackTransform,
)
from hookgrad.distributions.bernoulli import Bernoulli
from hookgrad.distributions.binomial import Binomial
from hookgrad.distributions.categorical import Categorical
from hookgrad.distributions.constraint_registry import biject_to, transform_to
from hookgrad.distributions.continuous_bernoulli import ContinuousBernoulli
from hookgrad.distributions.cauchy import Cauchy
from hookgrad.distributions.distribution import Distribution
from hookgrad.distributions.studentT import StudentT
from hookgrad.distributions.poisson import Poisson
from hookgrad.distributions.multinomial import Multinomial
from hookgrad.distributions.inverse_gamma import InverseGamma
from hookgrad.distributions.chi2 import Chi2
from hookgrad.distributions.fishersnedecor import FisherSnedecor
from hookgrad.distributions.gamma import Gamma
from hookgrad.distributions.kumaraswamy import Kumaraswamy
from hookgrad.distributions.beta import Beta
from hookgrad.distributions.dirichlet import Dirichlet
from hookgrad.distributions.exp_family import ExponentialFamily
from hookgrad.distributions.exponential import Exponential
from hookgrad.distributions.generalized_pareto import GeneralizedPareto
from hookgrad.distributions.geometric import Geometric
from hookgrad.distributions.gumbel import Gumbel
from hookgrad.distributions.half_cauchy import HalfCauchy
from hookgrad.distributions.half_normal import HalfNormal
from hookgrad.distributions.independent import Independent
from hookgrad.distributions.kl import kl_divergence, register_kl
from hookgrad.distributions.laplace import Laplace
from hookgrad.distributions.lkj_cholesky import LKJCholesky
from hookgrad.distributions.log_normal import LogNormal
from hookgrad.distributions.logistic_normal import LogisticNormal
from hookgrad.distributions.mixture_same_family import MixtureSameFamily
from hookgrad.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from hookgrad.distributions.multivariate_normal import MultivariateNormal
from hookgrad.distributions.negative_binomial import NegativeBinomial
from hookgrad.distributions.normal import Normal
from hookgrad.distributions.one_hot_categorical import (
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from hookgrad.distributions.pareto import Pareto
from hookgrad.distributions.relaxed_bernoulli import RelaxedBernoulli
from hookgrad.distributions.relaxed_categorical import RelaxedOneHotCategorical
from hookgrad.distributions.transformed_distribution import TransformedDistribution
from hookgrad.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from hookgrad.distributions.uniform import Uniform
from hookgrad.distributions.von_mises import VonMises
from hookgrad.distributions.weibull import Weibull
from hookgrad.distributions.wishart import Wishart

__all__ = [
    "AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform",
    "Categorical", "Cauchy", "Chi2", "ComposeTransform", "ContinuousBernoulli",
    "CorrCholeskyTransform", "CumulativeDistributionTransform", "Dirichlet", "Distribution",
    "ExpTransform", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma",
    "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent",
    "IndependentTransform", "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal",
    "LogisticNormal", "LowRankMultivariateNormal", "LowerCholeskyTransform", "MixtureSameFamily",
    "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
    "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "PositiveDefiniteTransform",
    "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical", "ReshapeTransform",
    "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform", "StackTransform",
    "StickBreakingTransform", "StudentT", "TanhTransform", "Transform", "TransformedDistribution",
    "Uniform", "VonMises", "Weibull", "Wishart", "biject_to", "constraint_registry", "constraints",
    "identity_transform", "kl_divergence", "register_kl", "transform_to", "transforms",
]
