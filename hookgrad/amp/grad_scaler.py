"""Loss scaling for mixed precision: scale the loss, unscale the gradients, skip steps on inf.

Mirrors: ``torch.amp.GradScaler``. On the CPU it scales for real (PyTorch's CPU scaler is
enabled too); for ``"cuda"`` without CUDA it warns and disables itself, after which ``scale``
returns its input, ``step`` just steps and ``get_scale`` is 1.0, as PyTorch's.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from hookgrad._backend import cuda_available
from hookgrad._dtypes import float32
from hookgrad._tensor import Tensor
from hookgrad._functional import creation as C
from hookgrad.autograd.grad_mode import no_grad

__all__ = ["GradScaler", "OptState"]


class OptState:
    """Where an optimizer is in the scale/unscale/step cycle. Mirrors: ``torch.amp.grad_scaler.OptState``."""

    READY, UNSCALED, STEPPED = 0, 1, 2


class GradScaler:
    """Dynamic loss scaler. Mirrors: ``torch.amp.GradScaler``."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if enabled and device == "cuda" and not cuda_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale, self._growth_factor = init_scale, growth_factor
        self._backoff_factor, self._growth_interval = backoff_factor, growth_interval
        self._scale: Tensor | None = None
        self._growth_tracker = 0
        self._per_optimizer_states: dict[int, dict] = {}

    def _state(self, optimizer: Any) -> dict:
        return self._per_optimizer_states.setdefault(
            id(optimizer), {"stage": OptState.READY, "found_inf": None})

    def scale(self, outputs: Any) -> Any:
        """Multiply `outputs` (a tensor or nested iterable of tensors) by the scale."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = C.full((), self._init_scale, dtype=_f32())
        if isinstance(outputs, Tensor):
            return outputs * self._scale.to(outputs.dtype)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        if isinstance(outputs, dict):
            return {k: self.scale(v) for k, v in outputs.items()}
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer: Any) -> None:
        """Divide the gradients of `optimizer`'s parameters by the scale, recording infs."""
        if not self._enabled:
            return
        if self._scale is None:
            raise RuntimeError("Attempted unscale_ but _scale is None.  This may indicate your "
                               "script did not use scaler.scale(loss or outputs) earlier in the "
                               "iteration.")
        state = self._state(optimizer)
        if state["stage"] == OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] == OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv = np.float32(1.0 / np.float64(self._scale.item()))
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    found = found or not bool(np.isfinite(p.grad._data).all())
                    p.grad.mul_(float(inv))
        state["found_inf"] = found
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale if needed, then ``optimizer.step()`` unless a gradient was inf or nan."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        state = self._state(optimizer)
        if state["stage"] == OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == OptState.READY:
            self.unscale_(optimizer)
        retval = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: Any = None) -> None:
        """Back off after an inf, grow after `growth_interval` clean steps; reset the cycle."""
        if not self._enabled:
            return
        if new_scale is not None:
            value = new_scale.item() if isinstance(new_scale, Tensor) else float(new_scale)
            self._scale = C.full((), value, dtype=_f32())
        else:
            found = [s["found_inf"] for s in self._per_optimizer_states.values()
                     if s["found_inf"] is not None]
            if not found:
                raise AssertionError("No inf checks were recorded prior to update.")
            value = self._scale.item()
            if any(found):
                value, self._growth_tracker = value * self._backoff_factor, 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    value, self._growth_tracker = value * self._growth_factor, 0
            if math.isfinite(value):
                self._scale = C.full((), value, dtype=_f32())
        self._per_optimizer_states = {}

    def get_scale(self) -> float:
        """Mirrors: ``torch.amp.GradScaler.get_scale``."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """Mirrors: ``torch.amp.GradScaler.state_dict`` (empty when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        """Mirrors: ``torch.amp.GradScaler.load_state_dict``."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        self._scale = C.full((), state_dict["scale"], dtype=_f32())
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._growth_tracker = state_dict["_growth_tracker"]


def _f32() -> Any:
    return float32
