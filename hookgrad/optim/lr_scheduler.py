"""Learning-rate schedulers. Mirrors: ``torch.optim.lr_scheduler``.

Each scheduler rewrites ``group["lr"]`` of its optimizer's param groups when stepped, with the
same chainable (recursive) formulas as torch, so the float sequence is identical, not merely
close. ``state_dict()`` is every instance attribute but the optimizer, exactly torch's keys.
"""

from __future__ import annotations

import math
from math import inf  # noqa: F401 - PyTorch's module exports it (ReduceLROnPlateau uses it)
import types
import warnings
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from typing import Any

from hookgrad._dispatch import note_write
from hookgrad._tensor import Tensor
from hookgrad.optim.optimizer import Optimizer

__all__ = [
    "LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
    "OneCycleLR", "ReduceLROnPlateau",
]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)
_STEP_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
    "later, you should call them in the opposite order: `optimizer.step()` before "
    "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value "
    "of the learning rate schedule. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)


def _copy(value: Any) -> Any:
    """A tensor hyper-parameter is copied so lists never alias ``group["lr"]``."""
    return Tensor._make(value._data.copy()) if isinstance(value, Tensor) else value


def _param_groups_val_list(optimizer: Optimizer, key: str) -> list[Any]:
    return [_copy(group[key]) for group in optimizer.param_groups]


def _update_param_group_val(param_group: dict[str, Any], key: str, val: Any) -> None:
    """Assign, or fill in place when the group holds a tensor (torch keeps the tensor)."""
    current = param_group[key]
    if isinstance(current, Tensor):
        current._data[...] = float(val)
        note_write(current)
    else:
        param_group[key] = val


def _format_param(name: str, optimizer: Optimizer, param: Any) -> list[Any]:
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. {name} has "
                f"{len(param)} values, param_groups has {len(optimizer.param_groups)}."
            )
    else:
        param = [param] * len(optimizer.param_groups)
    return [_copy(p) for p in param]


class LRScheduler:
    """Base class: subclasses implement `get_lr` (the chainable formula) and may provide
    ``_get_closed_form_lr`` for ``step(epoch)``.

    Args:
        optimizer: the optimizer whose learning rates are scheduled.
        last_epoch: index of the last epoch; ``-1`` starts a fresh schedule (and records
            ``initial_lr`` in every group).

    Raises:
        TypeError: `optimizer` is not an `Optimizer`.
        KeyError: resuming (``last_epoch >= 0``) without ``initial_lr`` in the groups.

    Mirrors: ``torch.optim.lr_scheduler.LRScheduler`` (the optimizer's ``step`` is not patched;
    hookgrad's hooked step records the ``_opt_called`` flag itself).
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when "
                        "resuming scheduler with last_epoch >= 0.\nThis typically happens "
                        "when:\n1. You're trying to resume training from a checkpoint but "
                        "haven't properly loaded the optimizer state\n2. You're using "
                        "last_epoch >= 0 for a fresh training run (not recommended)"
                    )
        self.base_lrs: list[Any] = _param_groups_val_list(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        if not optimizer.__dict__.get("_tracked_by_lr_sched", False):
            # torch starts tracking optimizer.step() calls when the first scheduler is attached.
            optimizer._tracked_by_lr_sched = True
            optimizer._opt_called = False
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict[str, Any]:
        """Every instance attribute except the optimizer.

        Mirrors: ``torch.optim.lr_scheduler.LRScheduler.state_dict``.
        """
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes from `state_dict`.

        Mirrors: ``torch.optim.lr_scheduler.LRScheduler.load_state_dict``.
        """
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[Any]:
        """The learning rates set by the last `step` (copies, one per param group).

        Mirrors: ``torch.optim.lr_scheduler.LRScheduler.get_last_lr``.
        """
        return self._last_lr

    def get_lr(self) -> list[Any]:
        """The next learning rates (chainable form); use `get_last_lr` to inspect.

        Mirrors: ``torch.optim.lr_scheduler.LRScheduler.get_lr``.
        """
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance the schedule by one epoch (or jump to `epoch`, deprecated).

        Args:
            epoch: deprecated; sets ``last_epoch`` and uses the closed form when available.

        Mirrors: ``torch.optim.lr_scheduler.LRScheduler.step``.
        """
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(_STEP_ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for param_group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _update_param_group_val(param_group, "lr", lr)
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")

    def _warn_get_lr_called_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use "
                "`get_last_lr()`.",
                UserWarning,
                stacklevel=3,
            )


class _LRScheduler(LRScheduler):
    """The base class's old name, still subclassed by schedulers written before 2.0.

    Mirrors: ``torch.optim.lr_scheduler._LRScheduler``.
    """


class LambdaLR(LRScheduler):
    """lr = initial lr × ``lr_lambda(epoch)`` (one function, or one per group).

    Args:
        optimizer: the wrapped optimizer.
        lr_lambda: a function of the epoch index, or a list with one per param group.
        last_epoch: index of the last epoch (default -1).

    Mirrors: ``torch.optim.lr_scheduler.LambdaLR``.
    """

    def __init__(self, optimizer: Optimizer, lr_lambda: Any, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(
                    f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}"
                )
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        """Attributes, with callable-object lambdas saved by their ``__dict__`` (functions as
        ``None``).

        Mirrors: ``torch.optim.lr_scheduler.LambdaLR.state_dict``.
        """
        state_dict = {k: v for k, v in self.__dict__.items() if k not in ("optimizer",
                                                                           "lr_lambdas")}
        state_dict["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
            for fn in self.lr_lambdas
        ]
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes and the state of callable-object lambdas.

        Mirrors: ``torch.optim.lr_scheduler.LambdaLR.load_state_dict``.
        """
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = lr_lambdas
        for idx, fn in enumerate(lr_lambdas):
            if fn is not None:
                self.lr_lambdas[idx].__dict__.update(fn)

    def get_lr(self) -> list[Any]:
        """The next learning rates. Mirrors: ``torch.optim.lr_scheduler.LambdaLR.get_lr``."""
        self._warn_get_lr_called_outside_step()
        return [base_lr * lmbda(self.last_epoch)
                for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs, strict=True)]


class StepLR(LRScheduler):
    """Multiply the lr by `gamma` every `step_size` epochs.

    Args:
        optimizer: the wrapped optimizer.
        step_size: period of the decay, in epochs.
        gamma: multiplicative factor (default 0.1).
        last_epoch: index of the last epoch (default -1).

    Mirrors: ``torch.optim.lr_scheduler.StepLR``.
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The next learning rates. Mirrors: ``torch.optim.lr_scheduler.StepLR.get_lr``."""
        self._warn_get_lr_called_outside_step()
        if (self.last_epoch == 0) or (self.last_epoch % self.step_size != 0):
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the lr by `gamma` at each milestone epoch.

    Args:
        optimizer: the wrapped optimizer.
        milestones: epoch indices (a milestone listed twice applies `gamma` twice).
        gamma: multiplicative factor (default 0.1).
        last_epoch: index of the last epoch (default -1).

    Mirrors: ``torch.optim.lr_scheduler.MultiStepLR``.
    """

    def __init__(self, optimizer: Optimizer, milestones: Iterable[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The next learning rates. Mirrors: ``torch.optim.lr_scheduler.MultiStepLR.get_lr``."""
        self._warn_get_lr_called_outside_step()
        if self.last_epoch not in self.milestones:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma ** self.milestones[self.last_epoch]
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the lr by `gamma` every epoch.

    Args:
        optimizer: the wrapped optimizer.
        gamma: multiplicative factor.
        last_epoch: index of the last epoch (default -1).

    Mirrors: ``torch.optim.lr_scheduler.ExponentialLR``.
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The next learning rates. Mirrors: ``torch.optim.lr_scheduler.ExponentialLR.get_lr``."""
        self._warn_get_lr_called_outside_step()
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial lr down to `eta_min` over `T_max` epochs (and back up,
    periodically, if stepped further), in torch's recursive form.

    Args:
        optimizer: the wrapped optimizer.
        T_max: half period, in epochs.
        eta_min: minimum learning rate (default 0).
        last_epoch: index of the last epoch (default -1).

    Mirrors: ``torch.optim.lr_scheduler.CosineAnnealingLR``.
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        """The next learning rates.

        Mirrors: ``torch.optim.lr_scheduler.CosineAnnealingLR.get_lr``.
        """
        self._warn_get_lr_called_outside_step()
        groups = self.optimizer.param_groups
        if self._is_initial:
            return _param_groups_val_list(self.optimizer, "lr")
        if self._step_count == 1 and self.last_epoch > 0:
            return [self.eta_min + (base_lr - self.eta_min)
                    * (1 + math.cos(self.last_epoch * math.pi / self.T_max)) / 2
                    for base_lr in self.base_lrs]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [group["lr"]
                    + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base_lr, group in zip(self.base_lrs, groups, strict=True)]
        return [(1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (group["lr"] - self.eta_min) + self.eta_min
                for group in groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class OneCycleLR(LRScheduler):
    """The 1cycle policy: anneal the lr from ``max_lr / div_factor`` up to `max_lr`, then down
    to ``initial_lr / final_div_factor`` (momentum, or Adam's beta1, cycles inversely).

    Args:
        optimizer: the wrapped optimizer.
        max_lr: peak learning rate (one value, or one per group).
        total_steps: number of steps in the cycle (or give `epochs` and `steps_per_epoch`).
        epochs: number of epochs (with `steps_per_epoch`).
        steps_per_epoch: steps per epoch (with `epochs`).
        pct_start: fraction of the cycle spent increasing the lr (default 0.3).
        anneal_strategy: ``"cos"`` or ``"linear"``.
        cycle_momentum: cycle momentum / beta1 inversely to the lr.
        base_momentum: lower momentum boundary.
        max_momentum: upper momentum boundary.
        div_factor: initial lr = max_lr / div_factor.
        final_div_factor: min lr = initial lr / final_div_factor.
        three_phase: use a symmetric warm-up/cool-down plus an annihilation phase.
        last_epoch: index of the last batch (default -1).

    Raises:
        ValueError: invalid step counts, `pct_start`, strategy, or an optimizer without
            momentum under `cycle_momentum`.

    Mirrors: ``torch.optim.lr_scheduler.OneCycleLR``.
    """

    def __init__(self, optimizer: Optimizer, max_lr: Any, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum: Any = 0.85,
                 max_momentum: Any = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        self._schedule_phases = _one_cycle_phases(self.total_steps, pct_start, three_phase)
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                "anneal_strategy must be one of 'cos' or 'linear', instead got "
                f"{anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        max_lrs = _format_param("max_lr", self.optimizer, max_lr)
        if last_epoch == -1:
            for idx, group in enumerate(self.optimizer.param_groups):
                group["initial_lr"] = max_lrs[idx] / div_factor
                group["max_lr"] = max_lrs[idx]
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if self.cycle_momentum:
            self._init_momentum(optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def _init_momentum(self, optimizer: Optimizer, base_momentum: Any, max_momentum: Any,
                       last_epoch: int) -> None:
        if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
            raise ValueError(
                "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
            )
        self.use_beta1 = "betas" in optimizer.defaults
        max_momentums = _format_param("max_momentum", optimizer, max_momentum)
        base_momentums = _format_param("base_momentum", optimizer, base_momentum)
        if last_epoch == -1:
            for m_momentum, b_momentum, group in zip(max_momentums, base_momentums,
                                                     optimizer.param_groups, strict=True):
                if self.use_beta1:
                    group["betas"] = (m_momentum, *group["betas"][1:])
                else:
                    group["momentum"] = m_momentum
                group["max_momentum"] = m_momentum
                group["base_momentum"] = b_momentum

    def _anneal_func(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[Any]:
        """The next learning rates. Mirrors: ``torch.optim.lr_scheduler.OneCycleLR.get_lr``."""
        self._warn_get_lr_called_outside_step()
        lrs = []
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(
                f"Tried to step {step_num} times. The specified number of total steps is "
                f"{self.total_steps}"
            )
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    computed_lr = self._anneal_func(
                        group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        computed_momentum = self._anneal_func(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct)
                    break
                start_step = phase["end_step"]
            lrs.append(computed_lr)
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (computed_momentum, *group["betas"][1:])
                else:
                    group["momentum"] = computed_momentum
        return lrs


def _total_steps(total_steps: int | None, epochs: int | None, steps_per_epoch: int | None
                 ) -> int:
    if total_steps is not None:
        if total_steps <= 0 or not isinstance(total_steps, int):
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        return total_steps
    if epochs is not None and steps_per_epoch is not None:
        if not isinstance(epochs, int) or epochs <= 0:
            raise ValueError(f"Expected positive integer epochs, but got {epochs}")
        if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
            raise ValueError(
                f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}"
            )
        return epochs * steps_per_epoch
    raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")


def _phase(end_step: float, lr: tuple[str, str], momentum: tuple[str, str]) -> dict[str, Any]:
    return {"end_step": end_step, "start_lr": lr[0], "end_lr": lr[1],
            "start_momentum": momentum[0], "end_momentum": momentum[1]}


def _one_cycle_phases(total_steps: int, pct_start: float, three_phase: bool) -> list[dict]:
    up = float(pct_start * total_steps) - 1
    if three_phase:
        return [
            _phase(up, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")),
            _phase(float(2 * pct_start * total_steps) - 2, ("max_lr", "initial_lr"),
                   ("base_momentum", "max_momentum")),
            _phase(total_steps - 1, ("initial_lr", "min_lr"), ("max_momentum", "max_momentum")),
        ]
    return [
        _phase(up, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")),
        _phase(total_steps - 1, ("max_lr", "min_lr"), ("base_momentum", "max_momentum")),
    ]


class ReduceLROnPlateau(LRScheduler):
    """Reduce the lr by `factor` once a metric has stopped improving for `patience` epochs.

    Args:
        optimizer: the wrapped optimizer.
        mode: ``"min"`` (the metric should decrease) or ``"max"``.
        factor: multiplicative reduction (must be < 1).
        patience: epochs without improvement tolerated before reducing.
        threshold: minimal change counted as an improvement.
        threshold_mode: ``"rel"`` or ``"abs"``.
        cooldown: epochs to wait after a reduction before counting bad epochs again.
        min_lr: lower bound(s) on the learning rate.
        eps: reductions smaller than this are skipped.

    Raises:
        ValueError: ``factor >= 1``, unknown modes, or a `min_lr` list of the wrong length.

    Mirrors: ``torch.optim.lr_scheduler.ReduceLROnPlateau`` (``step(metrics)``).
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: Any = 0, eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(
                    f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}"
                )
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics: Any, epoch: int | None = None) -> None:  # type: ignore[override]
        """Record `metrics` for one epoch and reduce the lr if it has plateaued.

        Args:
            metrics: the monitored value (anything ``float()`` accepts).
            epoch: deprecated explicit epoch index.

        Mirrors: ``torch.optim.lr_scheduler.ReduceLROnPlateau.step``.
        """
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")

    def _reduce_lr(self, epoch: int) -> None:
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` "
                    f"({len(self.optimizer.param_groups)}) differs from when "
                    f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due "
                    "to a new param group being added to the optimizer. Please modify the "
                    "`min_lrs` field to match the length of the `optimizer` param groups."
                )
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, param_group in enumerate(self.optimizer.param_groups):
            old_lr = float(param_group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                _update_param_group_val(param_group, "lr", new_lr)

    @property
    def in_cooldown(self) -> bool:
        """Whether a reduction happened less than `cooldown` epochs ago.

        Mirrors: ``torch.optim.lr_scheduler.ReduceLROnPlateau.in_cooldown``.
        """
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes (and the comparison mode).

        Mirrors: ``torch.optim.lr_scheduler.ReduceLROnPlateau.load_state_dict``.
        """
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold,
                             threshold_mode=self.threshold_mode)
