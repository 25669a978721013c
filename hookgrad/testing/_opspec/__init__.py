"""The OpSpec table: one entry per public op, consumed by the generic tests in ``tests/ops``.

Each family module (``pointwise.py``, ``reduction.py``...) defines ``SPECS: list[OpSpec]``;
`all_specs` gathers them. A spec's `fn` takes the library (``torch`` or ``hookgrad``) first and
runs unchanged on both (the one-lambda trick of architecture.md §7).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FAMILIES = ("pointwise", "reduction", "shape", "indexing", "linalg", "nn_ops", "conv",
            "nn_module", "rnn", "layers", "linalg_decomp", "gamma", "linalg_spectral",
            "special_fns", "nn_extra", "cfuncs", "complex_fns", "select_scan")


@dataclass(frozen=True)
class Arg:
    """One argument of a sample: a float array that may require grad, or a constant."""

    shape: tuple[int, ...] | None = None  # None: `value` is passed as is (scalar, list...)
    value: Any = None
    requires_grad: bool = True
    low: float = -2.0
    high: float = 2.0
    dtype: str = "float64"  # "float64", "float32", "int64" (indices), "bool" (masks)
    make: Callable[[np.random.Generator], np.ndarray] | None = None  # custom array maker


@dataclass(frozen=True)
class Sample:
    args: tuple[Arg, ...]
    kwargs: dict = field(default_factory=dict)
    name: str = ""


@dataclass(frozen=True)
class OpSpec:
    """One public op: how to call it on either library, and what to check."""

    name: str
    fn: Callable[..., Any]  # fn(lib, *tensors, **kwargs)
    samples: Sequence[Sample]
    prims: tuple[str, ...] = ()  # primitives of the op table this spec exercises
    grad_fn: bool = True  # compare grad_fn.name() with torch
    gradcheck: bool = True  # numerical float64 gradcheck
    gradgradcheck: bool = True
    forward_ad: bool = True
    atol: float = 1e-5
    rtol: float = 1.3e-6
    nondeterministic_grad: bool = False  # e.g. max with ties: torch's choice may differ


def all_specs() -> list[OpSpec]:
    specs: list[OpSpec] = []
    for fam in FAMILIES:
        try:
            mod = importlib.import_module(f"hookgrad.testing._opspec.{fam}")
        except ModuleNotFoundError as e:
            if e.name != f"hookgrad.testing._opspec.{fam}":
                raise
            continue
        specs.extend(mod.SPECS)
    return specs


def make_arrays(sample: Sample, seed: int = 0) -> list[Any]:
    """Concrete NumPy values for a sample's args (same values for both libraries)."""
    rng = np.random.default_rng(seed)
    out: list[Any] = []
    for a in sample.args:
        if a.shape is None:
            out.append(a.value)
        elif a.make is not None:
            out.append(a.make(rng))
        elif a.dtype in ("float64", "float32"):
            out.append(rng.uniform(a.low, a.high, size=a.shape).astype(a.dtype))
        elif a.dtype == "bool":
            out.append(rng.random(a.shape) > 0.5)
        else:
            out.append(rng.integers(int(a.low), int(a.high), size=a.shape).astype(a.dtype))
    return out


def to_lib(lib: Any, sample: Sample, arrays: list[Any], requires_grad: bool = True) -> list[Any]:
    """Turn `arrays` into `lib` tensors; float args marked requires_grad become leaves."""
    out = []
    for a, v in zip(sample.args, arrays):
        if a.shape is None:
            out.append(v)
            continue
        t = lib.tensor(v)
        if requires_grad and a.requires_grad and a.dtype.startswith("float"):
            t.requires_grad_(True)
        out.append(t)
    return out


__all__ = ["Arg", "Sample", "OpSpec", "all_specs", "make_arrays", "to_lib"]
