"""A training monitor built on hooks: gradient norms, activation statistics, dead ReLUs, NaN/Inf.

Uses only public hook APIs, so it works on hookgrad models and on PyTorch models alike:
- module forward hooks read each leaf module's output (mean, std, dead-unit fraction, non-finite
  values) and register a tensor hook on that output to catch non-finite *gradients*;
- post-accumulate-grad hooks on parameters give each layer's gradient norm once ``.grad`` is
  final for the step.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["TrainingMonitor"]

_RELU_NAMES = ("ReLU", "ReLU6", "LeakyReLU")


def _array(t: Any) -> np.ndarray:
    t = t.detach()
    # (NumPy has no bfloat16 of its own: statistics of bfloat16 tensors read exact float32)
    return np.asarray((t.float() if str(t.dtype) == "torch.bfloat16" else t).numpy())


class TrainingMonitor:
    """Watch a model while it trains; one summary per optimisation step.

    Example::

        monitor = TrainingMonitor(model)
        for x, y in loader:
            loss = loss_fn(model(x), y); loss.backward(); opt.step(); opt.zero_grad()
            summary = monitor.end_step()      # {layer: {"grad_norm", "act_mean", ...}}
        monitor.close()

    ``nonfinite`` holds the first place a NaN/Inf appeared, e.g.
    ``{"module": "fc1", "phase": "forward", "step": 3}``, and ``history`` every step's summary.

    Mirrors: no single PyTorch object; built on ``register_forward_hook``,
    ``Tensor.register_hook`` and ``Tensor.register_post_accumulate_grad_hook``.
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self.history: list[dict] = []
        self.nonfinite: dict | None = None
        self.step = 0
        self._current: dict[str, dict] = {}
        self._handles: list = []
        self._param_layers: set[str] = set()
        self._leaves = [(n, m) for n, m in model.named_modules()
                        if n and not any(True for _ in m.children())]
        for name, mod in self._leaves:
            self._handles.append(mod.register_forward_hook(self._forward_hook(name, mod)))
            for pname, p in mod.named_parameters(recurse=False):
                if p.requires_grad:
                    self._param_layers.add(name)
                    self._handles.append(
                        p.register_post_accumulate_grad_hook(self._grad_hook(name)))

    # ------------------------------------------------------------------ hooks
    def _stats(self, name: str) -> dict:
        return self._current.setdefault(name, {"grad_sq": {}})

    def _forward_hook(self, name: str, mod: Any) -> Any:
        is_relu = type(mod).__name__ in _RELU_NAMES

        def hook(module: Any, args: tuple, output: Any) -> None:
            if not hasattr(output, "detach") or not output.is_floating_point():
                return
            a = _array(output)
            s = self._stats(name)
            s["act_mean"] = float(a.mean()) if a.size else 0.0
            s["act_std"] = float(a.std()) if a.size else 0.0
            if is_relu and a.ndim >= 1 and a.shape[0] > 0:
                units = a.reshape(a.shape[0], -1)
                s["dead_frac"] = float(np.mean(np.all(units <= 0, axis=0)))
            if not np.all(np.isfinite(a)):
                self._flag(name, "forward")
            if output.requires_grad:
                output.register_hook(self._output_grad_hook(name))

        hook.__name__ = f"monitor.forward[{name}]"
        return hook

    def _output_grad_hook(self, name: str) -> Any:
        def hook(grad: Any) -> None:
            if grad is not None and not np.all(np.isfinite(_array(grad))):
                self._flag(name, "backward")

        hook.__name__ = f"monitor.grad[{name}]"
        return hook

    def _grad_hook(self, name: str) -> Any:
        def hook(param: Any) -> None:
            g = param.grad
            if g is None:
                return
            a = _array(g)
            # .grad accumulates over backward passes: keep each parameter's latest value
            self._stats(name)["grad_sq"][id(param)] = float(np.sum(a.astype(np.float64) ** 2))
            if not np.all(np.isfinite(a)):
                self._flag(name, "grad")

        hook.__name__ = f"monitor.param[{name}]"
        return hook

    def _flag(self, name: str, phase: str) -> None:
        if self.nonfinite is None:
            self.nonfinite = {"module": name, "phase": phase, "step": self.step}

    # ------------------------------------------------------------------ results
    def end_step(self) -> dict:
        """Close the current step: returns and stores ``{layer: stats}``."""
        summary = {}
        for name, s in self._current.items():
            row = {k: v for k, v in s.items() if k != "grad_sq"}
            if name in self._param_layers:
                row["grad_norm"] = math.sqrt(sum(s["grad_sq"].values()))
            summary[name] = row
        self.history.append(summary)
        self._current = {}
        self.step += 1
        return summary

    def series(self, layer: str, key: str) -> list[float]:
        """One statistic of one layer over all recorded steps (NaN where absent)."""
        return [step.get(layer, {}).get(key, float("nan")) for step in self.history]

    def layers(self) -> list[str]:
        return [n for n, _ in self._leaves]

    def close(self) -> None:
        """Remove every hook the monitor registered."""
        for h in self._handles:
            h.remove()
        self._handles = []

    def __enter__(self) -> TrainingMonitor:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
