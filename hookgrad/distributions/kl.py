"""`kl_divergence` between two distributions of the provided families.

Mirrors: ``torch.distributions.kl``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookgrad._tensor import Tensor
from hookgrad.distributions.bernoulli import Bernoulli
from hookgrad.distributions.categorical import Categorical
from hookgrad.distributions.normal import Normal
from hookgrad.nn import functional as F

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY: dict[tuple[type, type], Callable[[Any, Any], Tensor]] = {}


def register_kl(type_p: type, type_q: type) -> Callable:
    """Decorator registering ``fn(p, q)`` for the pair. Mirrors: ``torch.distributions.kl.register_kl``."""
    def decorator(fn: Callable[[Any, Any], Tensor]) -> Callable[[Any, Any], Tensor]:
        _KL_REGISTRY[type_p, type_q] = fn
        return fn

    return decorator


def kl_divergence(p: Any, q: Any) -> Tensor:
    """``KL(p || q)``. Mirrors: ``torch.distributions.kl.kl_divergence``."""
    for (tp, tq), fn in _KL_REGISTRY.items():
        if isinstance(p, tp) and isinstance(q, tq):
            return fn(p, q)
    raise NotImplementedError(
        f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
        f"{type(q).__name__}")


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill((q.probs == 0).expand_as(t), float("inf"))
    t = t.masked_fill((p.probs == 0).expand_as(t), 0.0)
    return t.sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = t1.masked_fill(q.probs == 0, float("inf")).masked_fill(p.probs == 0, 0.0)
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = t2.masked_fill(q.probs == 1, float("inf")).masked_fill(p.probs == 1, 0.0)
    return t1 + t2
