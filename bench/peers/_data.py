"""The arrays of `bench.workloads`, drawn in the same order from the same seeds.

The peers do not go through `lib.nn`, so they cannot reuse `_mlp_setup`; this module repeats
its random draws exactly, and the harness's "same first loss" column (and tests/bench) check
that a peer's first value equals PyTorch's.
"""

from __future__ import annotations

import numpy as np

from bench import workloads as W

LINKS = W.CHAIN_OPS // 2  # links of the chain, each a mul and a tanh


def _f32(a) -> np.ndarray:
    return np.asarray(a, dtype=np.float32)


def chain_input() -> np.ndarray:
    return np.random.default_rng(0).normal(size=(16, 16)).astype(np.float32)


def mlp(batch: int) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """([w1, b1, w2, b2, w3, b3], x, y) of the MLP 784-256-256-10; weights are torch's (out, in).

    The peers multiply ``x @ w`` with ``w`` stored (in, out): that is how their users write a
    dense layer, and it saves the transpose torch's ``linear`` does inside one op.
    """
    rng = np.random.default_rng(1)
    params = W._mlp_params(rng, [784, 256, 256, 10])
    x = _f32(rng.normal(size=(batch, 784)))
    y = rng.integers(0, 10, size=batch).astype(np.int64)
    return params, x, y


def mse_target(batch: int) -> np.ndarray:
    return _f32(np.random.default_rng(2).normal(size=(batch, 10)))


def hvp() -> tuple[np.ndarray, ...]:
    """(w1, w2, x, v1, v2) of the Hessian-vector product workload."""
    rng = np.random.default_rng(3)
    w1 = _f32(rng.normal(size=(10, 32)) * 0.3)
    w2 = _f32(rng.normal(size=(32, 1)) * 0.3)
    x = _f32(rng.normal(size=(16, 10)))
    v1 = _f32(rng.normal(size=(10, 32)))
    v2 = _f32(rng.normal(size=(32, 1)))
    return w1, w2, x, v1, v2


def cnn(batch: int) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """([conv w, conv b, linear w, linear b], x, y) of the CNN workload (torch layouts)."""
    rng = np.random.default_rng(2)
    wc = rng.uniform(-0.3, 0.3, size=(8, 1, 3, 3)).astype(np.float32)
    bc = rng.uniform(-0.3, 0.3, size=(8,)).astype(np.float32)
    wl = rng.uniform(-0.03, 0.03, size=(10, 8 * 13 * 13)).astype(np.float32)
    bl = rng.uniform(-0.03, 0.03, size=(10,)).astype(np.float32)
    x = _f32(rng.normal(size=(batch, 1, 28, 28)))
    y = rng.integers(0, 10, size=batch).astype(np.int64)
    return [wc, bc, wl, bl], x, y
