"""More complex and wide unsigned behaviours against PyTorch: conversions to Python numbers,
casts, in-place math, reductions, linear algebra and the errors PyTorch raises."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests.dtypes._compare import Floats, same


def _cases(lib):  # noqa: C901 - one table
    z = lib.tensor([1 + 2j, 3 - 1j])
    return {
        "complex()": lambda: complex(z[0]),
        "float()": lambda: float(z[0]),
        "int()": lambda: int(z[0]),
        "bool": lambda: bool(z[0]),
        "np.asarray": lambda: np.asarray(z).dtype.name,
        "z.to(float)": lambda: z.to(lib.float32).tolist(),
        "z.long": lambda: z.long().tolist(),
        "z.bool": lambda: z.bool().tolist(),
        "x.to(c)": lambda: lib.ones(2).to(lib.complex64).tolist(),
        "int_to_c": lambda: lib.arange(3).to(lib.complex128).tolist(),
        "z.type": lambda: z.type(),
        "z.element_size": lambda: z.element_size(),
        "uint.element_size": lambda: lib.ones(1, dtype=lib.uint32).element_size(),
        "z.dtype.is_complex":
            lambda: (z.dtype.is_complex, z.dtype.to_real(), lib.float64.to_complex()),
        "z.norm(p=1)": lambda: z.norm(p=1).item(),
        "z.mean(dim)": lambda: z.view(1, 2).mean(1).tolist(),
        "stack_mixed": lambda: lib.stack([z, lib.ones(2)]).dtype,
        "cat_mixed": lambda: lib.cat([z, lib.ones(2, dtype=lib.float64)]).dtype,
        "where_mixed": lambda: lib.where(lib.tensor([True, False]), z, 0.0).tolist(),
        "z.sum(dtype)": lambda: z.sum(dtype=lib.complex128).dtype,
        "z.square": lambda: z.square().tolist(),
        "z.exp_": lambda: z.clone().exp_().tolist(),
        "z.div_int": lambda: (z / 2).tolist(),
        "z.rtruediv": lambda: (1 / z).tolist(),
        "z.pow_neg": lambda: (z ** -1).tolist(),
        "z.allclose": lambda: lib.allclose(z, z + 1e-9),
        "z.isclose": lambda: lib.isclose(z, z).tolist(),
        "z.equal": lambda: lib.equal(z, z.clone()),
        "z.unique": lambda: z.unique().tolist(),
        "z.flip": lambda: z.flip(0).tolist(),
        "z.repeat": lambda: z.repeat(2).tolist(),
        "z.masked_select": lambda: z.masked_select(lib.tensor([True, False])).tolist(),
        "z.index_put": lambda: z.clone().index_put_((lib.tensor([0]),), lib.tensor([5j])).tolist(),
        "z.fill_": lambda: z.clone().fill_(2j).tolist(),
        "z.zero_": lambda: z.clone().zero_().tolist(),
        "z.tanh_": lambda: z.clone().tanh().tolist(),
        "z.log10": lambda: z.log10().tolist(),
        "z.log2": lambda: z.log2().tolist(),
        "z.log1p": lambda: z.log1p().tolist(),
        "z.expm1": lambda: z.expm1().tolist(),
        "z.asin": lambda: z.asin().tolist(),
        "z.atan": lambda: z.atan().tolist(),
        "z.sinh": lambda: z.sinh().tolist(),
        "z.acosh": lambda: z.acosh().tolist(),
        "z.softmax": lambda: z.softmax(0).tolist(),
        "F.linear":
            lambda: lib.nn.functional.linear(z.view(1, 2),
                                             lib.ones(3, 2, dtype=lib.complex64)).tolist(),
        "z.cumprod": lambda: z.cumprod(0).tolist(),
        "z.trace": lambda: z.view(1, 2).repeat(2, 1).trace().tolist(),
        "z.diag": lambda: z.diag().tolist(),
        "z.outer": lambda: lib.outer(z, z).tolist(),
        "z.mv": lambda: lib.mv(z.view(1, 2), z).tolist(),
        "z.dropout": lambda: lib.nn.functional.dropout(z, 0.0).tolist(),
        "z.lerp": lambda: z.lerp(z * 2, 0.5).tolist(),
        "z.addcmul": lambda: z.addcmul(z, z).tolist(),
        "z.nan_to_num": lambda: z.nan_to_num().tolist(),
        "z.isinf": lambda: z.isinf().tolist(),
        "z.sign_bit": lambda: z.signbit().tolist(),
        "z.sgn0": lambda: lib.zeros(1, dtype=lib.complex64).sgn().tolist(),
        "z.logsumexp": lambda: z.logsumexp(0).item(),
        "z.std_dim": lambda: z.view(1, 2).std(1).tolist(),
        "linalg.vector_norm": lambda: lib.linalg.vector_norm(z, 3).item(),
        "z.prod_dim": lambda: z.view(1,2).prod(1).tolist(),
        "z.einsum_trace": lambda: lib.einsum("i,i->", z, z).item(),
        "z.cov": lambda: lib.cov(z.view(1, 2)).item(),
        "u16_sum_dim": lambda: lib.ones(2, 2, dtype=lib.uint16).sum(0).dtype,
        "u64_prod": lambda: lib.ones(2, dtype=lib.uint64).prod().dtype,
        "u16_to_c": lambda: lib.ones(2, dtype=lib.uint16).to(lib.complex64).tolist(),
        "u32_cumsum_dtype": lambda: lib.ones(2, dtype=lib.uint32).cumsum(0).dtype,
        "u16_float_div": lambda: (lib.ones(2, dtype=lib.uint16) / lib.ones(2)).dtype,
        "u16_eq_int64":
            lambda: (lib.ones(2, dtype=lib.uint16) == lib.ones(2, dtype=lib.int64)).tolist(),
        "u16_item": lambda: type(lib.tensor(3, dtype=lib.uint16).item()).__name__,
        "u64_big_item": lambda: lib.tensor(2**63 + 5, dtype=lib.uint64).item(),
        "u16_iinfo": lambda: str(lib.iinfo(lib.uint16)),
    }


def _names():
    import hookgrad

    return sorted(_cases(hookgrad))


@pytest.mark.parametrize("name", _names())
def test_case_matches_torch(torch, name):
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # PyTorch's complex-to-real cast warning
            out = _cases(lib)[name]()
        if isinstance(out, list) and all(isinstance(v, (int, float, complex)) for v in out):
            return Floats(np.asarray(out, dtype=complex))  # (within float32 rounding)
        return out

    same(torch, run)


NN = {
    "mse": lambda F, a, b: F.mse_loss(a, b), "l1": lambda F, a, b: F.l1_loss(a, b),
    "smooth_l1": lambda F, a, b: F.smooth_l1_loss(a, b), "huber": lambda F, a, b:
    F.huber_loss(a, b), "softmax": lambda F, a, b: a.softmax(0), "silu": lambda F, a, b:
    F.silu(a * b), "tanh": lambda F, a, b: F.tanh(a * b), "layer_norm": lambda F, a, b:
    F.layer_norm(a, (2,)), "linear": lambda F, a, b: F.linear(a.view(1, 2), b.view(1, 2)),
}


@pytest.mark.parametrize("name", sorted(NN))
def test_nn_functional_on_complex_matches_torch(torch, name):
    def run(lib):
        a = lib.tensor([1 + 0.5j, -0.25j], requires_grad=True)
        b = lib.tensor([0.5 - 1j, 2 + 0j])
        out = NN[name](lib.nn.functional, a, b)
        (out.abs().sum() if out.is_complex() else out.sum()).backward()
        return out, a.grad

    same(torch, run)


def test_module_to_complex_matches_torch(torch):
    def run(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = lib.nn.Linear(2, 2).to(lib.complex64)
        return [str(p.dtype) for p in m.parameters()], [str(w.message)[:40] for w in caught]

    same(torch, run)
