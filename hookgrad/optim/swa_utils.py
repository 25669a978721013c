"""Stochastic weight averaging and exponential moving averages of a model's weights.

Mirrors: ``torch.optim.swa_utils`` (`AveragedModel`, `SWALR`, `update_bn` and the averaging
function factories). Training frameworks (Lightning's ``StochasticWeightAveraging`` and EMA
callbacks) import it at load time. The averages are computed with the same formulas and the
same ``lerp`` rounding as PyTorch's foreach path, so averaged weights equal PyTorch's.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

from hookgrad._functional import creation as _creation
from hookgrad._dtypes import int64
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.nn.modules.batchnorm import _BatchNorm
from hookgrad.nn.modules.module import Module
from hookgrad.optim.lr_scheduler import LRScheduler, _format_param
from hookgrad.optim.optimizer import Optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(
            f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[..., None]:
    """In-place EMA of lists of tensors. Mirrors: ``swa_utils.get_ema_multi_avg_fn``."""
    _check_decay(decay)

    def ema_update(ema_params: list, current_params: list, _: Any) -> None:
        with no_grad():
            if ema_params[0].is_floating_point() or ema_params[0].is_complex():
                for p_ema, p in zip(ema_params, current_params, strict=True):
                    p_ema.lerp_(p, 1 - decay)
            else:
                for p_ema, p in zip(ema_params, current_params, strict=True):
                    p_ema.copy_(p_ema * decay + p * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> Callable[..., None]:
    """In-place running mean of lists of tensors. Mirrors: ``swa_utils.get_swa_multi_avg_fn``."""

    def swa_update(averaged: list, current: list, num_averaged: Tensor | int) -> None:
        with no_grad():
            if averaged[0].is_floating_point() or averaged[0].is_complex():
                # a tensor count gives a default-dtype (float32) weight, as in PyTorch
                weight = float(1 / (num_averaged + 1))
                for p_avg, p in zip(averaged, current, strict=True):
                    p_avg.lerp_(p, weight)
            else:
                for p_avg, p in zip(averaged, current, strict=True):
                    diff = p - p_avg
                    if isinstance(num_averaged, Tensor):
                        p_avg.addcdiv_(diff, num_averaged + 1)
                    else:
                        p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[..., Tensor]:
    """EMA of one tensor (returns the new average). Mirrors: ``swa_utils.get_ema_avg_fn``."""
    _check_decay(decay)

    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[..., Tensor]:
    """Running mean of one tensor (returns the new average). Mirrors: ``get_swa_avg_fn``."""

    def swa_update(averaged: Tensor, current: Tensor, num_averaged: Tensor | int) -> Tensor:
        with no_grad():
            return averaged + (current - averaged) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of `model` whose weights are the SWA (default) or `avg_fn` average of the
    weights passed to `update_parameters`.

    Args:
        model: the model to average (deep-copied).
        device: where the copy lives.
        avg_fn: ``(averaged, current, n_averaged) -> new averaged`` for one tensor.
        multi_avg_fn: the in-place form on lists of tensors (exclusive with `avg_fn`).
        use_buffers: average the buffers too (else they are copied).

    Example:
        >>> import hookgrad as torch
        >>> swa = AveragedModel(torch.nn.Linear(2, 1))
        >>> int(swa.n_averaged)
        0

    Mirrors: ``torch.optim.swa_utils.AveragedModel``.
    """

    n_averaged: Tensor

    def __init__(self, model: Module, device: Any = None,
                 avg_fn: Callable[..., Tensor] | None = None,
                 multi_avg_fn: Callable[..., None] | None = None,
                 use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _creation.tensor(0, dtype=int64))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Fold `model`'s current weights into the average (the first call copies them)."""
        mine = (itertools.chain(self.module.parameters(), self.module.buffers())
                if self.use_buffers else self.parameters())
        theirs = (itertools.chain(model.parameters(), model.buffers())
                  if self.use_buffers else model.parameters())
        averaged, current = [], []
        first = bool(self.n_averaged == 0)
        for p_avg, p in zip(mine, theirs):
            averaged.append(p_avg.detach())
            current.append(p.detach())
            if first:
                p_avg.detach().copy_(p.detach())
        if int(self.n_averaged) > 0:
            self._average(averaged, current)
        if not self.use_buffers:
            for b_avg, b in zip(self.module.buffers(), model.buffers(), strict=True):
                b_avg.detach().copy_(b.detach())
        self.n_averaged += 1

    def _average(self, averaged: list, current: list) -> None:
        if self.multi_avg_fn is not None:
            groups: dict[Any, tuple[list, list]] = {}
            for p_avg, p in zip(averaged, current, strict=True):
                mine, theirs = groups.setdefault(p_avg.dtype, ([], []))
                mine.append(p_avg)
                theirs.append(p)
            for mine, theirs in groups.values():
                self.multi_avg_fn(mine, theirs, self.n_averaged)
            return
        # without multi_avg_fn PyTorch takes the per-tensor path on CPU (it has no foreach
        # kernels there): the SWA mean divides by the count instead of lerping
        avg_fn = self.avg_fn or get_swa_avg_fn()
        for p_avg, p in zip(averaged, current, strict=True):
            p_avg.copy_(avg_fn(p_avg, p, self.n_averaged))


def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute BatchNorm running statistics with one pass over `loader` (cumulative
    averages: momentum ``None``), then restore the momenta and the training flag.

    Mirrors: ``torch.optim.swa_utils.update_bn``.
    """
    with no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to its `swa_lr` over `anneal_epochs` epochs
    (``"cos"`` or ``"linear"``), then hold it.

    Mirrors: ``torch.optim.swa_utils.SWALR``.
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float, anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        for lr, group in zip(_format_param("swa_lr", optimizer, swa_lr),
                             optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', "
                             f"instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(
                f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: Any, swa_lr: Any, alpha: float) -> Any:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[Any]:
        """The next learning rates (interpolating from the previous ones)."""
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please "
                          "use `get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha)
                    for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(self.optimizer.param_groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = (self._cosine_anneal if anneal_strategy == "cos"
                            else self._linear_anneal)

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer and the annealing function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a `state_dict`."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
