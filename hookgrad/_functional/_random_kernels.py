"""PyTorch's CPU sampling kernels on NumPy arrays, drawing from an `MTEngine`.

Each function returns the values PyTorch writes for the same generator state, in the order its
kernels visit elements (row-major for the contiguous results these return; `in_memory_order`
places values of an in-place fill on a strided view). See NOTE [PyTorch's random stream].
"""

from __future__ import annotations

import math

import numpy as np

from hookgrad._functional._mt_engine import MTEngine

__all__ = ["bernoulli_scalar", "bernoulli_tensor", "binomial", "cauchy", "exponential",
           "geometric", "in_memory_order", "integers", "log_normal", "multinomial", "normal",
           "poisson", "randperm", "rrelu_slopes", "standard_gamma", "uniform", "uniform_below"]

_F32, _F64, _LD = np.float32, np.float64, np.longdouble


def _size(shape: tuple) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _fma(x: np.ndarray, scale: float, shift: float, work: type) -> np.ndarray:
    """``x * scale + shift`` rounded once in ``work`` precision (the kernels are contracted)."""
    if work is _F32:
        return (x.astype(_F64) * _F64(_F32(scale)) + _F64(_F32(shift))).astype(_F32)
    return (x.astype(_LD) * _LD(scale) + _LD(shift)).astype(_F64)


def uniform(eng: MTEngine, shape: tuple, np_dtype: np.dtype, low: float, high: float
            ) -> np.ndarray:
    """``uniform_(low, high)``: ``low + x * (high - low)`` for one uniform per element."""
    n = _size(shape)
    if np_dtype == _F64:
        x = eng.uniform_f64(n)
        out = _fma(x, _F64(high) - _F64(low), low, _F64)
    else:
        # float16/bfloat16 draw and compute in float32, then round (PyTorch's reduced types)
        lo, hi = _F32(low), _F32(high)
        out = _fma(eng.uniform_f32(n), _F32(hi - lo), lo, _F32).astype(np_dtype, copy=False)
        if np_dtype != _F32:
            # a value that rounds up to `high` in the narrow type wraps to `low`, as PyTorch's
            narrow = np.dtype(np_dtype).type
            out[out == narrow(high)] = narrow(low)
    return out.astype(np_dtype, copy=False).reshape(shape)


def uniform_below(eng: MTEngine, n: int, low: float, high: float) -> np.ndarray:
    """``n`` draws of ``uniform_real_distribution<double>(low, high)`` (one fused multiply-add)."""
    return _fma(eng.uniform_f64(n), _F64(high) - _F64(low), low, _F64)


def rrelu_slopes(eng: MTEngine, values: np.ndarray, lower: float, upper: float) -> np.ndarray:
    """``rrelu``'s training slopes: one double uniform in [lower, upper) per non-positive
    element, in order (positive elements draw nothing and keep slope 1), rounded to the
    input's precision; the bounds are the kernel's float32 ``opmath`` values."""
    flat = np.ascontiguousarray(values).ravel()
    lo, hi = float(np.float32(lower)), float(np.float32(upper))
    slopes = np.ones(flat.shape, dtype=values.dtype)
    negative = ~(flat > 0)
    slopes[negative] = uniform_below(eng, int(negative.sum()), lo, hi).astype(values.dtype)
    return slopes.reshape(values.shape)


def normal(eng: MTEngine, shape: tuple, np_dtype: np.dtype, mean: float, std: float,
           contiguous: bool = True) -> np.ndarray:
    """``normal_(mean, std)``: the block fill for contiguous tensors of 16+ elements, one
    cached double normal per element otherwise."""
    n = _size(shape)
    if n >= 16 and contiguous:
        if np_dtype == _F32:
            out = eng.normal_fill_f32(n, mean, std)
        elif np.dtype(np_dtype).itemsize == 2:  # float16, bfloat16
            out = eng.normal_fill_reduced(n, mean, std)
        else:
            out = eng.normal_fill_f64(n, mean, std)
    else:
        z = eng.normal_doubles(n)
        out = (z.astype(_LD) * _LD(std) + _LD(mean)).astype(_F64)
    return out.astype(np_dtype, copy=False).reshape(shape)


def integers(eng: MTEngine, shape: tuple, np_dtype: np.dtype, low: int, high: int,
             wide_ok: bool = True) -> np.ndarray:
    """``random_(low, high)``: ``word % range + low``; 64-bit words for ranges of 2**32 and up
    (for the dtypes that can hold them)."""
    n = _size(shape)
    span = high - low
    words = eng.words64(n) if span >= 1 << 32 and wide_ok else eng.words(n)
    vals = (words % np.uint64(span)).astype(object if span >= 1 << 63 else np.int64) + low
    return np.asarray(vals).astype(np_dtype).reshape(shape)


def bernoulli_scalar(eng: MTEngine, shape: tuple, p: float) -> np.ndarray:
    """``bernoulli_(p)``: a double uniform below ``p`` (PyTorch's portable kernel)."""
    return (eng.uniform_f64(_size(shape)) < p).reshape(shape)


def bernoulli_tensor(eng: MTEngine, probs: np.ndarray) -> np.ndarray:
    """``bernoulli_(p_tensor)`` for ``probs`` already broadcast to the output's shape: double
    probabilities compare double uniforms, other dtypes float uniforms."""
    n = probs.size
    flat = np.ascontiguousarray(probs).ravel()
    if probs.dtype == _F64:
        u = eng.uniform_f64(n)
    else:
        u = eng.uniform_f32(n)
        flat = flat.astype(_F32)
    return (u < flat).reshape(probs.shape)


def exponential(eng: MTEngine, shape: tuple, lambd: float) -> np.ndarray:
    u = eng.uniform_f64(_size(shape)).astype(_LD)
    return (_LD(-1.0) / _LD(lambd) * np.log1p(-u)).astype(_F64).reshape(shape)


def cauchy(eng: MTEngine, shape: tuple, median: float, sigma: float) -> np.ndarray:
    u = eng.uniform_f64(_size(shape))
    t = np.tan((np.pi * (u - 0.5)).astype(_LD)).astype(_F64)
    return (median + sigma * t).reshape(shape)


def log_normal(eng: MTEngine, shape: tuple, mean: float, std: float) -> np.ndarray:
    z = eng.normal_doubles(_size(shape)) * std + mean
    return np.exp(z.astype(_LD)).astype(_F64).reshape(shape)


def geometric(eng: MTEngine, shape: tuple, p: float) -> np.ndarray:
    u = eng.uniform_f64(_size(shape)).astype(_LD)
    ratio = (np.log(u).astype(_F64) / np.log1p(_LD(-p)).astype(_F64))
    return np.ceil(ratio).reshape(shape)


def randperm(eng: MTEngine, n: int) -> np.ndarray:
    """Fisher-Yates from the front: swap ``i`` with ``i + word % (n - i)``."""
    perm = np.arange(n, dtype=np.int64)
    if n < 2:
        return perm
    picks = eng.words(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)
    out = perm.tolist()
    for i, z in enumerate(picks.tolist()):
        j = i + z
        out[i], out[j] = out[j], out[i]
    return np.asarray(out, dtype=np.int64)


def multinomial(eng: MTEngine, rows: np.ndarray, num_samples: int, replacement: bool
                ) -> np.ndarray:
    """Indices per row of ``rows`` (2-D, the input's dtype), PyTorch's two algorithms."""
    if not replacement or num_samples == 1:
        # keys p / Exponential(1), drawn in the input's dtype; the largest keys win (PyTorch
        # takes this path for a single draw with replacement too)
        q = exponential(eng, rows.shape, 1.0).astype(rows.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = rows / q
        return np.argsort(-keys, axis=-1, kind="stable")[:, :num_samples]
    out = np.empty((rows.shape[0], num_samples), np.int64)
    for r, row in enumerate(rows):
        cum = np.cumsum(row.astype(_F64)).astype(rows.dtype)
        total = _F64(cum[-1])
        cum = (cum.astype(_F64) / total).astype(rows.dtype)
        u = eng.uniform_f64(num_samples)
        out[r] = np.searchsorted(cum.astype(_F64), u, side="left")
    return np.minimum(out, rows.shape[1] - 1)


def in_memory_order(view: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Arrange ``values`` (drawn in order) over ``view``'s elements by increasing address, the
    order PyTorch's iterator visits a strided output in."""
    if view.flags.c_contiguous or view.size < 2:
        return values.reshape(view.shape)
    offsets = np.zeros(view.shape, np.int64)
    for axis, stride in enumerate(view.strides):
        shape = [1] * view.ndim
        shape[axis] = view.shape[axis]
        offsets = offsets + (np.arange(view.shape[axis], dtype=np.int64) * stride).reshape(shape)
    order = np.argsort(offsets.ravel(), kind="stable")
    out = np.empty(view.size, values.dtype)
    out[order] = values.ravel()
    return out.reshape(view.shape)


def standard_gamma(eng: MTEngine, alpha: np.ndarray) -> np.ndarray:
    """``_standard_gamma``: Marsaglia and Tsang's rejection sampler per element, in PyTorch's
    arithmetic (float literals, the concentration boosted in the input's own precision, the
    rest in double) and its draws (double uniforms, cached double normals)."""
    work = np.dtype(alpha.dtype).type
    f = np.float32
    out = np.empty(alpha.size, _F64)
    for i, a in enumerate(np.ascontiguousarray(alpha).ravel().tolist()):
        out[i] = _gamma_one(eng, work(a), work, f)
    tiny = np.finfo(alpha.dtype).tiny
    vals = out.astype(alpha.dtype)
    # std::max(tiny, sample): a NaN sample gives tiny, as the comparison is false
    return np.where(vals > tiny, vals, tiny).astype(alpha.dtype).reshape(alpha.shape)


def _gamma_one(eng: MTEngine, alpha: np.floating, work: type, f: type) -> float:
    scale = 1.0
    if alpha < 1:
        if alpha == 0:
            return 0.0
        u = float(eng.uniform_f64(1)[0])
        # 1 / alpha in the input's precision (PyTorch's ``1.0f / alpha`` on a scalar_t)
        scale *= float(np.power(_LD(1 - u), _LD(work(1) / alpha)))
        alpha = work(alpha + work(1))
    third = f(1) / f(3)
    d = float(work(alpha - work(third)))
    c = float(1.0 / np.sqrt(_LD(9.0 * d)).astype(_F64))  # NaN propagates from a NaN alpha
    k = float(f(0.0331))
    while True:
        while True:
            x = float(eng.normal_doubles(1)[0])
            y = 1.0 + c * x
            if not y <= 0:
                break
        v = y * y * y
        u = 1 - float(eng.uniform_f64(1)[0])
        xx = x * x
        if u < 1.0 - k * xx * xx:
            return scale * d * v
        log_u = float(np.log(_LD(u)))
        log_v = float(np.log(_LD(v)))  # v = y**3 > 0 (or NaN from a NaN alpha)
        if log_u < 0.5 * xx + d * (1.0 - v + log_v):
            return scale * d * v


def poisson(eng: MTEngine, rates: np.ndarray) -> np.ndarray:
    """``_s_poisson``: per element, products of uniforms below 10, Hörmann's transformed
    rejection from 10 up, with PyTorch's double uniforms."""
    flat = np.ascontiguousarray(rates, dtype=_F64).ravel().tolist()
    out = [_poisson_one(eng, lam) for lam in flat]
    return np.asarray(out, dtype=_F64).reshape(rates.shape)


def _poisson_one(eng: MTEngine, lam: float) -> float:
    def uniform() -> float:
        return float(eng.uniform_f64(1)[0])

    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = uniform() - 0.5
            v = uniform()
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return float(k)
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (math.log(v) + math.log(inv_alpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - math.lgamma(k + 1.0)):
                return float(k)
    if lam == 0:
        return 0.0
    enlam, count, prod = math.exp(-lam), 0, 1.0
    while True:
        prod *= uniform()
        if prod > enlam:
            count += 1
        else:
            return float(count)


_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
         0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
         0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k: float) -> float:
    if k < len(_TAIL):
        return _TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def binomial(eng: MTEngine, count: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """``_s_binomial``: per element, inversion below a mean of 10 and BTRS above, in the
    count's precision where PyTorch computes in it (float32 tensors) and double elsewhere."""
    work = np.dtype(count.dtype).type
    pairs = zip(np.ascontiguousarray(count).ravel().tolist(),
                np.ascontiguousarray(prob, dtype=count.dtype).ravel().tolist())
    out = [_binomial_one(eng, work(n), work(p), work) for n, p in pairs]
    return np.asarray(out, dtype=count.dtype).reshape(count.shape)


def _binomial_one(eng: MTEngine, n: np.floating, p: np.floating, w: type) -> float:
    if n <= 0 or p <= 0:
        return 0.0
    if p >= 1:
        return float(n)
    if p <= 0.5:
        return float(_btrs(eng, n, p, w) if n * p >= 10 else _inversion(eng, n, p))
    if p > 0.5:
        q = w(w(1) - p)
        return float(n - (_btrs(eng, n, q, w) if n * q >= 10 else _inversion(eng, n, q)))
    return float("nan")


def _inversion(eng: MTEngine, n: np.floating, p: np.floating) -> np.floating:
    logprob = float(type(p)(math.log1p(-float(p))))  # log1p in the count's precision
    geom_sum, num = 0.0, type(n)(0)
    while True:
        geom_sum += math.ceil(math.log(float(eng.uniform_f64(1)[0])) / logprob)
        if geom_sum > n:
            return num
        num = type(n)(num + 1)


def _btrs(eng: MTEngine, n: np.floating, p: np.floating, w: type) -> np.floating:
    stddev = float(np.sqrt(w(n * p * (w(1) - p))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * float(p)
    c = float(w(n * p)) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(w(p / (w(1) - p)))
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor(float(w(w(n + w(1)) * p)))
    nf = float(n)
    while True:
        u = float(eng.uniform_f64(1)[0]) - 0.5
        v = float(eng.uniform_f64(1)[0])
        us = 0.5 - abs(u)
        k = w(math.floor((2 * a / us + b) * u + c))
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        kf = float(k)
        n_minus_k = float(w(n - k))
        upper = ((m + 0.5) * math.log((m + 1) / (r * (nf - m + 1)))
                 + float(w(n + w(1))) * math.log((nf - m + 1) / float(w(n_minus_k + 1)))
                 + (kf + 0.5) * math.log(r * float(w(n_minus_k + 1)) / float(w(k + w(1))))
                 + _stirling_tail(m) + _stirling_tail(nf - m)
                 - _stirling_tail(kf) - _stirling_tail(n_minus_k))
        if v <= upper:
            return k
