"""`CyclicLR`, published in `hookgrad.optim.lr_scheduler`.

The lr cycles between ``base_lr`` and ``max_lr`` (a triangle of ``step_size_up`` +
``step_size_down`` iterations, scaled per cycle or per iteration); momentum (or Adam's beta1)
cycles inversely between ``max_momentum`` and ``base_momentum``.

Mirrors: ``torch.optim.lr_scheduler.CyclicLR``.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from functools import partial
from typing import Any

from hookgrad.optim.lr_scheduler import LRScheduler, _format_param, _update_param_group_val
from hookgrad.optim.optimizer import Optimizer

__all__ = ["CyclicLR"]


class CyclicLR(LRScheduler):
    """Cyclical learning rate (and inverse momentum), stepped once per batch.

    Args:
        optimizer: the wrapped optimizer.
        base_lr, max_lr: lower and upper lr bounds (one value or one per group).
        step_size_up, step_size_down: iterations rising and falling (down defaults to up).
        mode: ``"triangular"``, ``"triangular2"`` (amplitude halves each cycle) or
            ``"exp_range"`` (amplitude ``gamma ** iteration``); ignored with `scale_fn`.
        gamma: the ``exp_range`` base.
        scale_fn, scale_mode: a custom amplitude function of the cycle or the iteration.
        cycle_momentum, base_momentum, max_momentum: cycle momentum inversely to the lr.
        last_epoch: index of the last batch (default -1).

    Raises:
        TypeError: `optimizer` is not an optimizer.
        ValueError: an unknown mode without `scale_fn`, or momentum cycling on an optimizer
            without momentum or betas.

    Mirrors: ``torch.optim.lr_scheduler.CyclicLR``.
    """

    def __init__(self, optimizer: Optimizer, base_lr: Any, max_lr: Any,
                 step_size_up: int = 2000, step_size_down: int | None = None,
                 mode: str = "triangular", gamma: float = 1.0,
                 scale_fn: Callable[[float], float] | None = None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum: Any = 0.8,
                 max_momentum: Any = 0.9, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups, strict=True):
                _update_param_group_val(group, "lr", lr)
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._init_momentum(optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_momentum(self, optimizer: Optimizer, base_momentum: Any, max_momentum: Any,
                       last_epoch: int) -> None:
        if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
            raise ValueError(
                "optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
        self.use_beta1 = "betas" in self.optimizer.defaults
        self.base_momentums = _format_param("base_momentum", optimizer, base_momentum)
        self.max_momentums = _format_param("max_momentum", optimizer, max_momentum)
        if last_epoch == -1:
            for m, b, group in zip(self.max_momentums, self.base_momentums,
                                   optimizer.param_groups, strict=True):
                _set_momentum(group, m, self.use_beta1)
                group["max_momentum"] = m
                group["base_momentum"] = b

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = self._triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = self._triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(self._exp_range_scale_fn, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x: float) -> float:
        """The amplitude factor for cycle (or iteration) `x`."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x: float) -> float:
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x: float) -> float:
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma: float, x: float) -> float:
        return gamma**x

    def get_lr(self) -> list[Any]:
        """The next learning rates (and, with momentum cycling, set the momentum).

        Mirrors: ``torch.optim.lr_scheduler.CyclicLR.get_lr``.
        """
        self._warn_get_lr_called_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        factor = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * factor * scale
               for base, top in zip(self.base_lrs, self.max_lrs, strict=True)]
        if self.cycle_momentum:
            for group, b, m in zip(self.optimizer.param_groups, self.base_momentums,
                                   self.max_momentums, strict=True):
                _set_momentum(group, m - (m - b) * factor * scale, self.use_beta1)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """The scheduler state; a plain-function `scale_fn` is not saved (an object's dict is).

        Mirrors: ``torch.optim.lr_scheduler.CyclicLR.state_dict``.
        """
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a `state_dict` result. Mirrors: ``CyclicLR.load_state_dict``."""
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


def _set_momentum(group: dict[str, Any], value: float, use_beta1: bool) -> None:
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


def _publish() -> None:
    from hookgrad.optim import lr_scheduler as target
    CyclicLR.__module__ = target.__name__
    target.CyclicLR = CyclicLR  # type: ignore[attr-defined]
    if "CyclicLR" not in target.__all__:
        target.__all__ = [*target.__all__, "CyclicLR"]


_publish()
