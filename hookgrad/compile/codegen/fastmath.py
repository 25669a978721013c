"""Vectorisable scalar functions for float32 Numba kernels (NOTE [Kernel tanh]).

NOTE [Kernel tanh]
LLVM vectorises a kernel's element loop only if every call in its body has a vector form;
with Numba's stock llvmlite (no SVML) ``tanhf`` has none, so a fused tanh chain ran one libm
call per element and op (about 30 ns each), slower than NumPy's SIMD ``np.tanh``. Float32
kernels therefore compute tanh with a rational approximation of degree 13/6 on the input
clamped to [-7.905, 7.905] (the published form Eigen uses for float): only multiplies, adds,
one division and selects, so the loop vectorises. Measured against float64 ``tanh`` on 2M
points of [-12, 12]: at most 5.7 ulp (3.4e-7 relative), against NumPy float32's 1.4 ulp,
well inside PyTorch's float32 tolerances (1.3e-6 relative). Float64 kernels call ``np.tanh``.
"""

from __future__ import annotations

__all__ = ["TANH32_SOURCE"]

TANH32_SOURCE = '''
@numba.njit(error_model="numpy")
def _tanh32(a):
    x = min(max(a, np.float32(-7.90531110763549805)), np.float32(7.90531110763549805))
    x2 = x * x
    p = x2 * np.float32(-2.76076847742355e-16) + np.float32(2.00018790482477e-13)
    p = x2 * p + np.float32(-8.60467152213735e-11)
    p = x2 * p + np.float32(5.12229709037114e-08)
    p = x2 * p + np.float32(1.48572235717979e-05)
    p = x2 * p + np.float32(6.37261928875436e-04)
    p = x2 * p + np.float32(4.89352455891786e-03)
    p = x * p
    q = x2 * np.float32(1.19825839466702e-06) + np.float32(1.18534705686654e-04)
    q = x2 * q + np.float32(2.26843463243900e-03)
    q = x2 * q + np.float32(4.89352518554385e-03)
    return a if abs(a) < np.float32(0.0004) else p / q
'''
