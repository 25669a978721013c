"""OpSpecs: matrix products (mm ... matmul, einsum) and norms.

``matmul`` samples cover every branch of ATen's ``_matmul_impl`` (dot, mv, vector @ matrix, mm,
folding a batch into one mm/mv with and without the transpose, broadcast bmm, the squeeze of a
size-1 batch), so the grad_fn comparison checks the whole node chain's head for each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad.testing._opspec import Arg, OpSpec, Sample


def _a(*shapes: tuple[int, ...], **kw: Any) -> tuple[Arg, ...]:
    return tuple(Arg(s, **kw) for s in shapes)


def _mixed(shape: tuple[int, ...]) -> Callable[..., np.ndarray]:
    """Distinct magnitudes, random signs, no zeros: no ties for the inf-norm, smooth p-norms."""

    def make(rng: np.random.Generator) -> np.ndarray:
        n = int(np.prod(shape)) if shape else 1
        mags = 0.4 + 0.23 * rng.permutation(n)
        return (rng.choice([-1.0, 1.0], size=n) * mags).reshape(shape)

    return make


def _nx(shape: tuple[int, ...]) -> tuple[Arg, ...]:
    return (Arg(shape, make=_mixed(shape)),)


def _matmul(lib: Any, a: Any, b: Any) -> Any:
    return a @ b


_MATMUL_CASES = [
    ((4,), (4,), "dot"),
    ((3, 4), (4,), "mv"),
    ((4,), (4, 5), "vec_mat"),
    ((3, 4), (4, 5), "mm"),
    ((2, 3, 4), (4, 5), "fold_batch_mat"),
    ((2, 3, 4), (4,), "fold_batch_vec"),
    ((3, 4), (2, 4, 5), "fold_transposed"),
    ((4,), (2, 4, 5), "vec_batch"),
    ((2, 3, 4), (2, 4, 5), "bmm"),
    ((2, 1, 3, 4), (5, 4, 2), "broadcast"),
    ((1, 3, 4), (2, 4, 5), "squeeze_batch"),
]


def _norm(lib: Any, x: Any, **kw: Any) -> Any:
    return x.norm(**kw)


def _vector_norm(lib: Any, x: Any, **kw: Any) -> Any:
    return lib.linalg.vector_norm(x, **kw)


def _matrix_norm(lib: Any, x: Any, **kw: Any) -> Any:
    return lib.linalg.matrix_norm(x, **kw)


SPECS: list[OpSpec] = [
    OpSpec("mm", lambda lib, a, b: a.mm(b), [Sample(_a((3, 4), (4, 5)), {}, "basic"),
                                            Sample(_a((1, 4), (4, 1)), {}, "thin")],
           prims=("mm",)),
    OpSpec("bmm", lambda lib, a, b: lib.bmm(a, b), [Sample(_a((2, 3, 4), (2, 4, 5)), {}, "basic")],
           prims=("bmm",)),
    OpSpec("dot", lambda lib, a, b: lib.dot(a, b), [Sample(_a((5,), (5,)), {}, "basic")],
           prims=("dot",)),
    OpSpec("mv", lambda lib, a, b: a.mv(b), [Sample(_a((3, 4), (4,)), {}, "basic")],
           prims=("mv",)),
    OpSpec("matmul", _matmul, [Sample(_a(s1, s2), {}, name) for s1, s2, name in _MATMUL_CASES]
           + [Sample((Arg((2, 3, 4)), Arg((4, 5), requires_grad=False)), {}, "fold_const_rhs"),
              Sample((Arg((3, 4), requires_grad=False), Arg((2, 4, 5))), {}, "batched_const_lhs")],
           prims=("mm", "mv", "bmm", "dot", "_unsafe_view", "_matmul_squeeze_")),
    OpSpec("outer", lambda lib, a, b: lib.outer(a, b), [Sample(_a((3,), (4,)), {}, "basic")],
           prims=("mul",)),
    # PyTorch's inner goes through tensordot (permute/view nodes around the product).
    OpSpec("inner", lambda lib, a, b: lib.inner(a, b), [
        Sample(_a((4,), (4,)), {}, "vectors"), Sample(_a((2, 3, 4), (5, 4)), {}, "nd")],
        prims=("dot", "mm"), grad_fn=False),
    OpSpec("addmm", lambda lib, c, a, b, **kw: lib.addmm(c, a, b, **kw), [
        Sample(_a((3, 5), (3, 4), (4, 5)), {}, "basic"),
        Sample(_a((5,), (3, 4), (4, 5)), {}, "bias_row"),
        Sample(_a((3, 1), (3, 4), (4, 5)), {"beta": 0.5, "alpha": 2.0}, "scaled"),
        Sample(_a((), (2, 3), (3, 2)), {"beta": 0, "alpha": -1.5}, "beta0"),
    ], prims=("addmm",)),
    OpSpec("einsum", lambda lib, *ts, eq: lib.einsum(eq, *ts), [
        Sample(_a((3, 4), (4, 5)), {"eq": "ij,jk->ik"}, "matmul"),
        Sample(_a((2, 3, 4), (2, 4, 5)), {"eq": "bij,bjk->bik"}, "batched"),
        Sample(_a((3, 4), (3, 4)), {"eq": "ij,ij->"}, "full_contract"),
        Sample(_a((3,), (4,)), {"eq": "i,j->ij"}, "outer"),
        Sample(_a((3, 3)), {"eq": "ii->i"}, "diagonal"),
        Sample(_a((3, 3)), {"eq": "ii"}, "trace"),
        Sample(_a((2, 3, 4)), {"eq": "abc->cb"}, "permute_sum"),
        Sample(_a((2, 3, 4), (4, 5)), {"eq": "...j,jk->...k"}, "ellipsis"),
        Sample(_a((2, 3), (3, 4), (4, 2)), {"eq": "ij,jk,kl->il"}, "chain"),
        Sample(_a((3, 4), (4,)), {"eq": "ij,j"}, "implicit"),
    ], prims=("bmm",), grad_fn=False),
    OpSpec("norm", _norm, [
        Sample(_nx((3, 4)), {}, "fro_default"),
        Sample(_nx(()), {}, "zero_d"),
        Sample(_nx((3, 4)), {"p": 2, "dim": 1}, "p2_dim"),
        Sample(_nx((3, 4)), {"p": 1, "dim": -1, "keepdim": True}, "p1_keepdim"),
        Sample(_nx((3, 4)), {"p": 3}, "p3"),
        Sample(_nx((3, 4)), {"p": 1.5, "dim": 0}, "p1_5"),
        Sample(_nx((3, 4)), {"p": 0.5}, "p0_5"),
        Sample(_nx((3, 4)), {"p": float("inf"), "dim": 1}, "inf"),
        Sample(_nx((3, 4)), {"p": float("-inf")}, "neg_inf"),
        Sample(_nx((2, 3, 4)), {"p": "fro", "dim": (0, 2)}, "fro_dims"),
        Sample(_nx((3, 4)), {"p": -1.0}, "neg_p"),
    ], prims=("linalg_vector_norm",)),
    OpSpec("norm_p0", _norm, [Sample(_nx((3, 4)), {"p": 0, "dim": 1}, "p0")],
           prims=("linalg_vector_norm",), gradcheck=False, gradgradcheck=False),
    OpSpec("vector_norm", _vector_norm, [
        Sample(_nx((3, 4)), {}, "default"),
        Sample(_nx((2, 3, 4)), {"ord": 4, "dim": (-1, 0), "keepdim": True}, "ord4"),
    ], prims=("linalg_vector_norm",)),
    OpSpec("matrix_norm", _matrix_norm, [
        Sample(_nx((3, 4)), {}, "fro"),
        Sample(_nx((2, 3, 4)), {"ord": 1}, "one"),
        Sample(_nx((3, 4)), {"ord": float("inf"), "keepdim": True}, "inf"),
        Sample(_nx((3, 4)), {"ord": -1}, "neg_one"),
    ], prims=("linalg_vector_norm", "amax", "amin")),
]
