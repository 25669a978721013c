"""vmap's randomness modes against torch.func.vmap (NOTE [vmap randomness]).

The bit streams differ (PCG64 against Mersenne Twister), so what is compared is: the outcome
(a result of the same shape, or the same exception type and message start), whether the samples
of a batch share one draw, the mode's exact relation to plain draws ("same" draws exactly what
one call outside vmap draws; "different" draws exactly what one call with the batch size
prepended draws), and the statistics of the per-sample draws.
"""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad

X = np.random.default_rng(1).random((4, 5)).astype(np.float32)

# name -> per-sample function of (lib, t) with t a batched (5,) tensor
SCENARIOS = {
    "rand": lambda lib, t: t * 0 + lib.rand(5),
    "randn_size_tuple": lambda lib, t: lib.randn((2, 5)),
    "rand_size_kwarg": lambda lib, t: lib.rand(size=(5,)),
    "randint": lambda lib, t: lib.randint(0, 10, (5,)),
    "randint_high": lambda lib, t: lib.randint(10, size=(5,)),
    "randperm": lambda lib, t: lib.randperm(5),
    "rand_like": lambda lib, t: lib.rand_like(t),
    "randn_like": lambda lib, t: lib.randn_like(t),
    "randint_like": lambda lib, t: lib.randint_like(t, 10),
    "normal_floats": lambda lib, t: lib.normal(0.0, 1.0, size=(5,)),
    "normal_batched_mean": lambda lib, t: lib.normal(t, 1.0),
    "normal_batched_std": lambda lib, t: lib.normal(0.0, t.abs()),
    "normal_broadcast": lambda lib, t: lib.normal(lib.zeros(2, 1, 5), t.abs()),
    "normal_unbatched": lambda lib, t: t * lib.normal(lib.zeros(5), 1.0),
    "bernoulli_batched": lambda lib, t: lib.bernoulli(t),
    "bernoulli_p": lambda lib, t: lib.bernoulli(t, 0.5),
    "bernoulli_unbatched": lambda lib, t: t * lib.bernoulli(lib.full((5,), 0.5)),
    "multinomial_batched": lambda lib, t: lib.multinomial(t + 0.1, 3),
    "multinomial_unbatched": lambda lib, t: t * lib.multinomial(lib.ones(5), 5).float(),
    "multinomial_2d": lambda lib, t: lib.multinomial(lib.ones(3, 5), 2),
    "dropout": lambda lib, t: lib.nn.functional.dropout(t * 0 + 1, 0.5),
    "dropout_inplace": lambda lib, t: lib.nn.functional.dropout(t * 0 + 1, 0.5, inplace=True),
    "dropout_eval": lambda lib, t: lib.nn.functional.dropout(t, 0.5, training=False),
    "dropout1d": lambda lib, t: lib.nn.functional.dropout1d((t * 0 + 1).view(1, 5, 1)),
    "alpha_dropout": lambda lib, t: lib.nn.functional.alpha_dropout(t * 0 + 1, 0.5, True),
    "feature_alpha_dropout": lambda lib, t: lib.nn.functional.feature_alpha_dropout(
        (t * 0 + 1).view(1, 5, 1), 0.5, True),
    "gumbel_softmax": lambda lib, t: lib.nn.functional.gumbel_softmax(t * 0),
    "uniform_": lambda lib, t: t.clone().uniform_(),
    "normal_": lambda lib, t: t.clone().normal_(),
    "bernoulli_": lambda lib, t: t.clone().bernoulli_(0.5),
    "bernoulli_batched_p": lambda lib, t: t.clone().bernoulli_(t),
    "bernoulli_into_unbatched": lambda lib, t: lib.zeros(5).bernoulli_(t),
    "exponential_": lambda lib, t: t.clone().exponential_(),
    "random_": lambda lib, t: t.clone().random_(0, 7),
    "uniform_unbatched": lambda lib, t: t * lib.empty(5).uniform_(),
    "init_normal": lambda lib, t: t * lib.nn.init.normal_(lib.empty(5)),
}


def _outcome(lib, name, mode):
    lib.manual_seed(0)
    try:
        out = lib.func.vmap(lambda t: SCENARIOS[name](lib, t), randomness=mode)(lib.tensor(X))
    except Exception as exc:  # noqa: BLE001 - the type and message are the outcome compared
        return type(exc).__name__, str(exc)[:60]
    arr = np.asarray(out.detach().numpy())
    return tuple(arr.shape), bool(all(np.array_equal(arr[0], r) for r in arr[1:]))


@pytest.mark.oracle
@pytest.mark.parametrize("mode", ["error", "same", "different"])
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_randomness_outcome_matches_torch(torch, name, mode):
    assert _outcome(hookgrad, name, mode) == _outcome(torch, name, mode)


NESTED = [("different", "same"), ("same", "different"), ("error", "same"), ("same", "error"),
          ("different", "different"), ("same", "same")]


@pytest.mark.oracle
@pytest.mark.parametrize(("outer", "inner"), NESTED)
def test_nested_levels_apply_their_own_mode(torch, outer, inner):
    def run(lib):
        f = lib.func.vmap(lambda t: t * 0 + lib.rand(3), randomness=inner)
        try:
            out = lib.func.vmap(f, randomness=outer)(lib.ones(2, 4, 3))
        except RuntimeError as exc:
            return str(exc)[:40]
        a = out.numpy()
        return a.shape, bool(np.array_equal(a[0], a[1])), bool(np.array_equal(a[0, 0], a[0, 1]))

    assert run(hookgrad) == run(torch)


EXACT = {  # per-sample draw -> the plain draw it must equal: (same, different with B=4)
    "rand": (lambda lib: lib.rand(5), lambda lib: lib.rand(4, 5)),
    "randn": (lambda lib: lib.randn(2, 3), lambda lib: lib.randn(4, 2, 3)),
    "randint": (lambda lib: lib.randint(3, 9, (5,)), lambda lib: lib.randint(3, 9, (4, 5))),
    "randperm": (lambda lib: lib.randperm(6),
                 lambda lib: lib.stack([lib.randperm(6) for _ in range(4)])),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(EXACT))
def test_modes_draw_exactly_the_plain_draws(torch, name):
    same, different = EXACT[name]
    for lib in (hookgrad, torch):
        x = lib.tensor(X)
        for mode, plain in (("same", same), ("different", different)):
            lib.manual_seed(3)
            got = lib.func.vmap(lambda t, s=same: s(lib), randomness=mode)(x)
            lib.manual_seed(3)
            want = plain(lib)
            if mode == "same":
                want = want.expand(4, *want.shape)
            assert lib.equal(got, want), (lib.__name__, name, mode)


def test_different_statistics():
    hookgrad.manual_seed(0)
    x = hookgrad.ones(2000, 50)
    f = hookgrad.nn.functional
    drop = hookgrad.func.vmap(lambda t: f.dropout(t, 0.3), randomness="different")(x).numpy()
    assert abs((drop == 0).mean() - 0.3) < 0.01
    np.testing.assert_allclose(drop[drop != 0], 1 / 0.7, rtol=1e-6)
    per_row = (drop == 0).mean(1)
    assert per_row.std() > 0.02  # every sample has its own mask
    z = hookgrad.func.vmap(lambda t: hookgrad.randn_like(t), randomness="different")(x).numpy()
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    p = hookgrad.linspace(0.05, 0.95, 2000).unsqueeze(1).expand(2000, 50)
    b = hookgrad.func.vmap(hookgrad.bernoulli, randomness="different")(p).numpy()
    np.testing.assert_allclose(b.mean(1), np.linspace(0.05, 0.95, 2000), atol=0.25)
    assert abs(b.mean() - 0.5) < 0.01


@pytest.mark.oracle
@pytest.mark.parametrize("mode", ["same", "different"])
def test_vmap_grad_through_dropout(torch, mode):
    def run(lib):
        f = lib.nn.functional

        def loss(w, x):
            return f.dropout(x @ w, 0.5).sum()

        lib.manual_seed(0)
        w = lib.ones(5, 3)
        g = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0), randomness=mode)(
            w, lib.tensor(X))
        a = g.numpy()
        # each sample's grad is x_i outer (its mask * 2): zero columns where dropped
        cols = (a != 0).any(1)
        return a.shape, bool(np.array_equal(cols[0], cols[1]) and np.array_equal(cols[1], cols[2])
                             and np.array_equal(cols[2], cols[3]))

    got, want = run(hookgrad), run(torch)
    assert got[0] == want[0]
    if mode == "same":
        assert got[1] and want[1]


@pytest.mark.oracle
@pytest.mark.parametrize("mode", ["same", "different"])
def test_chunks_share_the_same_draw(torch, mode):
    def run(lib):
        lib.manual_seed(0)
        f = lib.func.vmap(lambda t: t * 0 + lib.rand(2), randomness=mode, chunk_size=2)
        out = f(lib.ones(5, 2)).numpy()
        return bool(all(np.array_equal(out[0], r) for r in out[1:]))

    assert run(hookgrad) == run(torch) == (mode == "same")


# scenarios whose draws equal torch.func's value for value (same seed), for in_dims 0 and 1;
# left out: bernoulli_ with a batched p, multinomial and gumbel_softmax at in_dims=1 (eager
# draws into non-contiguous tensors whose layouts differ from PyTorch's)
EXACT_VALUES = sorted(set(SCENARIOS) - {"bernoulli_batched_p", "multinomial_batched",
                                        "gumbel_softmax"})


def _values(lib, name, mode, in_dims):
    x = X if in_dims == 0 else np.ascontiguousarray(X.T)
    lib.manual_seed(0)
    try:
        out = lib.func.vmap(lambda t: SCENARIOS[name](lib, t), in_dims=in_dims,
                            randomness=mode)(lib.tensor(x))
    except RuntimeError as exc:
        return str(exc)[:50]
    return np.asarray(out.detach().numpy())


@pytest.mark.oracle
@pytest.mark.parametrize("in_dims", [0, 1])
@pytest.mark.parametrize("name", EXACT_VALUES)
def test_draws_equal_torch_values(torch, name, in_dims):
    """Dropout and its variants draw functorch's masks (one logical draw under "same", the
    batch in front under "different"); ``*_like`` factories of batched tensors are laid out
    like the physical value, so in-place fills follow PyTorch's memory order."""
    for mode in ("same", "different"):
        want, got = _values(torch, name, mode, in_dims), _values(hookgrad, name, mode, in_dims)
        if isinstance(want, str):
            assert got == want
        else:
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"{name} {mode}")


@pytest.mark.oracle
def test_eager_dropout_draws_in_memory_order(torch):
    """PyTorch's dropout noise is ``empty_like(input).bernoulli_``: a transposed input's mask
    is drawn in its memory order."""
    outs = []
    for lib in (torch, hookgrad):
        lib.manual_seed(0)
        F = lib.nn.functional
        outs.append([F.dropout(lib.ones(4, 5).t(), 0.5).numpy(),
                     F.alpha_dropout(lib.ones(4, 5).t(), 0.5, True).numpy(),
                     F.dropout2d(lib.ones(2, 3, 4, 5).permute(0, 1, 3, 2), 0.5).numpy()])
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=1e-6)
