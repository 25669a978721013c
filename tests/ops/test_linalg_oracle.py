"""Matrix products and norms against PyTorch: node chains, saved tensors, errors, dtypes."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from hookgrad.testing._opspec.linalg import _MATMUL_CASES

pytestmark = pytest.mark.oracle


def _np(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t, dtype=float)


def _chains(t):
    """Every path of node names from `t.grad_fn` down to the leaves (depth-first, in order)."""
    out = []

    def walk(node, path):
        if node is None:
            out.append(tuple(path))
            return
        name = node.name()
        nxt = [n for n, _ in node.next_functions]
        if not nxt:
            out.append(tuple(path + [name]))
        for n in nxt:
            walk(n, path + [name])

    walk(t.grad_fn, [])
    return out


def _leaves(lib, shapes, grads=None):
    rng = np.random.default_rng(0)
    grads = grads or [True] * len(shapes)
    return [lib.tensor(rng.normal(size=s), requires_grad=g) for s, g in zip(shapes, grads)]


@pytest.mark.parametrize("s1,s2,name", _MATMUL_CASES)
@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)])
def test_matmul_node_chain_and_grads_match_torch(torch, s1, s2, name, grads):
    def run(lib):
        a, b = _leaves(lib, [s1, s2], list(grads))
        out = a @ b
        out.backward(lib.ones_like(out))
        return _chains(out), _np(out), [None if t.grad is None else _np(t.grad) for t in (a, b)]

    (ct, ot, gt), (ch, oh, gh) = run(torch), run(hookgrad)
    assert ch == ct
    np.testing.assert_allclose(oh, ot, rtol=1e-10)
    for x, y in zip(gt, gh):
        assert (x is None) == (y is None)
        if x is not None:
            np.testing.assert_allclose(y, x, rtol=1e-10)


_PACKS = {
    "mm": (lambda lib, a, b: a.mm(b), [(3, 4), (4, 5)]),
    "bmm": (lambda lib, a, b: a.bmm(b), [(2, 3, 4), (2, 4, 5)]),
    "dot": (lambda lib, a, b: a.dot(b), [(4,), (4,)]),
    "mv": (lambda lib, a, b: a.mv(b), [(3, 4), (4,)]),
    "addmm": (lambda lib, c, a, b: lib.addmm(c, a, b, beta=2, alpha=0.5), [(5,), (3, 4), (4, 5)]),
    "outer": (lambda lib, a, b: lib.outer(a, b), [(3,), (4,)]),
    "matmul_fold": (lambda lib, a, b: a @ b, [(2, 3, 4), (4, 5)]),
    "vector_norm": (lambda lib, a: lib.linalg.vector_norm(a, 3, dim=1), [(3, 4)]),
}


_PACK_PARAMS = [(name, first) for name in sorted(_PACKS) for first in (True, False)
                if first or len(_PACKS[name][1]) > 1]


@pytest.mark.parametrize("name,first_grad", _PACK_PARAMS)
def test_saved_tensor_pack_order_matches_torch(torch, name, first_grad):
    fn, shapes = _PACKS[name]

    def run(lib):
        xs = _leaves(lib, shapes, [first_grad] + [True] * (len(shapes) - 1))
        log = []

        def pack(t):
            tag = next((f"in{i}" for i, x in enumerate(xs) if t is x), None)
            log.append(tag or tuple(t.shape))
            return t

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = fn(lib, *xs)
        out.sum().backward()
        return log

    assert run(hookgrad) == run(torch)


def test_addmm_saved_scalars_and_broadcast_bias(torch):
    def run(lib):
        c, a, b = _leaves(lib, [(1, 5), (3, 4), (4, 5)])
        out = lib.addmm(c, a, b, beta=0.5, alpha=-2)
        out.sum().backward()
        fn = out.grad_fn
        return fn.name(), fn._saved_beta, fn._saved_alpha, [_np(t.grad) for t in (c, a, b)]

    (nt, bt, at, gt), (nh, bh, ah, gh) = run(torch), run(hookgrad)
    assert (nt, bt, at) == (nh, bh, ah)
    for x, y in zip(gt, gh):
        np.testing.assert_allclose(y, x, rtol=1e-10)


def test_addmm_beta_zero_ignores_nan_input(torch):
    def run(lib):
        c = lib.full((2, 2), float("nan"), dtype=lib.float64, requires_grad=True)
        a, b = _leaves(lib, [(2, 3), (3, 2)])
        out = lib.addmm(c, a, b, beta=0)
        out.sum().backward()
        return _np(out), _np(c.grad)

    for x, y in zip(run(torch), run(hookgrad)):
        np.testing.assert_allclose(y, x, rtol=1e-10)


def test_linear_shaped_addmm_chain_matches_torch(torch):
    """F.linear with bias on 2-D input is addmm(bias, x, W.t()) in PyTorch."""

    def run(lib):
        x, w, bias = _leaves(lib, [(4, 3), (2, 3), (2,)])
        out = lib.addmm(bias, x, w.t())
        out.sum().backward()
        return _chains(out), [_np(t.grad) for t in (x, w, bias)]

    (ct, gt), (ch, gh) = run(torch), run(hookgrad)
    assert ch == ct
    for a, b in zip(gt, gh):
        np.testing.assert_allclose(b, a, rtol=1e-10)


_ERRORS = {
    "mm_shapes": lambda lib: lib.ones(3, 4).mm(lib.ones(3, 4)),
    "mm_1d": lambda lib: lib.ones(3, 4).mm(lib.ones(4)),
    "mm_dtypes": lambda lib: lib.ones(2, 2).mm(lib.ones(2, 2, dtype=lib.float64)),
    "bmm_2d": lambda lib: lib.ones(2, 2).bmm(lib.ones(2, 2)),
    "bmm_batch": lambda lib: lib.ones(2, 3, 4).bmm(lib.ones(3, 4, 5)),
    "dot_sizes": lambda lib: lib.ones(3).dot(lib.ones(4)),
    "dot_2d": lambda lib: lib.ones(2, 2).dot(lib.ones(2, 2)),
    "dot_dtypes": lambda lib: lib.ones(3).dot(lib.ones(3, dtype=lib.int64)),
    "mv_sizes": lambda lib: lib.ones(3, 4).mv(lib.ones(3)),
    "mv_2d": lambda lib: lib.ones(2, 2).mv(lib.ones(2, 2)),
    "matmul_0d": lambda lib: lib.tensor(1.0) @ lib.ones(2, 2),
    "matmul_inner": lambda lib: lib.ones(3, 4) @ lib.ones(3, 4),
    "matmul_batch": lambda lib: lib.ones(2, 3, 4) @ lib.ones(3, 4, 5),
    "addmm_bias": lambda lib: lib.addmm(lib.ones(2), lib.ones(3, 4), lib.ones(4, 3)),
    "addmm_dtype": lambda lib: lib.addmm(lib.ones(2, 2, dtype=lib.float64), lib.ones(2, 2),
                                         lib.ones(2, 2)),
    "outer_2d": lambda lib: lib.outer(lib.ones(2, 2), lib.ones(2)),
    "einsum_sizes": lambda lib: lib.einsum("ij,jk", lib.ones(2, 3), lib.ones(4, 5)),
    "einsum_operands": lambda lib: lib.einsum("ij,jk->ik", lib.ones(2, 3)),
    "einsum_subscripts": lambda lib: lib.einsum("ijk->i", lib.ones(2, 3)),
    "matrix_norm_1d": lambda lib: lib.linalg.matrix_norm(lib.ones(3)),
    "matrix_norm_ord": lambda lib: lib.linalg.matrix_norm(lib.ones(3, 3), 3),
    "linalg_norm_3d_ord": lambda lib: lib.linalg.norm(lib.ones(2, 3, 4), 1),
}


@pytest.mark.parametrize("name", sorted(_ERRORS))
def test_errors_match_torch(torch, name):
    with pytest.raises(Exception) as et:
        _ERRORS[name](torch)
    with pytest.raises(Exception) as eh:
        _ERRORS[name](hookgrad)
    assert type(eh.value).__name__ == type(et.value).__name__
    assert str(eh.value) == str(et.value).split("\n")[0]


def test_integer_matmul_matches_torch(torch):
    def run(lib):
        a = lib.arange(12).reshape(3, 4)
        b = lib.arange(8).reshape(4, 2)
        return [(r.dtype, r.tolist()) for r in (a @ b, a.mm(b), a[0] @ b, lib.outer(a[0], b[:, 0]))]

    got, want = run(hookgrad), run(torch)
    assert [(str(d).replace("torch.", ""), v) for d, v in got] == [
        (str(d).replace("torch.", ""), v) for d, v in want]


@pytest.mark.parametrize("ord_", ["fro", 1, -1, float("inf"), float("-inf")])
def test_matrix_norm_chain_matches_torch(torch, ord_):
    def run(lib):
        (a,) = _leaves(lib, [(2, 3, 4)])
        out = lib.linalg.matrix_norm(a, ord_, dim=(0, 2))
        out.sum().backward()
        return _chains(out), _np(out), _np(a.grad)

    (ct, ot, gt), (ch, oh, gh) = run(torch), run(hookgrad)
    assert ch == ct
    np.testing.assert_allclose(oh, ot, rtol=1e-10)
    np.testing.assert_allclose(gh, gt, rtol=1e-10)


@pytest.mark.parametrize("kw", [{}, {"ord": 3, "dim": 1}, {"dim": 1}, {"ord": 1, "dim": (0, 1)},
                                {"ord": "fro"}, {"ord": float("inf")}])
def test_linalg_norm_matches_torch(torch, kw):
    def run(lib):
        (a,) = _leaves(lib, [(3, 4)])
        out = lib.linalg.norm(a, **kw)
        out.sum().backward()
        return out.grad_fn.name(), _np(out), _np(a.grad)

    (nt, ot, gt), (nh, oh, gh) = run(torch), run(hookgrad)
    assert nh == nt
    np.testing.assert_allclose(oh, ot, rtol=1e-10)
    np.testing.assert_allclose(gh, gt, rtol=1e-10)


def test_norm_dtype_argument_matches_torch(torch):
    def run(lib):
        a = lib.tensor([[3.0, -4.0], [1.0, 2.0]], requires_grad=True)
        out = a.norm(dtype=lib.float64)
        out.backward()
        return str(out.dtype), _np(out), str(a.grad.dtype), _np(a.grad)

    t, h = run(torch), run(hookgrad)
    assert t[0] == h[0] and t[2] == h[2]
    np.testing.assert_allclose(h[1], t[1])
    np.testing.assert_allclose(h[3], t[3], rtol=1e-6)


def test_matmul_operator_forms(torch):
    def run(lib):
        a, b = _leaves(lib, [(2, 3), (3, 2)])
        return [_np(x) for x in (a.matmul(b), lib.matmul(a, b), b.__rmatmul__(a),
                                 a.T.__matmul__(a) if hasattr(a, "T") else a.t() @ a)]

    for x, y in zip(run(torch), run(hookgrad)):
        np.testing.assert_allclose(y, x, rtol=1e-12)
