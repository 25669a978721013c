"""Batching rules of ``put``, ``index_reduce``, ``nanmedian``, ``_ctc_loss`` (and its backward)
and ``unique_consecutive``, and ``linalg.lu_factor`` under vmap, against torch.func.vmap: values,
gradients (``vmap(grad)``), ``in_dims`` variants, nesting and error types. hookgrad must not
take the per-sample loop for any of them (its performance warning is an error here). Where
PyTorch's vmap refuses only because of an implementation limit (``vmap(grad(ctc_loss))``), the
reference is PyTorch's own per-sample loop."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(23)
X = RNG.standard_normal((3, 4, 5))
SRC = RNG.standard_normal((3, 6))
IDX = np.array([[0, 19, -1, 7, 0, 3], [2, 2, 5, -20, 11, 18], [9, 8, 7, 6, 5, 4]])
IR_SELF = RNG.standard_normal((3, 4, 2))
IR_SRC = RNG.standard_normal((3, 5, 2))
IR_IDX = np.array([[0, 3, 0, 1, 3], [2, 2, 2, 1, 0], [3, 3, 1, 1, 0]])
NAN = np.where(RNG.random((3, 4, 5)) < 0.3, np.nan, X)
NAN[1, 2] = np.nan  # a row of NaNs
LP = np.log(RNG.dirichlet(np.ones(5), (3, 8, 2)))  # (B, T, N, C) log-probabilities
TG = RNG.integers(1, 5, (3, 2, 3))                 # (B, N, S) padded targets
SQ = RNG.standard_normal((3, 2, 4, 4))
SING = SQ.copy()
SING[2, 1, :, 1] = SING[2, 1, :, 0]                # sample 2, matrix 1 is singular


def _programs(lib):
    fn, t, F = lib.func, lib.tensor, lib.nn.functional
    vm = fn.vmap
    idx = t(IDX)
    yield "put", lambda: vm(lambda x, s: x.put(idx[0], s))(t(X), t(SRC))
    yield "put_acc_batched_index", lambda: vm(lambda x, i, s: x.put(i, s, accumulate=True))(
        t(X), idx, t(SRC))
    yield "put_in_dims_1", lambda: vm(lambda x, i: x.put(i, t(SRC[0])), in_dims=(1, 0))(
        t(X), idx)
    yield "put_unbatched_self", lambda: vm(lambda x, i, s: x.put(i, s, True),
                                           in_dims=(None, 0, 0))(t(X[0]), idx, t(SRC))
    yield "put_inplace", lambda: vm(lambda x, i: x.clone().put_(i, t(SRC[1])))(t(X), idx)
    yield "put_out_of_range", lambda: vm(lambda x, i: x.put(i, t(SRC[0])))(
        t(X), t(np.where(IDX == 18, 20, IDX)))
    yield "put_nested", lambda: vm(vm(lambda x, i: x.put(i, t(SRC[0, :2]), True)))(
        t(X), idx.reshape(3, 3, 2))
    yield "grad_put", lambda: vm(fn.grad(lambda x, s: (x.put(idx[1], s) ** 2).sum(),
                                         argnums=(0, 1)))(t(X), t(SRC))
    yield "grad_put_acc", lambda: vm(fn.grad(lambda s, i: (t(X[0]).put(i, s, True) ** 3).sum()))(
        t(SRC), idx)
    for red in ("prod", "mean", "amax", "amin"):
        for inc in (True, False):
            yield f"index_reduce_{red}_{inc}", lambda r=red, inc=inc: vm(
                lambda x, s: x.index_reduce(0, t(IR_IDX[0]), s, r, include_self=inc))(
                t(IR_SELF), t(IR_SRC))
        yield f"index_reduce_{red}_batched_index", lambda r=red: vm(
            lambda x, i, s: x.index_reduce(-2, i, s, r))(t(IR_SELF), t(IR_IDX), t(IR_SRC))
    yield "index_reduce_in_dims", lambda: vm(
        lambda x, s: x.index_reduce(1, t([1, 0]), s, "amax"), in_dims=(2, None))(
        t(IR_SELF), t(IR_SRC[0, :2].T.copy()))
    yield "index_reduce_inplace", lambda: vm(
        lambda x, s: x.clone().index_reduce_(0, t(IR_IDX[2]), s, "mean"))(t(IR_SELF), t(IR_SRC))
    yield "index_reduce_out_of_range", lambda: vm(
        lambda x, i, s: x.index_reduce(0, i, s, "prod"))(
        t(IR_SELF), t(np.where(IR_IDX == 2, 4, IR_IDX)), t(IR_SRC))
    yield "index_reduce_negative", lambda: vm(
        lambda x, i, s: x.index_reduce(0, i, s, "prod"))(
        t(IR_SELF), t(np.where(IR_IDX == 2, -1, IR_IDX)), t(IR_SRC))
    for red in ("mean", "amax"):
        yield f"grad_index_reduce_{red}", lambda r=red: vm(fn.grad(
            lambda x, s: (x.index_reduce(0, t(IR_IDX[1]), s, r) ** 2).sum(), argnums=(0, 1)))(
            t(IR_SELF), t(IR_SRC))
    yield "nanmedian", lambda: vm(lib.nanmedian)(t(NAN))
    yield "nanmedian_in_dims", lambda: vm(lib.nanmedian, in_dims=2)(t(NAN))
    yield "nanmedian_0d", lambda: vm(lib.nanmedian)(t(NAN[:, 0, 0]))
    yield "nanmedian_nested", lambda: vm(vm(lib.nanmedian))(t(NAN))
    yield "nanmedian_empty", lambda: vm(lib.nanmedian)(t(np.zeros((3, 0))))
    yield "grad_nanmedian", lambda: vm(fn.grad(lambda x: lib.nanmedian(x) * 2))(t(X))
    yield "unique_consecutive", lambda: vm(lib.unique_consecutive)(t(X))
    yield "unique_consecutive_dim", lambda: vm(
        lambda x: lib.unique_consecutive(x, return_counts=True, dim=0))(t(X))
    lens, tlens = [8, 6], [3, 2]
    for red in ("none", "mean", "sum"):
        yield f"ctc_{red}", lambda r=red: vm(lambda lp, tg: F.ctc_loss(lp, tg, lens, tlens,
                                                                     reduction=r))(t(LP), t(TG))
    yield "ctc_concatenated", lambda: vm(lambda lp, tg: F.ctc_loss(lp, tg, lens, tlens))(
        t(LP), t(TG).reshape(3, 6)[:, :5])
    yield "ctc_unbatched_input", lambda: vm(lambda lp, tg: F.ctc_loss(lp, tg, [8], [3]))(
        t(LP[:, :, 0]), t(TG[:, 0]))
    yield "ctc_shared_log_probs", lambda: vm(lambda lp, tg: F.ctc_loss(
        lp, tg, lens, tlens, reduction="none"), in_dims=(None, 0))(t(LP[0]), t(TG))
    yield "ctc_shared_targets", lambda: vm(lambda lp, tg: F.ctc_loss(
        lp, tg, lens, tlens, reduction="sum"), in_dims=(1, None))(t(LP.swapaxes(0, 1).copy()),
                                                                  t(TG[0]))
    yield "ctc_zero_infinity", lambda: vm(lambda lp, tg: F.ctc_loss(
        lp, tg, [2, 6], [3, 2], reduction="none", zero_infinity=True))(t(LP), t(TG))
    # outer products (k = 1) of batched mm run as one bmm, whose kernel is an einsum there
    yield "outer_products", lambda: vm(lambda u, v: u.unsqueeze(1).mm(v.unsqueeze(0)))(
        t(SRC), t(X[:, 0]))
    yield "outer_products_f32", lambda: vm(lambda u, v: u.unsqueeze(1).mm(v.unsqueeze(0)))(
        t(SRC).float(), t(X[:, 0]).float())
    yield "bmm_k1_eager", lambda: lib.bmm(t(SRC).unsqueeze(2), t(X[:, 0]).unsqueeze(1))
    yield "grad_linear_weight", lambda: vm(fn.grad(lambda w, x: (F.linear(x, w).tanh()).sum()),
                                           in_dims=(None, 0))(t(X[0]), t(X[:, 1]))
    yield "lu_factor", lambda: vm(lib.linalg.lu_factor)(t(SQ))
    yield "lu_factor_nested", lambda: vm(vm(lib.linalg.lu_factor))(t(SQ))
    yield "lu_factor_singular", lambda: vm(lib.linalg.lu_factor)(t(SING))
    yield "lu_factor_singular_matrix", lambda: vm(vm(lib.linalg.lu_factor), in_dims=1)(t(SING))
    yield "lu_factor_ex_singular", lambda: vm(lib.linalg.lu_factor_ex)(t(SING))
    yield "grad_lu_factor", lambda: vm(fn.grad(lambda a: lib.linalg.lu_factor(a)[0].sum()))(
        t(SQ[:, 0]))


def _ctc_grad(lib, per_sample):
    """``vmap(grad(ctc_loss))``; PyTorch's functorch cannot run it ("Cannot access data pointer
    of Tensor that doesn't have storage", also for a plain ``grad``), so its reference is a
    loop of ``autograd.grad``."""
    F, t = lib.nn.functional, lib.tensor

    def loss(lp, tg):
        return F.ctc_loss(lp.log_softmax(-1), tg, [8, 6], [3, 2])

    if per_sample:
        rows = []
        for i in range(3):
            lp = t(LP[i]).requires_grad_()
            rows.append(lib.autograd.grad(loss(lp, t(TG[i])), lp)[0])
        return lib.stack(rows)
    return lib.func.vmap(lib.func.grad(loss))(t(LP), t(TG))


def _index_reduce_prod_grad(lib, per_sample):
    """``vmap(grad)`` of index_reduce("prod"): PyTorch's backward reads values (its vmap raises
    the data-dependent error), so the reference is PyTorch's loop of ``grad``."""
    t = lib.tensor
    g = lib.func.grad(lambda x, s: (x.index_reduce(0, t(IR_IDX[1]), s, "prod") ** 2).sum(),
                      argnums=(0, 1))
    x, s = t(IR_SELF), t(IR_SRC)
    if per_sample:
        rows = [g(x[i], s[i]) for i in range(3)]
        return tuple(lib.stack([r[k] for r in rows]) for k in range(2))
    return lib.func.vmap(g)(x, s)


def _outcome(run):
    try:
        out = run()
    except Exception as exc:  # noqa: BLE001 - the type is the outcome
        return type(exc), str(exc)
    return [np.asarray(o.detach().numpy()) for o in (out if isinstance(out, tuple) else (out,))]


def _compare(name, mine, theirs):
    if isinstance(theirs, tuple):
        assert isinstance(mine, tuple), f"{name}: PyTorch raises {theirs}, hookgrad returned"
        assert mine[0].__name__ == theirs[0].__name__, f"{name}: {mine} vs {theirs}"
        return
    assert not isinstance(mine, tuple), f"{name}: hookgrad raises {mine}"
    assert len(mine) == len(theirs), name
    for a, b in zip(mine, theirs):
        assert a.shape == b.shape and a.dtype == b.dtype, (name, a.shape, b.shape, a.dtype,
                                                           b.dtype)
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, equal_nan=True, err_msg=name)


CASES = [name for name, _ in _programs(hookgrad)]


@pytest.mark.filterwarnings("ignore:There is a performance drop")  # torch.func's own loop
@pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")
@pytest.mark.parametrize("name", CASES)
def test_rule_matches_torch_func(torch, name):
    theirs = _outcome(dict(_programs(torch))[name])
    with warnings.catch_warnings():
        warnings.filterwarnings("error", "There is a performance drop")  # no per-sample loop
        mine = _outcome(dict(_programs(hookgrad))[name])
    _compare(name, mine, theirs)


def test_errors_are_pytorch_messages(torch):
    msgs = {}
    for lib in (torch, hookgrad):
        progs = dict(_programs(lib))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            msgs[lib] = [_outcome(progs[k]) for k in ("unique_consecutive",
                                                      "lu_factor_singular",
                                                      "lu_factor_singular_matrix")]
    assert msgs[hookgrad] == msgs[torch]


def test_vmap_grad_ctc_matches_the_per_sample_loop(torch):
    with warnings.catch_warnings():
        warnings.filterwarnings("error", "There is a performance drop")
        mine = _ctc_grad(hookgrad, per_sample=False).numpy()
    np.testing.assert_allclose(mine, _ctc_grad(torch, per_sample=True).numpy(), rtol=1e-10,
                               atol=1e-12)
    # and hookgrad's own loop agrees (the folded backward is the per-sample one)
    np.testing.assert_allclose(mine, _ctc_grad(hookgrad, per_sample=True).numpy(), rtol=1e-12,
                               atol=1e-14)


def test_vmap_grad_index_reduce_prod_matches_the_per_sample_loop(torch):
    with warnings.catch_warnings():
        warnings.filterwarnings("error", "There is a performance drop")
        warnings.filterwarnings("ignore", "index_reduce")
        mine = _index_reduce_prod_grad(hookgrad, per_sample=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = _index_reduce_prod_grad(torch, per_sample=True)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)


def _bad_index_programs(lib, v):
    """Per-sample indices where only sample 1's index is bad (`v`): the surface reads sample
    0's values only, the rules must still refuse sample 1's."""
    t, vm = lib.tensor, lib.func.vmap
    x, i = t(X[:, :3, 0].copy()), t([[0], [v], [0]])
    yield "gather", lambda: vm(lambda a, j: a.gather(0, j))(x, i)
    yield "scatter", lambda: vm(lambda a, j: a.scatter(0, j, t([1.0])))(x, i)
    yield "scatter_add", lambda: vm(lambda a, j: a.scatter_add(0, j, t([1.0])))(x, i)
    yield "scatter_reduce", lambda: vm(lambda a, j: a.scatter_reduce(0, j, t([1.0]), "amax"))(
        x, i)
    yield "index_select", lambda: vm(lambda a, j: a.index_select(0, j))(x, i)
    yield "index_add", lambda: vm(lambda a, j: a.index_add(0, j, t([1.0])))(x, i)
    yield "index_reduce", lambda: vm(lambda a, j: a.index_reduce(0, j, t([1.0]), "amax"))(x, i)
    yield "take", lambda: vm(lambda a, j: a.take(j))(x, i)
    yield "put", lambda: vm(lambda a, j: a.put(j, t([1.0])))(x, i)


@pytest.mark.parametrize("v", [3, -1, -4])
def test_a_bad_index_of_another_sample_raises_as_pytorch(torch, v):
    """PyTorch raises for each (negative indices are valid only for take and put); hookgrad
    raises too, never a value read from a wrapped index or a neighbouring sample. The type:
    IndexError where PyTorch's take/put/index ops say IndexError; for gather, scatter and
    index_select PyTorch's vmap says RuntimeError and hookgrad's kernel IndexError."""
    for (name, theirs), (_, mine) in zip(_bad_index_programs(torch, v),
                                         _bad_index_programs(hookgrad, v)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = _outcome(theirs)
            got = _outcome(mine)
        if not isinstance(want, tuple):  # a valid negative index (take, put with -1)
            _compare(name, got, want)
            continue
        assert isinstance(got, tuple), f"{name}[{v}]: PyTorch raises {want}, hookgrad returned"
        assert got[0] in (IndexError, RuntimeError), (name, v, got)
        if want[0] is IndexError:
            assert got[0] is IndexError, (name, v, got, want)
