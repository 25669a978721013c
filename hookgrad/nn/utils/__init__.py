"""Module utilities. Mirrors: ``torch.nn.utils``."""

from __future__ import annotations

from hookgrad.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm
from hookgrad.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from hookgrad.nn.utils import rnn  # noqa: E402  (torch.nn.utils.rnn)

__all__ = [
    "clip_grad_norm_", "clip_grad_value_", "get_total_norm", "parameters_to_vector",
    "vector_to_parameters", "rnn",
]
