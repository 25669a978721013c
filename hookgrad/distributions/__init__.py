"""Probability distributions: `Normal`, `Categorical`, `Bernoulli`, `kl_divergence`.

Formulas, argument validation (on by default) and error messages follow PyTorch; random draws
use hookgrad's generator, so samples match PyTorch in distribution, not value by value.

Mirrors: ``torch.distributions``.
"""

from __future__ import annotations

from hookgrad.distributions import constraints
from hookgrad.distributions.bernoulli import Bernoulli
from hookgrad.distributions.binomial import Binomial
from hookgrad.distributions.categorical import Categorical
from hookgrad.distributions.distribution import Distribution
from hookgrad.distributions.kl import kl_divergence, register_kl
from hookgrad.distributions.normal import Normal

__all__ = ["Distribution", "Normal", "Categorical", "Bernoulli", "Binomial", "constraints",
           "kl_divergence", "register_kl"]
