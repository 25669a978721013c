"""The transform fuzzer: random compositions of torch.func transforms against torch.func
(``tests/func/_transform_fuzz.py``, docs/func.md "The transform fuzzer"), and one regression
test per class of difference it found.

CI runs the first cases under a time budget; the long mode::

    HOOKGRAD_FUNC_FUZZ_N=3000 python3 -m pytest -q tests/func/test_transform_fuzz.py

(``HOOKGRAD_FUNC_FUZZ_SEED`` moves the first case, ``HOOKGRAD_FUNC_FUZZ_SECONDS`` the budget;
a failure names its case number, which replays it.)
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad
from tests.func._budget import budget_from_env, run_cases
from tests.func._transform_fuzz import check

N, START, BUDGET_S = budget_from_env("HOOKGRAD_FUNC_FUZZ", 120, 25)


@pytest.mark.oracle
def test_transform_compositions_match_torch_func(torch):
    run_cases(check, torch, START, N, BUDGET_S, 10)


X = np.array([0.3, -0.5, 0.9])
XS = np.array([[0.3, 0.5, 0.2], [0.1, 0.6, 0.9]])
Y = np.array([0.4, -0.3, 0.8])


def _both(torch, prog):
    out = []
    for lib in (torch, hookgrad):
        res = prog(lib)
        out.append([np.asarray(r.detach().numpy()) for r in res])
    for a, b in zip(*out):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12)


@pytest.mark.oracle
def test_nested_jvp_levels(torch):
    """jvp of jvp, jacfwd(jacfwd), hessian under jvp (hookgrad refused nesting before)."""
    def prog(lib):
        F = lib.func
        x = lib.tensor(X)
        f = lambda t: t.sin() * t.exp()  # noqa: E731
        inner = lambda t: F.jvp(f, (t,), (lib.ones_like(t),))[1]  # noqa: E731
        return (F.jvp(inner, (x,), (lib.ones_like(x) * 0.5,))[1], F.jacfwd(F.jacfwd(f))(x),
                F.jvp(lambda t: F.hessian(lambda u: f(u).sum())(t), (x,), (x,))[1])
    _both(torch, prog)


@pytest.mark.oracle
def test_grad_of_outputs_outside_the_graph_is_zero(torch):
    """jacrev/grad of a function whose output ignores (detaches) its input: zeros."""
    def prog(lib):
        F = lib.func
        x = lib.tensor(X)
        return (F.jacrev(lambda t: t.detach() * 2.0)(x), F.grad(lambda t: t.detach().sum())(x),
                F.jacrev(F.jacrev(lambda t: (t * 2.0).sum()))(x))
    _both(torch, prog)


@pytest.mark.oracle
def test_grad_over_jvp_over_grad(torch):
    """The outer grad sees the inner grad's leaf (it was detached: zeros)."""
    def prog(lib):
        F = lib.func
        x = lib.tensor(X)
        g = F.grad_and_value(lambda t: (t.sin() * t).sum())
        h = lambda t: F.jvp(g, (t,), (lib.ones_like(t),))[1][0]  # noqa: E731
        return (F.grad(lambda t: h(t).sin().sum())(x),)
    _both(torch, prog)


@pytest.mark.oracle
def test_jvp_primal_under_vmap_stays_on_the_outer_tape(torch):
    """grad(vmap(jvp primal)): the primal's physical value is watched by the outer grad."""
    def prog(lib):
        F = lib.func
        y = lib.tensor(Y)

        def one(a):
            return F.jvp(lambda b: (b * y).sin().sum(), (a,), (lib.ones_like(a),))[0].sin()
        return (F.grad(lambda x: F.vmap(one)(x).sum())(lib.tensor(XS)),)
    _both(torch, prog)


@pytest.mark.oracle
def test_tensor_hook_fires_in_its_own_transform_only(torch):
    """grad(grad(f)) with a tensor hook inside: PyTorch calls it once (its level's pass)."""
    logs = {}
    for lib in (torch, hookgrad):
        log = []

        def f(x, lib=lib, log=log):
            y = x.sin()
            y.register_hook(lambda g: (log.append(tuple(g.shape)), g * 2.0)[1])
            return (y * x).sum()

        F = lib.func
        g = F.grad(lambda t: F.grad(f)(t).sin().sum())(lib.tensor(X))
        logs[lib.__name__] = (log, np.asarray(g.numpy()))
    assert logs["torch"][0] == logs["hookgrad"][0] == [(3,)]
    np.testing.assert_allclose(logs["hookgrad"][1], logs["torch"][1], rtol=1e-9)


@pytest.mark.oracle
def test_tensor_hook_under_forward_mode_raises_as_torch(torch):
    """Innermost transform jacfwd (forward mode): nothing requires grad, register_hook
    raises PyTorch's RuntimeError even with a grad transform outside."""
    for lib in (torch, hookgrad):
        def f(x, lib=lib):
            y = x.sin()
            y.register_hook(lambda g: g)
            return y * x
        with pytest.raises(RuntimeError, match="doesn't require gradient"):
            lib.func.jacrev(lambda t: lib.func.jacfwd(f)(t).sum())(lib.tensor(X))


@pytest.mark.oracle
def test_inplace_write_into_fresh_tensor_under_jacfwd_of_vmap(torch):
    """x.new_zeros + an in-place write of a tangent-carrying value, under jacfwd(vmap)."""
    def prog(lib):
        F = lib.func

        def f(x):
            out = x.new_zeros((3,))
            out[1] = x[0] * x[1]
            return out + x.sum()
        x = lib.tensor(XS)
        return (F.jacfwd(F.vmap(f))(x), F.jacfwd(lambda t: F.hessian(
            lambda u: f(u).sin().sum())(t).sum())(lib.tensor(XS[0])))
    _both(torch, prog)


@pytest.mark.oracle
def test_view_of_a_tangent_with_another_layout(torch):
    """hessian inside vjp inside grad over a module: a tangent laid out unlike its primal
    reaches `view` (PyTorch lays tangents out like primals)."""
    def prog(lib):
        F = lib.func
        w = lib.tensor(np.arange(9.0).reshape(3, 3) / 10)
        x = lib.tensor(X)
        f = lambda w, x: (x @ w.t()).tanh() @ w  # noqa: E731
        h = F.hessian(f, argnums=(1, 0))
        return tuple(F.grad(lambda w, x: F.vjp(h, w, x)[0][0][1].sin().sum(),
                            argnums=(0, 1))(w, x))
    _both(torch, prog)


@pytest.mark.oracle
def test_vmap_of_hessian_through_value_reading_rules(torch):
    """vmap(hessian) / vmap(jacfwd(grad)) of clamp, where and relu: their backward rules read
    values and run per sample; the samples keep their tangents (all zeros before)."""
    def prog(lib):
        F = lib.func
        x = lib.tensor(XS * np.array([1.0, -1.0, 1.0]))
        outs = []
        for f in (lambda t: t.clamp(max=0.4), lambda t: lib.where(t > 0, t, t * t * 0.5),
                  lambda t: lib.nn.functional.relu(t) * t):
            s = lambda t, f=f: f(t).sin().sum()  # noqa: E731
            outs += [F.vmap(F.hessian(s))(x), F.vmap(F.jacfwd(F.grad(s)))(x)]
        return outs
    _both(torch, prog)


@pytest.mark.oracle
def test_inplace_on_a_clone_under_vmap_inside_hessian(torch):
    """An in-place op whose tangent is batched at more levels than the clone's tangent (the
    jacfwd basis inside a vmap): the tangent takes the batch dims, as PyTorch's does."""
    def prog(lib):
        F = lib.func

        def f(x):
            y = x.clone()
            y.mul_(2.0)
            y.add_(x.sin())
            return y
        x = lib.tensor(XS.reshape(2, 3))
        return (F.hessian(lambda t: F.vmap(f, in_dims=1)(t).sin().sum())(x),)
    _both(torch, prog)


@pytest.mark.oracle
def test_linearize_draws_as_torch(torch):
    """linearize computes the output, then runs one jvp (PyTorch's trace), then one per call:
    the same random draws as PyTorch's for the same seed."""
    def prog(lib):
        lib.manual_seed(0)
        x = lib.ones(8, dtype=lib.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's make_fx warns about its trace
            out, jf = lib.func.linearize(lambda t: lib.nn.functional.dropout(t, 0.5, True) * t,
                                         x)
            return out, jf(lib.ones_like(x)), jf(lib.ones_like(x) * 2.0)
    _both(torch, prog)


@pytest.mark.oracle
def test_reverse_over_reverse_through_masks_under_vmap(torch):
    """vmap(jacrev(jacrev)) and a third derivative through clamp/where: the masks their
    backward rules build from values are comparisons of the batched tensors (NOTE [Masks of
    batched values]), so the outer reverse pass sees them (zeros before)."""
    def prog(lib):
        F = lib.func
        x = lib.tensor(XS * np.array([1.0, -1.0, 1.0]))
        outs = []
        for f in (lambda t: t.clamp(max=0.4), lambda t: lib.where(t > 0, t, t * t * 0.5),
                  lambda t: lib.maximum(t, t * 0.3)):
            s = lambda t, f=f: f(t).sin().sum()  # noqa: E731
            g = F.grad(s)
            outs += [F.vmap(F.jacrev(F.jacrev(s)))(x),
                     F.vmap(F.grad(lambda t, g=g: g(t).sin().sum()))(x),
                     F.vmap(F.hessian(lambda t, g=g: g(t).sin().sum()))(x)]
        return outs
    _both(torch, prog)


@pytest.mark.oracle
def test_grad_of_vmap_of_hessian(torch):
    """grad(vmap(hessian(f))): the jacrev inside the jacfwd takes a leaf of the batched input
    that keeps its physical value on the outer grad's tape (it was detached: zeros)."""
    def prog(lib):
        F = lib.func
        g = lambda t: t.sin() * 2.0  # noqa: E731
        x = lib.tensor(XS)
        return (F.grad(lambda t: F.vmap(F.hessian(g))(t).sin().sum())(x),)
    _both(torch, prog)


@pytest.mark.oracle
def test_like_samplers_draw_in_memory_order(torch):
    """``rand_like``/``randn_like``/``randint_like`` are ``empty_like`` + an in-place fill: a
    transposed, channels-last or strided input gets its values in memory order, and under vmap
    the draw is laid like the physical value (case 420: nested vmaps with ``in_dims=1``)."""
    def prog(lib):
        lib.manual_seed(0)
        res = [lib.rand_like(lib.zeros(4, 5).t()), lib.randn_like(lib.zeros(4, 5).t()),
               lib.randn_like(lib.zeros(2, 3, 4, 5), memory_format=lib.channels_last),
               lib.randint_like(lib.zeros(6, 4).t()[:, ::2], 3, 9),
               lib.empty_like(lib.zeros(2, 2, 3, 3).permute(1, 0, 2, 3)[:, :, 0]).fill_(1.0)]
        f = lambda x: x + lib.rand_like(x)  # noqa: E731
        F = lib.func
        g = F.vmap(F.vmap(F.vmap(f, chunk_size=1, randomness="same"), randomness="different"),
                   in_dims=1, out_dims=2, randomness="different")
        res.append(g(lib.zeros(2, 2, 3, 3)))
        res.append(F.vmap(lambda x: lib.randn_like(x), in_dims=1, randomness="different")(
            lib.zeros(3, 4)))
        return res
    out = [prog(lib) for lib in (torch, hookgrad)]
    for a, b in zip(*out):
        assert a.stride() == b.stride()
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6)


@pytest.mark.oracle
def test_jacfwd_of_random_function_with_different_randomness(torch):
    """jacfwd(randomness="different") does not return the (batched) primal output; has_aux
    gives the first row's aux, as PyTorch (hookgrad raised ValueError: case 3141)."""
    def prog(lib):
        F = lib.func
        x = lib.tensor(X)
        lib.manual_seed(0)
        j1 = F.jacfwd(lambda t: (t + lib.rand_like(t)).sum(), randomness="different")(x)
        j2, aux = F.jacfwd(lambda t: (t * 2.0, t.sum()), has_aux=True, randomness="same")(x)
        return j1, j2, aux
    _both(torch, prog)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        hookgrad.func.jacfwd(lambda t: t + hookgrad.rand_like(t))(hookgrad.tensor(X))


@pytest.mark.oracle
def test_fallback_loop_is_differentiable_by_outer_transforms(torch):
    """The per-sample fallback stacks its rows with a stack of that many inputs: the table's
    one-input stack wired an outer grad/jvp to sample 0 only (case 5484: jacfwd over
    vmap(grad(conv1d)) with per-sample weights, whose input-gradient takes the loop)."""
    xs = np.random.default_rng(0).standard_normal((3, 2, 4))
    ws = np.random.default_rng(1).standard_normal((3, 2, 2, 3))

    def prog(lib):
        F = lib.func
        x, w = lib.tensor(xs), lib.tensor(ws)
        f = lambda a, b: lib.nn.functional.conv1d(a.unsqueeze(0), b, padding=1).pow(2).sum()  # noqa: E731
        g = lambda a: F.vmap(F.grad(f))(a, w)  # noqa: E731
        with warnings.catch_warnings():  # hookgrad's fallback warns (PyTorch has a rule)
            warnings.simplefilter("ignore")
            return (F.jvp(g, (x,), (lib.ones_like(x),))[1],
                    F.grad(lambda a: g(a).sin().sum())(x))
    _both(torch, prog)


def test_fallback_loop_rows_all_reach_the_outer_tape():
    from hookgrad._ops._batching import loop
    from hookgrad._ops.registry import PRIMITIVES

    sin = PRIMITIVES["sin"]
    rule = sin.batch
    object.__setattr__(sin, "batch", loop)  # force the fallback for one op
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = hookgrad.tensor(XS)
            g = hookgrad.func.grad(lambda t: hookgrad.func.vmap(lambda r: r.sin())(t).sum())(x)
    finally:
        object.__setattr__(sin, "batch", rule)
    np.testing.assert_allclose(g.numpy(), np.cos(XS), rtol=1e-12)


@pytest.mark.oracle
def test_vmap_grad_of_nll_loss_with_every_target_ignored(torch):
    """A sample whose targets are all ignore_index: PyTorch's loss is nan (0/0) and its
    gradient zero; the decomposition under vmap(grad) gave nan gradients (sweep case 75620)."""
    logits = np.random.default_rng(3).standard_normal((3, 4, 5))
    target = np.array([[1, -100, 2, 0], [-100, -100, -100, -100], [4, 4, -100, 1]])
    weight = np.array([1.0, 2.0, 0.5, 1.5, 1.0])

    def prog(lib):
        F = lib.func
        w = lib.tensor(weight)
        f = lambda x, t: lib.nn.functional.nll_loss(x.log_softmax(-1), t, weight=w)  # noqa: E731
        x, t = lib.tensor(logits), lib.tensor(target)
        return F.vmap(f)(x, t), F.vmap(F.grad(f))(x, t)

    out = [prog(lib) for lib in (torch, hookgrad)]
    for a, b in zip(*out):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-9,
                                   equal_nan=True)
