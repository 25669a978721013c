"""Shared runner of the state-change soundness tests (`test_soundness_inputs`,
`test_soundness_world`): a scenario builds a fresh world and returns ``(fn, mutate, args)``;
each call first runs ``mutate(i)`` (the caller changing state between calls), then
``fn(*args(i))``. A compiled run must observe what the eager run observes on every call:
outputs (values, dtype, shape, strides, ``requires_grad``), the arguments afterwards (in-place
writes), gradients of leaf arguments after a backward, exception types.
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import hookgrad as torch
from tests.compile.fuzz_programs import fx_backend

BACKENDS = ["eager", "aot_eager", "inductor", fx_backend]


def observe(r: Any) -> Any:
    """A comparable picture of a result (tensors by value and metadata)."""
    if isinstance(r, torch.Tensor):
        return ("T", tuple(r.shape), str(r.dtype), r.requires_grad, tuple(r.stride()),
                [round(float(v), 4) for v in r.detach().reshape(-1).tolist()])
    if isinstance(r, dict):
        return ("dict", {k: observe(v) for k, v in r.items()})
    if dataclasses.is_dataclass(r) and not isinstance(r, type):
        return (type(r).__name__, {f.name: observe(getattr(r, f.name))
                                   for f in dataclasses.fields(r)})
    if isinstance(r, (list, tuple)):
        return (type(r).__name__, [observe(v) for v in r])
    if r is None or isinstance(r, (int, float, str, bool, torch.dtype)):
        return r
    return ("object", type(r).__name__)


def run(make: Any, backend: Any, calls: int) -> list:
    torch.manual_seed(0)
    fn, mutate, args = make()
    call = fn if backend is None else torch.compile(fn, backend=backend)
    out = []
    for i in range(calls):
        mutate(i)
        a = args(i)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # (recompile-limit warnings)
                res = call(*a)
            if isinstance(res, torch.Tensor) and res.requires_grad:
                res.sum().backward()
            grads = [observe(t.grad) for t in a if isinstance(t, torch.Tensor) and t.is_leaf]
            out.append((observe(res), observe(a), grads))
        except Exception as e:  # noqa: BLE001 - the exception type is observed
            out.append(("raised", type(e).__name__))
    return out


def check_every_backend(make: Any, calls: int) -> None:
    want = run(make, None, calls)
    for backend in BACKENDS:
        torch._dynamo.reset()
        try:
            got = run(make, backend, calls)
        finally:
            torch._dynamo.reset()
        for i, (g, w) in enumerate(zip(got, want)):
            assert g == w, (getattr(backend, "__name__", backend), f"call {i}", g, w)


def nothing(i: int) -> None:
    return None
