"""Complex tensors against PyTorch: arithmetic and promotion, unary math, reductions, matmul,
the complex-only functions (real/imag, view_as_real/complex, polar, angle, conj) and
PyTorch's errors for the ops it has no complex kernel for."""

from __future__ import annotations

import pytest

from tests.dtypes._compare import same


def _z(lib, dt="complex64"):
    d = getattr(lib, dt)
    return (lib.tensor([1 + 2j, -3 - 1j, 0.5j], dtype=d),
            lib.tensor([0.5 - 1j, 2 + 0j, -1 + 1j], dtype=d))


OPS = {
    "add": lambda l, z, w: z + w, "sub": lambda l, z, w: z - w, "mul": lambda l, z, w: z * w,
    "div": lambda l, z, w: z / w, "neg": lambda l, z, w: -z, "pow2": lambda l, z, w: z ** 2,
    "pow_t": lambda l, z, w: z ** w, "pow_half": lambda l, z, w: z ** 0.5,
    "rpow": lambda l, z, w: 2 ** z, "add_py_complex": lambda l, z, w: z + (1 - 1j),
    "float_plus_1j": lambda l, z, w: l.ones(3) + 1j, "int_times_1j": lambda l, z, w:
    l.arange(3) * 1j, "double_plus_1j": lambda l, z, w: l.ones(3, dtype=l.float64) + 1j,
    "float_times_z": lambda l, z, w: l.ones(3) * z, "double_times_z": lambda l, z, w:
    l.ones(3, dtype=l.float64) * z, "zero_dim_c128": lambda l, z, w:
    l.ones(3) + l.tensor(1j, dtype=l.complex128), "exp": lambda l, z, w: z.exp(),
    "log": lambda l, z, w: z.log(), "sqrt": lambda l, z, w: z.sqrt(),
    "sin": lambda l, z, w: z.sin(), "cos": lambda l, z, w: z.cos(),
    "tanh": lambda l, z, w: z.tanh(), "sigmoid": lambda l, z, w: z.sigmoid(),
    "reciprocal": lambda l, z, w: z.reciprocal(), "rsqrt": lambda l, z, w: z.rsqrt(),
    "square": lambda l, z, w: z.square(), "abs": lambda l, z, w: z.abs(),
    "angle": lambda l, z, w: z.angle(), "angle_real": lambda l, z, w: l.tensor([-1.0, 2.0]).angle(),
    "sgn": lambda l, z, w: z.sgn(), "conj": lambda l, z, w: z.conj(),
    "is_conj": lambda l, z, w: [z.is_conj(), z.conj().is_conj(),
                                z.conj().resolve_conj().is_conj()],
    "conj_physical": lambda l, z, w: z.conj_physical(), "real": lambda l, z, w: z.real,
    "imag": lambda l, z, w: z.imag, "torch_real": lambda l, z, w: l.real(z),
    "real_of_real": lambda l, z, w: l.ones(2).real, "imag_of_real": lambda l, z, w:
    l.ones(2).imag, "view_as_real": lambda l, z, w: l.view_as_real(z),
    "view_as_complex": lambda l, z, w: l.view_as_complex(l.arange(6.0).reshape(3, 2)),
    "complex": lambda l, z, w: l.complex(l.ones(2), l.arange(2.0)),
    "polar": lambda l, z, w: l.polar(l.ones(2) * 2, l.tensor([0.0, 1.0])),
    "sum": lambda l, z, w: z.sum(), "mean": lambda l, z, w: z.mean(),
    "prod": lambda l, z, w: z.prod(), "sum_dim": lambda l, z, w: z.reshape(1, 3).sum(1),
    "cumsum": lambda l, z, w: z.cumsum(0), "matmul": lambda l, z, w: z @ w,
    "mm": lambda l, z, w: z.reshape(3, 1) @ w.reshape(1, 3),
    "bmm": lambda l, z, w: l.bmm(z.reshape(1, 3, 1), w.reshape(1, 1, 3)),
    "einsum": lambda l, z, w: l.einsum("i,j->ij", z, w), "eq": lambda l, z, w: z == w,
    "ne": lambda l, z, w: z != z, "is_complex": lambda l, z, w: [z.is_complex(),
                                                              z.is_floating_point()],
    "to_float": lambda l, z, w: z.real.to(l.float64), "cat": lambda l, z, w: l.cat([z, w]),
    "stack": lambda l, z, w: l.stack([z, w]), "index": lambda l, z, w: z[[0, 2]],
    "where": lambda l, z, w: l.where(l.tensor([True, False, True]), z, w),
    "item": lambda l, z, w: z[0].item(), "tolist": lambda l, z, w: z.tolist(),
    "lt": lambda l, z, w: z < w, "gt_scalar": lambda l, z, w: z > 1,
    "max": lambda l, z, w: z.max(), "min_dim": lambda l, z, w: z.min(0),
    "amax": lambda l, z, w: z.amax(), "maximum": lambda l, z, w: l.maximum(z, w),
    "clamp": lambda l, z, w: z.clamp(0, 1), "relu": lambda l, z, w: z.relu(),
    "F_relu": lambda l, z, w: l.nn.functional.relu(z), "sort": lambda l, z, w: z.sort(),
    "argmax": lambda l, z, w: z.argmax(), "topk": lambda l, z, w: z.topk(1),
    "floor": lambda l, z, w: z.floor(), "sign": lambda l, z, w: z.sign(),
    "remainder": lambda l, z, w: z % 2, "floordiv": lambda l, z, w: z // 2,
    "erf": lambda l, z, w: z.erf(), "gelu": lambda l, z, w: l.nn.functional.gelu(z),
    "var": lambda l, z, w: z.var(), "std": lambda l, z, w: z.std(),
    "arange_complex": lambda l, z, w: l.arange(3, dtype=l.complex64),
    "zeros": lambda l, z, w: l.zeros(2, dtype=l.cfloat), "full": lambda l, z, w:
    l.full((2,), 1 + 1j), "full_like": lambda l, z, w: l.full_like(z, 2j),
    "ones_like": lambda l, z, w: l.ones_like(z), "clone": lambda l, z, w: z.clone(),
    "to_c128": lambda l, z, w: z.to(l.complex128), "cdouble": lambda l, z, w: z.cdouble(),
    "cfloat": lambda l, z, w: l.ones(2).cfloat(), "mul_inplace": lambda l, z, w: z.clone().mul_(w),
    "add_real_inplace": lambda l, z, w: z.clone().add_(l.ones(3)),
    "real_plus_complex_inplace": lambda l, z, w: l.ones(3).add_(z),
    "isnan": lambda l, z, w: z.isnan(), "isfinite": lambda l, z, w: z.isfinite(),
    "allclose": lambda l, z, w: l.allclose(z, z), "dot": lambda l, z, w: l.dot(z, w),
    "vdot": lambda l, z, w: l.vdot(z, w), "linalg_norm": lambda l, z, w: l.linalg.norm(z),
    "norm": lambda l, z, w: z.norm(), "flip": lambda l, z, w: z.flip(0),
    "roll": lambda l, z, w: z.roll(1), "masked_fill": lambda l, z, w: z.masked_fill(z == z, 1j),
}


@pytest.mark.parametrize("dt", ["complex64", "complex128"])
@pytest.mark.parametrize("op", sorted(OPS))
def test_op_matches_torch(torch, op, dt):
    same(torch, lambda lib: OPS[op](lib, *_z(lib, dt)))
