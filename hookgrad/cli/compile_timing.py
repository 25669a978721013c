"""``hookgrad train --compile``: how much faster the compiled training step is than eager.

After training, the same forward+backward step on one fixed batch is timed with the eager model
and with the compiled one (the first compiled call, which traces and compiles, is timed on its
own). Gradients are cleared afterwards, so the trained model is left as it was.
"""

from __future__ import annotations

import time
from typing import Any

import hookgrad
import hookgrad._dynamo

__all__ = ["compile_speedup", "describe"]


def _step_ms(model: Any, loss_fn: Any, xb: Any, yb: Any, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        loss_fn(model(xb), yb).backward()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def compile_speedup(model: Any, loss_fn: Any, xb: Any, yb: Any, repeats: int = 20) -> dict:
    """Best-of-`repeats` step times of `model` eager and under `hookgrad.compile`, in ms.

    The compile caches are reset first, so ``first_call_ms`` is the real trace-and-compile
    latency (training already compiled this code).
    """
    hookgrad._dynamo.reset()
    compiled = hookgrad.compile(model)
    t0 = time.perf_counter()
    loss_fn(compiled(xb), yb).backward()  # traces and compiles
    first_ms = (time.perf_counter() - t0) * 1e3
    eager_ms = _step_ms(model, loss_fn, xb, yb, repeats)
    compiled_ms = _step_ms(compiled, loss_fn, xb, yb, repeats)
    for p in model.parameters():
        p.grad = None
    return {"eager_ms": eager_ms, "compiled_ms": compiled_ms, "first_call_ms": first_ms,
            "speedup": eager_ms / compiled_ms}


def describe(timing: dict) -> str:
    """The one line ``hookgrad train --compile`` prints."""
    return (f"compiled training step: {timing['compiled_ms']:.2f} ms vs {timing['eager_ms']:.2f} ms "
            f"eager ({timing['speedup']:.2f}x); first compiled call {timing['first_call_ms']:.0f} ms")
