"""nn.functional's smaller names (pdist, celu_/selu_, dispatch helpers, mode tables) vs PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.census._both import run_both

pytestmark = pytest.mark.oracle

RNG = np.random.RandomState(0)


@pytest.mark.parametrize("p", [2, 1, 0.5, 3, float("inf")])
@pytest.mark.parametrize("shape", [(4, 3), (2, 5), (1, 3)])
def test_pdist_values_and_grads(torch, p, shape):
    run_both(torch, lambda L, t: L.nn.functional.pdist(t[0], p), RNG.randn(*shape))


def test_pdist_gradcheck():
    x = hookgrad.tensor(RNG.randn(4, 3), dtype=hookgrad.float64, requires_grad=True)
    for p in (1.5, 2, 3):
        assert hookgrad.autograd.gradcheck(lambda a: hookgrad.nn.functional.pdist(a, p), (x,))
    assert hookgrad.autograd.gradgradcheck(lambda a: hookgrad.nn.functional.pdist(a), (x,))


def test_pdist_errors(torch):
    def run(lib):
        out = []
        for x, p in ((lib.ones(2, 2, 2), 2), (lib.ones(3, 2), -1)):
            try:
                lib.nn.functional.pdist(x, p)
            except Exception as e:  # noqa: BLE001 - the type is compared
                out.append((type(e).__name__, str(e)))
        return out, lib.nn.functional.pdist(lib.ones(0, 3)).shape
    assert run(hookgrad) == run(torch)


def test_inplace_celu_selu(torch):
    def run(lib):
        x = lib.tensor([-2.0, -0.5, 0.0, 1.5])
        y = x.clone()
        a = lib.nn.functional.celu_(x, 0.7)
        b = lib.nn.functional.selu_(y)
        return a is x, b is y, [round(v, 6) for v in x.tolist()], [round(v, 6) for v in y.tolist()]
    assert run(hookgrad) == run(torch)


def test_tables_and_helpers(torch):
    def run(lib):
        F = lib.nn.functional
        out = [F.GRID_SAMPLE_INTERPOLATION_MODES, F.GRID_SAMPLE_PADDING_MODES,
               F.reproducibility_notes, F.tf32_notes, F.BroadcastingList2[int],
               [(n, int(m.value)) for n, m in F.ScalingType.__members__.items()],
               [(n, int(m.value)) for n, m in F.SwizzleType.__members__.items()],
               F.has_torch_function_unary(lib.ones(1)), F.has_torch_function_variadic(1, 2)]
        F.assert_int_or_pair(3, "k", "{} bad")
        F.assert_int_or_pair((1, 2), "k", "{} bad")
        try:
            F.assert_int_or_pair((1, 2, 3), "kernel", "{} must be int or pair")
        except AssertionError as e:
            out.append(str(e))

        def yes(x, flag=False):
            """Documented."""
            return ("yes", x)

        def no(x, flag=False):
            return ("no", x)
        fn = F.boolean_dispatch("flag", 1, False, yes, no, "mod", "chooser")
        out += [fn(1), fn(1, True), fn(1, flag=True), fn.__name__, fn.__module__, fn.__doc__,
                no.__doc__]
        return out
    assert run(hookgrad) == run(torch)


@pytest.mark.parametrize("nd,kw", [(1, {}), (2, {"stride": 2, "padding": 1}),
                                   (2, {"groups": 2, "dilation": 2}), (3, {"padding": 1})])
def test_nn_grad_conv(torch, nd, kw):
    rng = np.random.RandomState(nd)
    groups = kw.get("groups", 1)
    x = rng.randn(2, 4, *([7] * nd))
    w = rng.randn(6, 4 // groups, *([3] * nd))

    def run(lib):
        X, W = lib.tensor(x), lib.tensor(w)
        out = getattr(lib.nn.functional, f"conv{nd}d")(X, W, None, **kw)
        go = lib.tensor(rng_go(out.shape))
        gi = getattr(lib.nn.grad, f"conv{nd}d_input")(X.shape, W, go, **kw)
        gw = getattr(lib.nn.grad, f"conv{nd}d_weight")(X, W.shape, go, **kw)
        return np.array(gi.tolist()), np.array(gw.tolist())

    def rng_go(shape):
        return np.random.RandomState(7).randn(*shape)
    (hi, hw), (ti, tw) = run(hookgrad), run(torch)
    np.testing.assert_allclose(hi, ti, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(hw, tw, rtol=1e-10, atol=1e-10)


def test_factory_kwargs_and_types(torch):
    def run(lib):
        out = [lib.nn.factory_kwargs(None), lib.nn.factory_kwargs({"dtype": 1}),
               lib.nn.factory_kwargs({"device": "cpu", "factory_kwargs": {"dtype": 2}})]
        for bad in ({"bogus": 1}, {"dtype": 1, "factory_kwargs": {"dtype": 2}}):
            try:
                lib.nn.factory_kwargs(bad)
            except TypeError as e:
                out.append(str(e))
        out.append(str(lib.nn.common_types._size_2_t).replace(lib.__name__, "L"))
        return out
    assert run(hookgrad) == run(torch)


def test_small_helpers(torch):
    def run(lib):
        rnn = lib.nn.utils.rnn
        deco = rnn.copy_method_params(len)(lambda self: 3)
        return (rnn.bind(None, str), rnn.bind(4, str), deco(None),
                lib.cuda.amp.amp_definitely_not_available(),
                lib.nn.utils.parametrize.is_traceable_wrapper_subclass(lib.ones(1)))
    assert run(hookgrad) == run(torch)
