"""Module utilities. Mirrors: ``torch.nn.utils``."""

from __future__ import annotations

from hookgrad.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm
from hookgrad.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from hookgrad.nn.utils import rnn  # noqa: E402  (torch.nn.utils.rnn)
from hookgrad.nn.utils import parametrize, parametrizations, prune  # noqa: E402
from hookgrad.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm  # noqa: E402
from hookgrad.nn.utils.weight_norm import remove_weight_norm, weight_norm  # noqa: E402
from hookgrad.nn.utils import fusion, init, stateless  # noqa: E402  (census)
from hookgrad.nn.utils._clip_more import clip_grad_norm, clip_grads_with_norm_  # noqa: E402
from hookgrad.nn.utils.fusion import (  # noqa: E402
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)
from hookgrad.nn.utils.init import skip_init  # noqa: E402
from hookgrad.nn.utils import memory_format  # noqa: E402  (census)
from hookgrad.nn.utils.memory_format import (  # noqa: E402
    convert_conv2d_weight_memory_format,
    convert_conv3d_weight_memory_format,
)

__all__ = [
    "clip_grad_norm_", "clip_grad_value_", "get_total_norm", "parameters_to_vector",
    "vector_to_parameters", "rnn", "parametrize", "parametrizations", "prune", "spectral_norm",
    "remove_spectral_norm", "weight_norm", "remove_weight_norm", "fusion", "init", "stateless",
    "clip_grad_norm", "clip_grads_with_norm_", "fuse_conv_bn_eval", "fuse_conv_bn_weights",
    "fuse_linear_bn_eval", "fuse_linear_bn_weights", "skip_init", "memory_format",
    "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format",
]
