"""vmap against torch.func.vmap: values, in/out dims, nesting, chunks, errors, composition."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from hookgrad._ops.registry import PRIMITIVES

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3, 5)).astype(np.float32)
W = RNG.standard_normal((5, 2)).astype(np.float32)
V = RNG.standard_normal(5).astype(np.float32)


def _np(t):
    if isinstance(t, (tuple, list)):
        return [_np(e) for e in t]
    if isinstance(t, dict):
        return {k: _np(v) for k, v in t.items()}
    return np.asarray(t.detach().numpy())


def _close(a, b, tol=1e-5):
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, tol)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _close(a[k], b[k], tol)
    else:
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


CASES = {
    "matmul_relu_sum": (lambda lib, x: (x @ lib.tensor(W)).relu().sum(-1), 0, 0),
    "in_dim_1": (lambda lib, x: x.exp().mean(0), 1, 0),
    "in_dim_neg": (lambda lib, x: x.softmax(-1), -1, 0),
    "out_dim_1": (lambda lib, x: x.t() * lib.tensor(V)[:3], 0, 1),
    "views": (lambda lib, x: x.reshape(15).view(5, 3).permute(1, 0).unsqueeze(0).squeeze(0)
              .flip(0)[1:].transpose(0, 1), 0, 0),
    "reductions": (lambda lib, x: lib.stack([x.sum(), x.amax(), x.var(1).sum(),
                                             x.logsumexp(0).sum(), x.norm()]), 0, 0),
    "cat_stack": (lambda lib, x: lib.cat([x, lib.tensor(X[0])], 0).sum(0)
                  + lib.stack([x[0], x[1]]).mean(0), 0, 0),
    "where_clamp": (lambda lib, x: lib.where(x > 0, x, -x).clamp(0.1, 1.0), 0, 0),
    "gather_index": (lambda lib, x: x.gather(1, lib.tensor([[0, 1], [2, 3], [4, 0]]))
                     + x[:, lib.tensor([1, 2])], 0, 0),
    "mv_dot": (lambda lib, x: lib.mv(x, lib.tensor(V)) + lib.dot(x[0], x[1]), 0, 0),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_matches_torch(torch, name):
    fn, ind, outd = CASES[name]
    x = X if ind in (0, -1) else np.ascontiguousarray(X.transpose(1, 0, 2))
    res = [_np(lib.func.vmap(lambda t: fn(lib, t), in_dims=ind, out_dims=outd)(lib.tensor(x)))
           for lib in (hookgrad, torch)]
    _close(*res)


@pytest.mark.oracle
def test_pytree_in_dims_kwargs_nested_and_chunks(torch):
    def run(lib):
        f = lambda d, s, scale=1.0: {"a": d["x"] * s + d["y"], "b": (d["x"].sum(),)}  # noqa
        d = {"x": lib.tensor(X[:, 0]), "y": lib.tensor(V)}
        r1 = lib.func.vmap(f, in_dims=({"x": 0, "y": None}, None))(d, 2.0, scale=3.0)
        nested = lib.func.vmap(lib.func.vmap(lambda a, b: a * b, in_dims=(0, None)),
                               in_dims=(None, 0))(lib.tensor(X[0]), lib.tensor(X[1]))
        chunked = lib.func.vmap(lambda a: a.sin(), chunk_size=3)(lib.tensor(X))
        legacy = lib.vmap(lambda a: a.cos())(lib.tensor(X))
        return [_np(r1), _np(nested), _np(chunked), _np(legacy)]

    _close(run(hookgrad), run(torch))


def _err(lib, fn):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001
        return type(e)
    return None


ERRORS = {
    "item": lambda lib: lib.func.vmap(lambda t: t.sum().item())(lib.tensor(X)),
    "control": lambda lib: lib.func.vmap(lambda t: 1 if t.sum() > 0 else 0)(lib.tensor(X)),
    "in_dims_structure": lambda lib: lib.func.vmap(lambda a: a, in_dims=(0, 0))(lib.tensor(X)),
    "in_dim_range": lambda lib: lib.func.vmap(lambda a: a, in_dims=3)(lib.tensor(X)),
    "sizes": lambda lib: lib.func.vmap(lambda a, b: a + b)(lib.tensor(X), lib.tensor(X[:2])),
    "non_tensor_out": lambda lib: lib.func.vmap(lambda a: 3)(lib.tensor(X)),
    "non_tensor_in": lambda lib: lib.func.vmap(lambda a: a)(3.0),
    "none_in_dims": lambda lib: lib.func.vmap(lambda a: a, in_dims=None)(lib.tensor(X)),
    "randomness_flag": lambda lib: lib.func.vmap(lambda a: a, randomness="x")(lib.tensor(X)),
    "inplace_unbatched": lambda lib: lib.func.vmap(lambda a, b: a.add_(b), in_dims=(None, 0))(
        lib.tensor(V), lib.tensor(X[:, 0])),
    "no_inputs": lambda lib: lib.func.vmap(lambda: 1)(),
    "random_error": lambda lib: lib.func.vmap(lambda t: t + lib.rand(5))(lib.tensor(X)),
    "dropout_error": lambda lib: lib.func.vmap(lambda t: lib.nn.functional.dropout(t))(
        lib.tensor(X)),
    "chunk_size": lambda lib: lib.func.vmap(lambda t: t, chunk_size=0)(lib.tensor(X)),
}


@pytest.mark.oracle
def test_randomness_same_shares_one_draw(torch):
    def run(lib):
        lib.manual_seed(0)
        out = lib.func.vmap(lambda t: t * 0 + lib.rand(5), randomness="same")(lib.tensor(X))
        return _np(out)

    a, b = run(hookgrad), run(torch)
    assert a.shape == b.shape
    assert np.all(a == a[:1]) and np.all(b == b[:1])


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(ERRORS))
def test_vmap_errors_match_torch(torch, name):
    got, want = _err(hookgrad, ERRORS[name]), _err(torch, ERRORS[name])
    assert want is not None and got is want


@pytest.mark.oracle
def test_inplace_on_batched_allowed(torch):
    def run(lib):
        def f(a, b):
            c = a.clone()
            c.mul_(b)
            return c
        out = _np(lib.func.vmap(f, in_dims=(0, None))(lib.tensor(X), lib.tensor(V)))
        x, y = lib.ones(2, 3), lib.ones(3, 2)
        lib.func.vmap(lambda a: a.mul_(2))(x)  # writes through to the mapped input
        lib.func.vmap(lambda a, b: a.add_(b), in_dims=(1, None))(y, lib.tensor([1.0, 2.0, 3.0]))
        return [out, _np(x), _np(y), [x._version, y._version]]

    a, b = run(hookgrad), run(torch)
    assert a[3] == b[3]
    _close(a[:3], b[:3])


def test_fallback_warns_and_is_correct():
    x = hookgrad.tensor(X)
    prim = PRIMITIVES["linalg_matrix_exp"]
    rule = prim.batch
    object.__setattr__(prim, "batch", None)  # as a primitive without a rule
    try:
        with pytest.warns(UserWarning, match="performance drop"):
            out = hookgrad.func.vmap(lambda t: hookgrad.linalg.matrix_exp(t[:, :3]))(x)
    finally:
        object.__setattr__(prim, "batch", rule)
    ref = hookgrad.stack([hookgrad.linalg.matrix_exp(x[i][:, :3]) for i in range(4)])
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)
