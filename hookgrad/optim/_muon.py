"""Muon. Mirrors: ``torch.optim._muon`` (``torch.optim.Muon``).

Momentum (Nesterov by default) on 2-d parameters, orthogonalised by a quintic Newton-Schulz
iteration before the step. PyTorch runs the iteration in bfloat16; here it runs on float32 arrays
rounded to bfloat16 (round to nearest even) after every matrix product and scaling, where
PyTorch's bfloat16 kernels round (the same values, without building bfloat16 tensors).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import enable_grad, no_grad
from hookgrad.optim.optimizer import Optimizer, _arr, _bump

__all__ = ["Muon"]

DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.775, 2.0315
DEFAULT_NS_STEPS = 5
EPS = 1e-07


def _bf16(a: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even), kept as float32."""
    bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)
    out = rounded.view(np.float32)
    return np.where(np.isnan(a), np.float32(np.nan), out)


def _zeropower_via_newtonschulz(grad: np.ndarray, ns_coefficients: tuple, ns_steps: int,
                                eps: float) -> np.ndarray:
    """An approximately orthogonal matrix with `grad`'s singular vectors."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = _bf16(grad.astype(np.float32))
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    norm = _bf16(np.float32(np.sqrt((x.astype(np.float32) ** 2).sum())))
    x = _bf16(x / max(norm, np.float32(eps)))
    for _ in range(ns_steps):
        gram = _bf16(x @ x.T)
        update = _bf16(np.float32(b) * gram + np.float32(c) * (gram @ gram))
        x = _bf16(np.float32(a) * x + update @ x)
    return x.T if tall else x


def _adjust_lr(lr: float, adjust_lr_fn: str | None, param_shape: Any) -> float:
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


class Muon(Optimizer):
    """Momentum orthogonalised by Newton-Schulz, for 2-d parameters.

    Mirrors: ``torch.optim.Muon``.
    """

    def __init__(self, params: Any, lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple = (DEFAULT_A, DEFAULT_B, DEFAULT_C), eps: float = EPS,
                 ns_steps: int = DEFAULT_NS_STEPS, adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _init_state(self, state: dict[str, Any], p: Tensor, group: dict[str, Any]) -> None:
        state["momentum_buffer"] = Tensor._make(np.zeros_like(p._grad._data))  # type: ignore

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step. Mirrors: ``torch.optim.Muon.step``."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            params, grads, states = self._params_with_state(group)
            lr, momentum = float(group["lr"]), group["momentum"]
            for param, grad_t, state in zip(params, grads, states, strict=True):
                grad = _arr(grad_t)
                if grad.ndim != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                buf = _arr(state["momentum_buffer"])
                buf += (grad - buf) * (1 - momentum)
                _bump(state["momentum_buffer"])
                update = grad + (buf - grad) * momentum if group["nesterov"] else buf
                ortho = _zeropower_via_newtonschulz(update, group["ns_coefficients"],
                                                    group["ns_steps"], group["eps"])
                p = _arr(param)
                p *= 1 - lr * group["weight_decay"]
                step = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
                p -= (ortho * step).astype(p.dtype, copy=False)
                _bump(param)
        return loss
