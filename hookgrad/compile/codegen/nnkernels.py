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
Anything but a row-major float32 array (and ``approximate="none"``) runs the impl.

`fast_vjp` does the same for a multi-output primitive's rules (`items.multi_vjp`):
``native_layer_norm``'s input, weight and bias gradients (about 12 NumPy passes, 0.23 ms
isolated and 0.45 ms inside the step per 768x128 call) in one pass over the rows, 0.065 ms:
per row the two sums of `normalization._ln_input_grad_aten` (eight interleaved partial sums,
so the loop vectorises), its float64-emulated multiply-adds for the row constants, then the
input gradient and the weight and bias column sums (in float64). Rows of 8 or fewer
elements, where eager emulates PyTorch's multiply-adds per element, run the rules.

As for fused groups, each generated backward variant is checked against the rule walk
(eager's impls) on its first run (NOTE [Validated variants]).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hookgrad._ops._elementwise import quiet
from hookgrad._ops._erf32 import _coefficients
from hookgrad.compile.codegen.fastmath import TANH32_SOURCE
from hookgrad.compile.codegen.kernels import load_kernel, numba_mode

__all__ = ["fast_impl", "fast_vjp"]

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


def _row_sums(pairs: list) -> list[str]:
    """Row sums ``name = sum over j of expr`` of one row ``r``, each in eight interleaved
    partial sums (a single running sum is one add's latency per element: LLVM may not
    reorder float adds, so it would not vectorise)."""
    lines = [f"        {n}0 = {n}1 = {n}2 = {n}3 = {n}4 = {n}5 = {n}6 = {n}7 = np.float32(0)"
             for n, _ in pairs]
    lines.append("        for j in range(0, n8, 8):")
    lines += [f"            {n}{k} += {e.format(f'j + {k}')}" for k in range(8) for n, e in pairs]
    lines.append("        for j in range(n8, n):")
    lines += [f"            {n}0 += {e.format('j')}" for n, e in pairs]
    lines += [f"        {n} = (({n}0 + {n}1) + ({n}2 + {n}3)) + (({n}4 + {n}5) + ({n}6 + {n}7))"
              for n, _ in pairs]
    return lines


# `normalization._ln_input_grad_aten` (rows longer than its fused-multiply-add limit) and the
# weight and bias rules, in one pass over the rows; the column sums in float64
_LN_BACKWARD = "\n".join([
    "import numpy as np", "", "def kernel(g, x, w, mean, rstd, dx, dw, db):",
    "    rows, n = x.shape", "    n8 = n - n % 8", "    scale = np.float32(1.0 / n)",
    "    for r in range(rows):", "        m = mean[r]", "        a = rstd[r]",
    *_row_sums([("s", "(g[r, {0}] * x[r, {0}]) * w[{0}]"), ("t", "g[r, {0}] * w[{0}]")]),
    "        b = np.float32(np.float64(t) * np.float64(m) - np.float64(s)) * a * a * a * scale",
    "        c = np.float32(np.float64(-b) * np.float64(m) - np.float64(t * a * scale))",
    "        for j in range(n):", "            gj = g[r, j]",
    "            dx[r, j] = (b * x[r, j] + (a * gj) * w[j]) + c",
    "            dw[j] += np.float64(gj * ((x[r, j] - m) * a))", "            db[j] += np.float64(gj)",
]) + "\n"


def _ln_backward(params: dict, wanted: list) -> Any:
    """``vjp(grads, results, input, weight, bias)`` of ``native_layer_norm`` for float32 rows
    longer than eight with weight and bias, only the output's gradient given; None (the rules
    run) for anything else."""
    shape = tuple(params.get("normalized_shape", ()))
    if len(shape) != 1 or shape[0] <= 8:  # (short rows: eager emulates PyTorch's FMAs)
        return None
    n = shape[0]
    kernel: list = []

    @quiet
    def vjp(grads: tuple, results: Any, x: Any, w: Any, b: Any) -> tuple | None:
        g = grads[0]
        if grads[1] is not None or grads[2] is not None or not _plain(x, g) or x.shape[-1] != n \
                or not _plain(w, b) or w.shape != (n,):
            return None
        mean, rstd = results[1], results[2]
        if not _plain(mean, rstd) or mean.shape != x.shape[:-1] + (1,):
            return None
        if not kernel:
            kernel.append(load_kernel(_LN_BACKWARD, "kernel"))
        dx = np.empty_like(x)
        dw, db = np.zeros(n), np.zeros(n)
        kernel[0](g.reshape(-1, n), x.reshape(-1, n), w, mean.reshape(-1), rstd.reshape(-1),
                  dx.reshape(-1, n), dw, db)
        return (dx if wanted[0] else None, dw.astype(_F32) if wanted[1] else None,
                db.astype(_F32) if wanted[2] else None)
    return vjp


def fast_vjp(prim: Any, params: dict, wanted: list) -> Any:
    """A kernel for the backward of multi-output primitive `prim` (see the NOTE), or None:
    ``vjp(grads, results, *inputs)`` returning the input gradients, or None where its inputs
    are not ones it takes (then the rules run)."""
    if prim.name != "native_layer_norm" or len(wanted) != 3 or not numba_mode():
        return None
    return _ln_backward(params, wanted)


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
