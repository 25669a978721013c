"""A battery of vmap / transform programs over many ops, each against torch.func."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad

rng = np.random.default_rng(0)
A = rng.standard_normal((4, 3, 5)).astype(np.float32)
B = rng.standard_normal((4, 5)).astype(np.float32)


def cases(lib):
    rng = np.random.default_rng(3)
    F, fn = lib.nn.functional, lib.func
    x, v = lib.tensor(A), lib.tensor(B)
    yield "outer", lambda: fn.vmap(lib.outer)(v, v)
    yield "trace", lambda: fn.vmap(lib.trace)(x[:, :3, :3])
    yield "einsum", lambda: fn.vmap(lambda a, b: lib.einsum("ij,j->i", a, b))(x, v)
    yield "matmul", lambda: fn.vmap(lib.matmul)(x, v)
    yield "tuple_out", lambda: fn.vmap(lambda a: (a.sum(0), a.max()), out_dims=(1, 0))(x)
    yield "layer_norm", lambda: fn.vmap(lambda a: F.layer_norm(a, (5,)))(x)
    yield "softmax_ln", lambda: fn.vmap(lambda a: F.log_softmax(a, -1).exp())(x)
    yield "norm_dim", lambda: fn.vmap(lambda a: a.norm(dim=1))(x)
    yield "argmax", lambda: fn.vmap(lambda a: a.argmax())(x)
    yield "topk", lambda: fn.vmap(lambda a: a.topk(2, dim=-1).values)(x)
    yield "sort", lambda: fn.vmap(lambda a: a.sort(dim=-1).values)(x)
    yield "max_dim", lambda: fn.vmap(lambda a: a.max(dim=0).values)(x)
    yield "cumsum", lambda: fn.vmap(lambda a: a.cumsum(0))(x)
    yield "masked_fill", lambda: fn.vmap(lambda a: a.masked_fill(a > 0, 0.0))(x)
    yield "index_bool", lambda: fn.vmap(lambda a: a[0] * 2)(x)
    yield "chunk", lambda: fn.vmap(lambda a: a.chunk(3, dim=1)[1])(x)
    yield "mse", lambda: fn.vmap(lambda a, b: F.mse_loss(a[0], b))(x, v)
    yield "bce", lambda: fn.vmap(lambda a: F.binary_cross_entropy_with_logits(a, a.sigmoid()))(x)
    def rnd(*shape):
        return lib.tensor(rng.standard_normal(shape).astype(np.float32))

    yield "conv_unbatched_input", lambda: fn.vmap(
        lambda w: F.conv2d(lib.ones(1, 1, 5, 5), w))(rnd(3, 2, 1, 3, 3))
    yield "conv_both", lambda: fn.vmap(lambda xx, w: F.conv2d(xx, w))(
        rnd(3, 2, 1, 5, 5), rnd(3, 2, 1, 3, 3))
    yield "avgpool", lambda: fn.vmap(lambda a: F.avg_pool2d(a, 2))(rnd(3, 2, 1, 4, 4))
    yield "hess_mlp", lambda: fn.hessian(lambda a: (a @ lib.tensor(B.T)).tanh().sum())(v[0])
    yield "jacrev_dict", lambda: fn.jacrev(lambda d: d["a"] * d["b"].sum())(
        {"a": v[0], "b": v[1]})
    yield "vmap_jacfwd", lambda: fn.vmap(fn.jacfwd(lambda a: a.sin() * a))(v)
    yield "jvp_of_grad", lambda: fn.jvp(fn.grad(lambda a: a.sin().sum()), (v[0],), (v[1],))
    yield "vjp_vmap", lambda: fn.vjp(fn.vmap(lambda a: a.exp()), v)[1](v)
    yield "grad_argnums", lambda: fn.grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(
        v[0], v[1])
    yield "expand_as", lambda: fn.vmap(lambda a, b: b.expand_as(a) + a)(x, v)
    yield "new_zeros", lambda: fn.vmap(lambda a: a.new_zeros(3) + a[0, :3])(x)
    yield "zeros_like_inplace", lambda: fn.vmap(lambda a: lib.zeros_like(a) + a)(x)
    yield "clone_inplace", lambda: fn.vmap(lambda a: a.clone().add_(1).relu_())(x)
    yield "unbind", lambda: fn.vmap(lambda a: lib.stack(a.unbind(1), 0))(x)
    yield "diag", lambda: fn.vmap(lib.diag)(v)
    yield "bmm", lambda: fn.vmap(lib.bmm)(x.unsqueeze(1), x.transpose(1, 2).unsqueeze(1))
    yield "embedding", lambda: fn.vmap(lambda i: F.embedding(i, v))(
        lib.tensor([[0, 1], [2, 3], [1, 1]]))
    t3 = lib.tensor([0, 1, 2])
    yield "cross_entropy_2d", lambda: fn.vmap(lambda a: F.cross_entropy(a, t3))(x)
    yield "grad_ce_2d", lambda: fn.vmap(fn.grad(lambda a: F.cross_entropy(a, t3)))(x)
    yield "where_scalar", lambda: fn.vmap(lambda a: lib.where(a > 0, a, 0.0))(x)
    xg = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    yg = xg.sin() * xg
    yield "vmap_autograd_grad", lambda: fn.vmap(
        lambda g: lib.autograd.grad(yg, xg, g, retain_graph=True))(lib.eye(3))
    yield "is_grads_batched", lambda: lib.autograd.grad(yg, xg, lib.eye(3), retain_graph=True,
                                                        is_grads_batched=True)
    bn = lib.nn.BatchNorm2d(2)
    bn.eval()
    bn_train = lib.nn.BatchNorm2d(2, track_running_stats=False)
    img = rnd(3, 4, 2, 3, 3)
    yield "batch_norm_eval", lambda: fn.vmap(bn)(img)
    yield "batch_norm_train_no_stats", lambda: fn.vmap(bn_train)(img)
    yield "grad_batch_norm_eval", lambda: fn.vmap(fn.grad(lambda a: bn(a).pow(2).sum()))(img)
    table = rnd(6, 3)
    yield "per_sample_embedding_grad", lambda: fn.vmap(fn.grad(
        lambda t, i: F.embedding(i, t).pow(2).sum()), in_dims=(None, 0))(
        table, lib.tensor([[0, 1], [2, 2], [5, 0]]))
    yield "upsample_grad", lambda: fn.vmap(fn.grad(lambda a: F.interpolate(
        a, scale_factor=2, mode="bilinear").pow(2).sum()))(img)
    yield "inplace_elu", lambda: fn.vmap(lambda a: F.elu(a.clone(), inplace=True))(x)
    yield "pow", lambda: fn.vmap(lambda a: a.abs() ** 1.5 + 2 ** a)(x)

NAMES = [k for k, _ in cases(hookgrad)]


def _arr(o):
    if isinstance(o, (tuple, list)):
        return [_arr(e) for e in o]
    if isinstance(o, dict):
        return [_arr(o[k]) for k in sorted(o)]
    return np.asarray(o.detach().numpy())


def _cmp(a, b):
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _cmp(x, y)
        return
    assert a.shape == b.shape
    np.testing.assert_allclose(a, b, atol=1e-4, rtol=1e-4)


@pytest.mark.oracle
@pytest.mark.parametrize("name", NAMES)
def test_program_matches_torch(torch, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's own deprecation warnings (jit, make_fx)
        want = _arr(dict(cases(torch))[name]())
    got = _arr(dict(cases(hookgrad))[name]())  # a fallback warning here fails the test
    _cmp(got, want)
