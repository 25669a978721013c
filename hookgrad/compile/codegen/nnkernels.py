"""One-pass Numba kernels for primitives generated code calls by impl (NOTE [Primitive kernels]).

NOTE [Primitive kernels]
Generated code runs a primitive the lowering table has no inline form for by calling its impl,
eager's array path. For float32 GELU that path is a chain of NumPy passes over the array (the
erf polynomial of `hookgrad._ops._erf32` alone is 16): in the nanoGPT step each GELU cost
about 0.45 ms forward and 0.67 ms backward (12x64x512 floats), against one fused loop in
inductor's C++. With Numba (the ``compile`` extra, `kernels.numba_mode`), `fast_impl` gives
generated code (the forward's calls and the backward's rule calls) a replacement taking the
impl's arguments: one loop computing eager's formula in eager's order on each element, with
the same erf polynomial; the float32 ``tanh`` inside it is the kernels' vectorisable one
(NOTE [Kernel tanh]: a few ulp from NumPy's), and the backward's ``exp`` stays one NumPy
pass (LLVM has no vector ``expf`` without SVML). Measured: 0.18 ms forward, 0.37 ms backward.
Anything but a row-major float32 array (and ``approximate="none"``) runs the impl. As for
fused groups, each generated backward variant is checked against the rule walk (eager's
impls) on its first run (NOTE [Validated variants]).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad._ops._elementwise import quiet
from hookgrad._ops._erf32 import _coefficients
from hookgrad.compile.codegen.fastmath import TANH32_SOURCE
from hookgrad.compile.codegen.kernels import load_kernel, numba_mode

__all__ = ["fast_impl"]

_F32 = np.dtype(np.float32)
_SQRT1_2 = 1 / math.sqrt(2)
_PDF_SCALE = 1 / math.sqrt(2 * math.pi)


def _erf_lines() -> list[str]:
    """``t = erf(v / sqrt(2))`` on one element: `_erf32`'s polynomial, then tanh."""
    top, *middle, last = _coefficients(_SQRT1_2)
    lines = ["        v2 = v * v", f"        p = v2 * np.float32({top!r})"]
    lines += [f"        p = (p + np.float32({c!r})) * v2" for c in middle]
    lines += [f"        p = (p + np.float32({last!r})) * v", "        t = _tanh32(p)"]
    return lines


def _source(args: str, body: list[str]) -> str:
    head = ["import numba", "import numpy as np", *TANH32_SOURCE.splitlines(), "",
            f"def kernel({args}):", "    for e in range(o.shape[0]):", "        v = x[e]"]
    return "\n".join(head + _erf_lines() + body) + "\n"


# eager's float32 formulas (`_gelu_impl`, `_gelu_backward_float32`), operation by operation
_GELU = _source("x, o", ["        o[e] = ((t + np.float32(1)) * v) * np.float32(0.5)"])
_GELU_BACKWARD = _source("g, x, pdf, o", [
    "        cdf = (t + np.float32(1)) * np.float32(0.5)",
    f"        o[e] = (cdf + (pdf[e] * np.float32({np.float32(_PDF_SCALE)!r})) * v) * g[e]"])


def _plain(*arrays: Any) -> bool:
    first = arrays[0]
    return all(type(a) is np.ndarray and a.dtype == _F32 and a.ndim > 0
               and a.flags.c_contiguous and a.shape == first.shape for a in arrays)


def _gelu(impl: Any) -> Any:
    kernel: list = []

    @quiet  # (as eager's impl: overflow of x * x is not a warning)
    def gelu(self: Any, approximate: str = "none") -> Any:
        if approximate != "none" or not _plain(self):
            return impl(self, approximate)
        if not kernel:
            kernel.append(load_kernel(_GELU, "kernel"))
        out = np.empty_like(self)
        kernel[0](self.reshape(-1), out.reshape(-1))
        return out
    return gelu


def _gelu_backward(impl: Any) -> Any:
    kernel: list = []

    @quiet
    def gelu_backward(grad_output: Any, self: Any, approximate: str = "none") -> Any:
        if approximate != "none" or not _plain(self, grad_output):
            return impl(grad_output, self, approximate)
        if not kernel:
            kernel.append(load_kernel(_GELU_BACKWARD, "kernel"))
        pdf = np.multiply(self, self)
        np.multiply(pdf, np.float32(-0.5), out=pdf)
        np.exp(pdf, out=pdf)
        out = np.empty_like(self)  # (writing into `pdf` itself stopped LLVM vectorising)
        kernel[0](grad_output.reshape(-1), self.reshape(-1), pdf.reshape(-1), out.reshape(-1))
        return out
    return gelu_backward


_TABLE = {"gelu": _gelu, "gelu_backward": _gelu_backward}
_MADE: dict[Any, Any] = {}


def fast_impl(prim: Any) -> Any:
    """What generated code calls instead of ``prim.impl`` (the impl itself when no kernel
    applies; see the NOTE)."""
    make = _TABLE.get(prim.name)
    if make is None or not numba_mode():
        return prim.impl
    fn = _MADE.get(prim)
    if fn is None:
        fn = _MADE[prim] = make(prim.impl)
    return fn
