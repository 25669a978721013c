"""torch.distributions: values, gradients through log_prob/entropy, validation, sampling."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle


@pytest.fixture(autouse=True)
def _validation_on(torch):
    """PyTorch's default is ``__debug__`` (on), but running ``torch.compile`` elsewhere in the
    session turns it off globally; both libraries validate by default here, as in a fresh
    process."""
    before = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(True)
    yield
    torch.distributions.Distribution.set_default_validate_args(before)


def _both(torch, fn):
    return fn(torch), fn(hookgrad)


def _np(t):
    return np.asarray(t.detach().tolist(), dtype=np.float64)


def _close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


_PROBS = [[0.1, 0.3, 0.6], [0.5, 0.25, 0.25]]


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_categorical_log_prob_entropy_and_grads(torch, param):
    def scenario(L):
        raw = L.tensor(_PROBS, dtype=L.float64)
        p = (raw if param == "probs" else raw.log() * 1.7).requires_grad_()
        d = L.distributions.Categorical(**{param: p})
        lp = d.log_prob(L.tensor([2, 0]))
        lp_b = d.log_prob(L.tensor([[1, 2], [0, 0], [2, 1]]))  # sample dims broadcast
        ent = d.entropy()
        (lp.sum() + ent.sum() + lp_b.sum()).backward()
        return [_np(lp), _np(lp_b), _np(ent), _np(p.grad), _np(d.probs), _np(d.logits),
                tuple(d.batch_shape), tuple(d.event_shape), _np(d.enumerate_support()),
                _np(d.mode), repr(d)]

    ref, got = _both(torch, scenario)
    for r, g in zip(ref, got):
        if isinstance(r, np.ndarray):
            _close(g, r)
        else:
            assert g == r


def test_normal_values_and_grads(torch):
    def scenario(L):
        loc = L.tensor([0.0, 1.0, -2.0], dtype=L.float64, requires_grad=True)
        scale = L.tensor([1.0, 2.0, 0.5], dtype=L.float64, requires_grad=True)
        d = L.distributions.Normal(loc, scale)
        v = L.tensor([0.5, 0.5, -1.0], dtype=L.float64)
        lp, ent, cdf = d.log_prob(v), d.entropy(), d.cdf(v)
        (lp.sum() + ent.sum() + cdf.sum()).backward()
        scalar = L.distributions.Normal(0.0, 1.0)
        return [_np(lp), _np(ent), _np(cdf), _np(loc.grad), _np(scale.grad),
                _np(d.mean), _np(d.stddev), _np(d.variance), tuple(scalar.batch_shape),
                _np(scalar.log_prob(L.tensor(0.3))), repr(d)]

    ref, got = _both(torch, scenario)
    for r, g in zip(ref, got):
        if isinstance(r, np.ndarray):
            _close(g, r)
        else:
            assert g == r


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_bernoulli_values_and_grads(torch, param):
    def scenario(L):
        p = L.tensor([0.2, 0.7, 0.5], dtype=L.float64)
        p = (p if param == "probs" else (p / (1 - p)).log()).requires_grad_()
        d = L.distributions.Bernoulli(**{param: p})
        lp = d.log_prob(L.tensor([1.0, 0.0, 1.0], dtype=L.float64))
        ent = d.entropy()
        (lp.sum() + ent.sum()).backward()
        return [_np(lp), _np(ent), _np(p.grad), _np(d.mean), _np(d.variance),
                tuple(L.distributions.Bernoulli(probs=0.3).batch_shape)]

    ref, got = _both(torch, scenario)
    for r, g in zip(ref, got):
        if isinstance(r, np.ndarray):
            _close(g, r)
        else:
            assert g == r


def test_kl_divergences(torch):
    def scenario(L):
        D = L.distributions
        n = D.kl_divergence(D.Normal(L.tensor([0.0, 1.0]), L.tensor([1.0, 2.0])),
                            D.Normal(L.tensor([1.0, 1.0]), L.tensor([0.5, 1.0])))
        c = D.kl_divergence(D.Categorical(probs=L.tensor([0.2, 0.8, 0.0])),
                            D.Categorical(probs=L.tensor([0.5, 0.25, 0.25])))
        b = D.kl_divergence(D.Bernoulli(probs=L.tensor([0.3, 0.0])),
                            D.Bernoulli(probs=L.tensor([0.6, 0.5])))
        return [n.tolist(), c.tolist(), b.tolist()]

    ref, got = _both(torch, scenario)
    np.testing.assert_allclose(np.array(got[0]), np.array(ref[0]), rtol=1e-6)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-6)
    np.testing.assert_allclose(got[2], ref[2], rtol=1e-6)


@pytest.mark.parametrize("bad", [
    lambda L: L.distributions.Normal(L.tensor([0.0]), L.tensor([-1.0])),
    lambda L: L.distributions.Normal(L.tensor([0.0]), L.tensor([1.0])).log_prob([0.0]),
    lambda L: L.distributions.Categorical(probs=L.tensor([0.5, 0.5])).log_prob(L.tensor(2)),
    lambda L: L.distributions.Categorical(probs=L.tensor([0.5, 0.5]), logits=L.zeros(2)),
    lambda L: L.distributions.Categorical(probs=L.tensor(1.0)),
    lambda L: L.distributions.Bernoulli(probs=L.tensor([1.5])),
    lambda L: L.distributions.Bernoulli(probs=L.tensor([0.5])).log_prob(L.tensor([0.5])),
    lambda L: L.distributions.Normal(L.zeros(2), L.ones(2)).log_prob(L.zeros(3)),
])
def test_validation_errors(torch, bad):
    def scenario(L):
        try:
            bad(L)
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            return type(e).__name__, str(e).splitlines()[0]
        return None

    ref, got = _both(torch, scenario)
    assert got == ref and ref is not None


def test_validation_can_be_turned_off(torch):
    def scenario(L):
        d = L.distributions.Normal(L.tensor([0.0]), L.tensor([-1.0]), validate_args=False)
        return d.log_prob(L.tensor([0.0])).isnan().tolist()

    ref, got = _both(torch, scenario)
    assert got == ref


def test_log_prob_and_entropy_gradcheck():
    D = hookgrad.distributions
    f64 = hookgrad.float64
    loc = hookgrad.tensor([0.3, -1.0], dtype=f64, requires_grad=True)
    scale = hookgrad.tensor([0.7, 1.5], dtype=f64, requires_grad=True)
    v = hookgrad.tensor([0.1, 0.4], dtype=f64)
    assert hookgrad.autograd.gradcheck(lambda a, b: D.Normal(a, b).log_prob(v), (loc, scale))
    assert hookgrad.autograd.gradcheck(lambda b: D.Normal(0.0, b).entropy(), (scale,))
    logits = hookgrad.tensor([[0.2, -0.4, 1.0]], dtype=f64, requires_grad=True)
    assert hookgrad.autograd.gradcheck(
        lambda z: D.Categorical(logits=z).log_prob(hookgrad.tensor([2])), (logits,))
    assert hookgrad.autograd.gradcheck(lambda z: D.Categorical(logits=z).entropy(), (logits,))
    lg = hookgrad.tensor([0.3, -0.8], dtype=f64, requires_grad=True)
    y = hookgrad.tensor([1.0, 0.0], dtype=f64)
    assert hookgrad.autograd.gradcheck(lambda z: D.Bernoulli(logits=z).log_prob(y), (lg,))
    assert hookgrad.autograd.gradcheck(lambda z: D.Bernoulli(logits=z).entropy(), (lg,))


def test_sampling_shapes_dtypes_and_frequencies(torch):
    def scenario(L):
        L.manual_seed(0)
        D = L.distributions
        c = D.Categorical(probs=L.tensor([[0.2, 0.8], [0.9, 0.1]]))
        n = D.Normal(L.tensor([1.0, -1.0]), L.tensor([0.5, 2.0]))
        b = D.Bernoulli(probs=L.tensor([0.3]))
        loc = L.tensor([0.0], requires_grad=True)
        r = D.Normal(loc, 1.0).rsample((4,))
        return ((tuple(c.sample().shape), str(c.sample().dtype), tuple(c.sample((5, 3)).shape),
                 tuple(n.sample((4,)).shape), tuple(b.sample((2, 2)).shape),
                 str(b.sample().dtype), r.requires_grad, n.sample().requires_grad),
                c.sample((4000,)).float().mean(0).tolist(), n.sample((4000,)).mean(0).tolist(),
                b.sample((4000,)).mean().item())

    ref, got = _both(torch, scenario)
    assert got[0] == ref[0]
    np.testing.assert_allclose(got[1], [0.8, 0.1], atol=0.03)
    np.testing.assert_allclose(got[2], [1.0, -1.0], atol=0.1)
    assert abs(got[3] - 0.3) < 0.03
