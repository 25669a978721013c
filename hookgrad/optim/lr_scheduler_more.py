"""More learning-rate schedulers, published in `hookgrad.optim.lr_scheduler`.

Mirrors: ``torch.optim.lr_scheduler.ConstantLR``, ``LinearLR``, ``MultiplicativeLR``,
``PolynomialLR``, ``CosineAnnealingWarmRestarts``, ``SequentialLR``, ``ChainedScheduler``. Each
uses PyTorch's chainable update (a factor applied to the current lr) in ``get_lr`` and its
closed form where PyTorch has one, so schedules agree to the last bit.
"""

from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

from hookgrad.optim.lr_scheduler import (
    LRScheduler,
    ReduceLROnPlateau,
    _param_groups_val_list,
    _update_param_group_val,
)
from hookgrad.optim.optimizer import Optimizer

__all__ = ["ConstantLR", "LinearLR", "MultiplicativeLR", "PolynomialLR",
           "CosineAnnealingWarmRestarts", "SequentialLR", "ChainedScheduler"]


def _scaled(sched: LRScheduler, factor: float) -> list[Any]:
    return [group["lr"] * factor for group in sched.optimizer.param_groups]


class ConstantLR(LRScheduler):
    """Scale the lr by `factor` until epoch `total_iters`. Mirrors: ``torch.optim.lr_scheduler.ConstantLR``."""

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_get_lr_called_outside_step()
        if self.last_epoch == 0:
            return _scaled(self, self.factor)
        if self.last_epoch != self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        return _scaled(self, 1.0 / self.factor)

    def _get_closed_form_lr(self) -> list[Any]:
        on = self.last_epoch >= self.total_iters
        return [base * (self.factor + on * (1 - self.factor)) for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Ramp the lr factor linearly from `start_factor` to `end_factor` over `total_iters`.

    Mirrors: ``torch.optim.lr_scheduler.LinearLR``.
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor, self.total_iters = (start_factor, end_factor,
                                                                total_iters)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_get_lr_called_outside_step()
        if self.last_epoch == 0:
            return _scaled(self, self.start_factor)
        if self._is_initial or self.last_epoch > self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        span = self.end_factor - self.start_factor
        step = span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return _scaled(self, 1.0 + step)

    def _get_closed_form_lr(self) -> list[Any]:
        frac = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (self.start_factor + (self.end_factor - self.start_factor) * frac)
                for base in self.base_lrs]


class MultiplicativeLR(LRScheduler):
    """Multiply each group's lr by ``lr_lambda(epoch)``. Mirrors: ``torch.optim.lr_scheduler.MultiplicativeLR``."""

    def __init__(self, optimizer: Optimizer, lr_lambda: Any, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas: list[Callable[[int], float]] = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        out["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                             for fn in self.lr_lambdas]
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lambdas
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)

    def get_lr(self) -> list[Any]:
        self._warn_get_lr_called_outside_step()
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * fn(self.last_epoch)
                for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups)]


class PolynomialLR(LRScheduler):
    """Decay the lr polynomially to 0 over `total_iters`. Mirrors: ``torch.optim.lr_scheduler.PolynomialLR``."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_get_lr_called_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return _param_groups_val_list(self.optimizer, "lr")
        t, e = self.total_iters, self.last_epoch
        return _scaled(self, ((1.0 - e / t) / (1.0 - (e - 1) / t)) ** self.power)

    def _get_closed_form_lr(self) -> list[Any]:
        frac = min(self.total_iters, self.last_epoch) / self.total_iters
        return [base * (1.0 - frac) ** self.power for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every ``T_i`` epochs (``T_i`` grows by `T_mult`).

    Mirrors: ``torch.optim.lr_scheduler.CosineAnnealingWarmRestarts``.
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_get_lr_called_outside_step()
        cos = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (base - self.eta_min) * cos for base in self.base_lrs]

    def step(self, epoch: Any = None) -> None:
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur, self.T_i = self.T_cur % self.T_i, self.T_i * self.T_mult
        else:
            self._restart_at(epoch)
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
                _update_param_group_val(group, "lr", lr)
        finally:
            self._get_lr_called_within_step = False
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")

    def _restart_at(self, epoch: float) -> None:
        if epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        if epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:
            n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult**n


def _check_schedulers(owner: str, optimizer: Any, schedulers: Sequence[Any]) -> None:
    for i, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(s, ReduceLROnPlateau):
            raise ValueError(f"{owner} does not support `ReduceLROnPlateau` scheduler as it "
                             "requires additional kwargs to be specified when calling `step`, "
                             f"but got one at index {i} in the given schedulers sequence.")
        if optimizer != s.optimizer:
            raise ValueError(f"{owner} expects all schedulers to belong to the same optimizer, "
                             f"but got scheduler {s.__class__.__name__} at index {i} has "
                             f"{s.optimizer}, which is different from "
                             f"{optimizer.__class__.__name__}.")


class _Composite(LRScheduler):
    _schedulers: Sequence[Any]

    def state_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        out["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return out

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        saved = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = saved
        for s, sd in zip(self._schedulers, saved):
            s.load_state_dict(sd)


class SequentialLR(_Composite):
    """Run `schedulers` one after another, switching at `milestones`.

    Mirrors: ``torch.optim.lr_scheduler.SequentialLR``.
    """

    def __init__(self, optimizer: Optimizer, schedulers: list, milestones: list[int],
                 last_epoch: int = -1) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        _check_schedulers(name, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be "
                             "one more than the number of milestone points, but got number of "
                             f"schedulers {len(schedulers)} and the number of milestones to be "
                             f"equal to {len(milestones)}")
        self._schedulers, self._milestones = schedulers, milestones
        self.last_epoch, self.optimizer = last_epoch + 1, optimizer
        for group in optimizer.param_groups:  # undo the schedulers' own first steps
            _update_param_group_val(group, "lr", group["initial_lr"])
        self.recursive_undo()
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched: Any = None) -> None:
        target = self if sched is None else sched
        if hasattr(target, "_schedulers"):
            for s in target._schedulers:
                self.recursive_undo(s)
        elif hasattr(target, "last_epoch"):
            target.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite):
    """Step every scheduler in turn each step. Mirrors: ``torch.optim.lr_scheduler.ChainedScheduler``."""

    def __init__(self, schedulers: Sequence[Any], optimizer: Optimizer | None = None) -> None:
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler to be chained, but got no "
                             "scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(name, optimizer, schedulers)
        self._schedulers, self.optimizer = schedulers, optimizer
        self._last_lr = _param_groups_val_list(schedulers[-1].optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]
        for s in self._schedulers:
            s.step()
        self._last_lr = _param_groups_val_list(self._schedulers[-1].optimizer, "lr")


def _publish() -> None:
    from hookgrad.optim import lr_scheduler as target
    for name in __all__:
        cls = globals()[name]
        cls.__module__ = target.__name__
        setattr(target, name, cls)
    target.__all__ = [*target.__all__, *(n for n in __all__ if n not in target.__all__)]


_publish()
