"""The same small models built on torch and on hookgrad, with identical weights."""

from __future__ import annotations

from typing import Any

import numpy as np

import hookgrad


def mlp(lib: Any) -> Any:
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 6),
                             lib.nn.Tanh(), lib.nn.Linear(6, 3))


def cnn(lib: Any) -> Any:
    return lib.nn.Sequential(lib.nn.Conv2d(1, 3, 3, padding=1), lib.nn.ReLU(),
                             lib.nn.MaxPool2d(2), lib.nn.Flatten(), lib.nn.Linear(3 * 3 * 3, 3))


def pair(torch: Any, build: Any) -> tuple[Any, Any]:
    """``(torch_model, hookgrad_model)`` with hookgrad's weights copied from torch's."""
    torch.manual_seed(0)
    tm = build(torch)
    hm = build(hookgrad)
    hm.load_state_dict({k: hookgrad.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, hm


def batch(shape: tuple, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(np.float32), rng.integers(0, 3, shape[0])


def close(a: Any, b: Any, tol: float = 1e-5) -> bool:
    return bool(np.allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                            rtol=tol, atol=tol, equal_nan=True))
