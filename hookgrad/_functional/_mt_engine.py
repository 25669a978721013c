"""PyTorch's CPU random engine, bit for bit: a Mersenne Twister and the kernels that turn its
32-bit words into values (NOTE [PyTorch's random stream]).

NOTE [PyTorch's random stream]
A CPU ``torch.Generator`` is an MT19937 seeded with the low 32 bits of its seed (the standard
``init_genrand``); NumPy's ``MT19937`` with its legacy seeding is the same engine, so the words
are drawn by NumPy in bulk. What PyTorch's kernels make of the words is reproduced here:

- ``random()`` is one word, ``random64()`` two (the first is the high half);
- a float uniform takes the low 24 bits of one word times 2**-24, a double the low 53 bits of a
  ``random64`` times 2**-53; ``from + x * (to - from)`` is one fused multiply-add in float32
  (the compiled kernel contracts it);
- integers in a range below 2**32 are ``word % range + from``, wider ranges use ``random64``;
- a normal fill of a contiguous float32 tensor of 16 or more elements draws all the uniforms
  first, then runs Box-Muller on blocks of 16 (8 cosines, 8 sines) with the single-precision
  polynomial ``log``/``sincos`` of x86 builds (their AVX2 kernel, FMA-contracted, replayed here
  operation by operation); a tail that is not a multiple of 16 redraws 16 uniforms for the last
  block. Other sizes, dtypes and layouts draw one double normal per element with
  ``normal_distribution<double>``, which caches the sine half for the next draw; the cache
  lives in the generator, persists across calls and is in its state;
- Bernoulli, exponential, Cauchy, log-normal and geometric draws transform double uniforms.

The state tensor has PyTorch's 5056-byte layout, so a state saved by one library restores in
the other. On Intel CPUs with MKL, PyTorch draws Bernoulli masks (dropout) from MKL's own
stream instead; this engine always follows the portable kernel (documented in docs).
"""

from __future__ import annotations

import numpy as np

__all__ = ["MTEngine", "STATE_BYTES"]

STATE_BYTES = 5056
_N = 624
_F32 = np.float32
_F64 = np.float64
_TWO_PI_F = _F32(2 * np.pi)


def _fma32v(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 ``a * b + c`` with one rounding (the product of two floats is exact in float64;
    the float64 sum is rounded twice, which differs from a true FMA only on exact ties)."""
    return (a.astype(_F64) * b.astype(_F64) + c.astype(_F64)).astype(_F32)


# Single-precision Cephes polynomials of the vectorised kernel (see the NOTE).
_LOG_P = (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
          1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
          3.3333331174E-1)


def _log_ps(x: np.ndarray) -> np.ndarray:
    x = np.maximum(x, np.array([0x00800000], np.uint32).view(_F32)[0])
    bits = x.view(np.uint32)
    e = ((bits >> np.uint32(23)).astype(np.int32) - 0x7F).astype(_F32) + _F32(1)
    m = ((bits & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)).view(_F32)
    small = m < _F32(0.707106781186547524)
    m = (m - _F32(1)) + np.where(small, m, _F32(0))
    e = e - np.where(small, _F32(1), _F32(0))
    z = m * m
    y = np.full_like(m, _F32(_LOG_P[0]))
    for p in _LOG_P[1:]:
        y = _fma32v(y, m, np.full_like(m, _F32(p)))
    y = y * m
    y = _fma32v(y, z, e * _F32(-2.12194440e-4))
    y = _fma32v(z, np.full_like(z, _F32(-0.5)), y)
    return _fma32v(e, np.full_like(e, _F32(0.693359375)), m + y)


def _sincos_ps(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    bits = x.view(np.uint32)
    sign_sin = bits & np.uint32(0x80000000)
    x = (bits & np.uint32(0x7FFFFFFF)).view(_F32)
    j = ((x * _F32(1.27323954473516)).astype(np.int32) + 1) & ~1
    y = j.astype(_F32)
    swap = ((j & 4) << 29).astype(np.uint32)
    poly = (j & 2) == 0
    for dp in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):
        x = _fma32v(y, np.full_like(y, _F32(dp)), x)
    sign_cos = ((~(j - 2) & 4) << 29).astype(np.uint32)
    sign_sin = sign_sin ^ swap
    z = x * x
    c = _fma32v(np.full_like(z, _F32(2.443315711809948E-005)), z,
                np.full_like(z, _F32(-1.388731625493765E-003)))
    c = _fma32v(c, z, np.full_like(z, _F32(4.166664568298827E-002)))
    c = c * z
    c = _fma32v(c, z, -(z * _F32(0.5)))
    c = c + _F32(1)
    s = _fma32v(np.full_like(z, _F32(-1.9515295891E-4)), z, np.full_like(z, _F32(8.3321608736E-3)))
    s = _fma32v(s, z, np.full_like(z, _F32(-1.6666654611E-1)))
    s = _fma32v(s * z, x, x)
    sin_v = np.where(poly, s, c)
    cos_v = np.where(poly, c, s)
    return ((sin_v.view(np.uint32) ^ sign_sin).view(_F32),
            (cos_v.view(np.uint32) ^ sign_cos).view(_F32))


def _box_muller_16(u: np.ndarray, mean: float, std: float) -> np.ndarray:
    """Blocks of 16 float32 uniforms (rows) -> 16 normals each (8 cosines, then 8 sines)."""
    u1 = _F32(1) - u[:, :8]
    radius = np.sqrt(_F32(-2) * _log_ps(u1))
    sin_t, cos_t = _sincos_ps(_TWO_PI_F * u[:, 8:])
    out = np.concatenate([radius * cos_t, radius * sin_t], axis=1)
    return _fma32v(out, np.full_like(out, _F32(std)), np.full_like(out, _F32(mean)))


class MTEngine:
    """One generator's MT19937 words, normal-sample caches and PyTorch state bytes."""

    def __init__(self, seed: int) -> None:
        self.bits = np.random.MT19937(0)
        self.reseed(seed)

    def reseed(self, seed: int) -> None:
        self.seed = seed
        self.bits._legacy_seeding(seed & 0xFFFFFFFF)
        self.fresh = True  # PyTorch reports next=0 (not 624) until the first draw
        self.next_double: float | None = None
        self.next_float: float | None = None

    # ------------------------------------------------------------------ words
    def words(self, n: int) -> np.ndarray:
        self.fresh = False
        return self.bits.random_raw(n).astype(np.uint64) if n else np.zeros(0, np.uint64)

    def words64(self, n: int) -> np.ndarray:
        w = self.words(2 * n).reshape(n, 2)
        return (w[:, 0] << np.uint64(32)) | w[:, 1]

    def uniform_f32(self, n: int) -> np.ndarray:
        return (self.words(n) & np.uint64(0xFFFFFF)).astype(_F32) * _F32(2.0 ** -24)

    def uniform_f64(self, n: int) -> np.ndarray:
        return (self.words64(n) & np.uint64((1 << 53) - 1)).astype(_F64) * 2.0 ** -53

    # ------------------------------------------------------------------ normals
    def normal_doubles(self, n: int) -> np.ndarray:
        """``n`` draws of ``normal_distribution<double>`` (standard), using and refilling the
        cached sine half."""
        out = np.empty(n, _F64)
        start = 0
        if n and self.next_double is not None:
            out[0] = self.next_double
            self.next_double = None
            start = 1
        pairs = (n - start + 1) // 2
        if pairs:
            u = self.uniform_f64(2 * pairs).reshape(pairs, 2)
            # libm's double functions are correctly rounded: evaluate wider, round once
            log1p = np.log1p(-u[:, 1].astype(np.longdouble)).astype(_F64)
            r = np.sqrt(-2.0 * log1p)
            theta = (2.0 * np.pi * u[:, 0]).astype(np.longdouble)
            cos_v = r * np.cos(theta).astype(_F64)
            sin_v = r * np.sin(theta).astype(_F64)
            both = np.empty(2 * pairs, _F64)
            both[0::2], both[1::2] = cos_v, sin_v
            # each pair yields its cosine now and caches its sine for the next draw
            take = n - start
            out[start:] = both[:take]
            if take % 2:
                self.next_double = float(sin_v[-1])
        return out

    def normal_fill_f32(self, n: int, mean: float, std: float) -> np.ndarray:
        """The vectorised fill of a contiguous float32 tensor of ``n >= 16`` elements."""
        data = self.uniform_f32(n)
        full = n // 16 * 16
        data[:full] = _box_muller_16(data[:full].reshape(-1, 16), mean, std).ravel()
        if n % 16:
            tail = self.uniform_f32(16).reshape(1, 16)
            data[n - 16:] = _box_muller_16(tail, mean, std).ravel()
        return data

    def normal_fill_reduced(self, n: int, mean: float, std: float) -> np.ndarray:
        """float16/bfloat16 (measured against torch 2.13): the float32 fill of the whole
        16-element blocks, then, for a remainder, the float32 fill of 16 fresh uniforms
        written over the last 16 elements; the caller rounds to the narrow type."""
        full = n // 16 * 16
        out = np.empty(n, _F32)
        out[:full] = self.normal_fill_f32(full, mean, std)
        if n % 16:
            out[n - 16:] = self.normal_fill_f32(16, mean, std)
        return out

    def normal_fill_f64(self, n: int, mean: float, std: float) -> np.ndarray:
        """``normal_fill`` of float64: the same 16-element blocks in double precision."""
        def block(u: np.ndarray) -> np.ndarray:
            # libm's log/cos/sin, correctly rounded: evaluated wider and rounded once
            u1 = (_F64(1) - u[:, :8]).astype(np.longdouble)
            radius = np.sqrt(_F64(-2) * np.log(u1).astype(_F64))
            theta = (2.0 * np.pi * u[:, 8:]).astype(np.longdouble)
            both = np.concatenate([radius * np.cos(theta).astype(_F64),
                                   radius * np.sin(theta).astype(_F64)], axis=1)
            # ``n * std + mean`` is contracted to one fused multiply-add
            fused = both.astype(np.longdouble) * np.longdouble(std) + np.longdouble(mean)
            return fused.astype(_F64)

        data = self.uniform_f64(n)
        full = n // 16 * 16
        data[:full] = block(data[:full].reshape(-1, 16)).ravel()
        if n % 16:
            data[n - 16:] = block(self.uniform_f64(16).reshape(1, 16)).ravel()
        return data

    # ------------------------------------------------------------------ state bytes
    def get_state(self) -> bytes:
        st = self.bits.state["state"]
        pos = int(st["pos"])
        left, nxt = (1, 0) if self.fresh else (625 - pos, pos)
        raw = bytearray(STATE_BYTES)
        raw[0:8] = int(self.seed).to_bytes(8, "little")
        raw[8:12] = int(left).to_bytes(4, "little", signed=True)
        raw[12:16] = (1).to_bytes(4, "little")
        raw[16:24] = int(nxt).to_bytes(8, "little")
        raw[24:24 + 8 * _N] = st["key"].astype(np.uint64).tobytes()
        if self.next_double is not None:
            raw[5024:5032] = np.float64(self.next_double).tobytes()
            raw[5040:5044] = (1).to_bytes(4, "little")
        if self.next_float is not None:
            raw[5048:5052] = np.float32(self.next_float).tobytes()
            raw[5052] = 1
        return bytes(raw)

    def set_state(self, raw: bytes) -> None:
        seed = int.from_bytes(raw[0:8], "little")
        left = int.from_bytes(raw[8:12], "little", signed=True)
        nxt = int.from_bytes(raw[16:24], "little")
        key = np.frombuffer(raw[24:24 + 8 * _N], np.uint64).astype(np.uint32)
        pos = _N if left <= 1 else nxt
        self.seed = seed
        self.bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
        self.fresh = left == 1 and nxt == 0
        valid = int.from_bytes(raw[5040:5044], "little")
        self.next_double = float(np.frombuffer(raw[5024:5032], _F64)[0]) if valid else None
        self.next_float = (float(np.frombuffer(raw[5048:5052], _F32)[0]) if raw[5052]
                           else None)
