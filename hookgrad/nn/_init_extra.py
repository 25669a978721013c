"""``nn.init`` additions of the census: ``dirac_``, ``sparse_`` and the deprecated spellings
without the trailing underscore (each warns ``FutureWarning`` and calls the in-place one).

Mirrors: ``torch.nn.init.dirac_``, ``sparse_``, ``uniform``, ``normal``, ``constant``, ``eye``,
``dirac``, ``xavier_uniform``, ``xavier_normal``, ``kaiming_uniform``, ``kaiming_normal``,
``orthogonal``, ``sparse``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable

from hookgrad._functional import random as R
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.nn import init

__all__ = ["dirac_", "sparse_", "uniform", "normal", "constant", "eye", "dirac",
           "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal", "orthogonal",
           "sparse"]


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Identity-preserving init of 3-5 dim conv weights. Mirrors: ``torch.nn.init.dirac_``."""
    dims = tensor.dim()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                centre = tuple(s // 2 for s in sizes[2:])
                tensor[(g * out_per_group + d, d, *centre)] = 1
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    """Normal(0, std) with a `sparsity` fraction of each column zeroed. Mirrors: ``torch.nn.init.sparse_``."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    with no_grad():
        tensor.normal_(0, std)
        for col in range(cols):
            zero_rows = R.randperm(rows)[:num_zeros]
            tensor[zero_rows, col] = 0
    return tensor


def _deprecated(name: str, target: Callable) -> Callable:
    def fn(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`.",
                      FutureWarning, stacklevel=2)
        return target(*args, **kwargs)
    fn.__name__ = name
    fn.__doc__ = f"Deprecated ``{name}_``. Mirrors: ``torch.nn.init.{name}``."
    return fn


def _publish() -> None:
    extra = {"dirac_": dirac_, "sparse_": sparse_}
    for name, fn in extra.items():
        setattr(init, name, fn)
    for name in __all__[2:]:
        target = extra.get(name + "_") or getattr(init, name + "_")
        fn = _deprecated(name, target)
        globals()[name] = fn
        setattr(init, name, fn)


_publish()
