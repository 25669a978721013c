"""OpSpecs: the complex-number primitives, entered and left through real tensors.

Each spec builds complex values from real float64 inputs (``view_as_complex``, ``complex``,
``polar``) and returns a real result (``view_as_real``, ``angle``, ``abs``), so the generic
real-valued checks (values and gradients against torch, float64 gradcheck, gradgradcheck,
forward AD) exercise the complex rules and the engine's conjugation step (NOTE [Complex
gradients]) in between. tests/dtypes compares complex-valued gradients directly.
"""

from __future__ import annotations

from hookgrad.testing._opspec import Arg, OpSpec, Sample


def _x(shape: tuple, low: float = -2.0, high: float = 2.0) -> Arg:
    return Arg(shape, low=low, high=high)


def _z(lib, a, b):
    return lib.complex(a, b)


SPECS = [
    OpSpec("view_as_complex_mul",
           lambda lib, x, y: lib.view_as_real(lib.view_as_complex(x) * lib.view_as_complex(y)),
           [Sample((_x((3, 2)), _x((3, 2))))], prims=("view_as_complex", "view_as_real")),
    OpSpec("complex_exp_div", lambda lib, a, b, c: lib.view_as_real(
               _z(lib, a, b).exp() / _z(lib, c, a)),
           [Sample((_x((4,)), _x((4,)), _x((4,), low=0.5)))], prims=("complex",)),
    OpSpec("polar", lambda lib, r, t: lib.view_as_real(lib.polar(r, t)),
           [Sample((_x((2, 3), low=0.2), _x((3,))))], prims=("polar",)),
    OpSpec("angle", lambda lib, a, b: lib.angle(_z(lib, a, b)),
           [Sample((_x((5,), low=0.3), _x((5,))))], prims=("angle",)),
    OpSpec("abs_complex", lambda lib, a, b: _z(lib, a, b).abs(),
           [Sample((_x((5,), low=0.3), _x((5,))))], prims=("complex",)),
    OpSpec("sgn", lambda lib, a, b: lib.view_as_real(_z(lib, a, b).sgn()),
           [Sample((_x((5,), low=0.3), _x((5,))))], prims=("sgn",)),
    OpSpec("conj_physical", lambda lib, a, b: lib.view_as_real(
               _z(lib, a, b).conj_physical() * _z(lib, b, a)),
           [Sample((_x((4,)), _x((4,))))], prims=("conj_physical",)),
    OpSpec("conj", lambda lib, a, b: lib.view_as_real(
               (_z(lib, a, b).conj() * _z(lib, b, a)).resolve_conj()),
           [Sample((_x((4,)), _x((4,))))], prims=("_conj",)),
    OpSpec("complex_matmul_sum", lambda lib, a, b, c, d: lib.view_as_real(
               (_z(lib, a, b) @ _z(lib, c, d)).sum(0, keepdim=True)),
           [Sample((_x((2, 3)), _x((2, 3)), _x((3, 2)), _x((3, 2))))], prims=("complex",)),
    OpSpec("real_imag", lambda lib, a, b: (_z(lib, a, b) * _z(lib, b, a)).real
           + (_z(lib, a, b).sqrt()).imag * 2,
           [Sample((_x((4,), low=0.3), _x((4,), low=0.3)))], prims=("view_as_real",)),
    OpSpec("fft_rfft_irfft", lambda lib, x: lib.fft.irfft(lib.fft.rfft(x) * (2 - 1j), n=7),
           [Sample((_x((2, 7)),))], prims=("_fft_r2c", "_fft_c2r")),
    OpSpec("fft_c2c", lambda lib, x: lib.view_as_real(
               lib.fft.ifft2(lib.fft.fft(x, norm="ortho") ** 2)),
           [Sample((_x((3, 4)),))], prims=("_fft_c2c", "_fft_r2c")),
]
