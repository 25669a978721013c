"""softmax / log_softmax against PyTorch: saved result, dtype argument, extremes, errors."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from hookgrad._functional.nn_ops import _get_softmax_dim

pytestmark = pytest.mark.oracle


def _np(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t, dtype=float)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_saves_result_for_pack_hooks(torch, name):
    def run(lib):
        x = lib.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], requires_grad=True)
        log = []

        def pack(t):
            log.append("self" if t is x else ("result", tuple(t.shape)))
            return t

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            y = getattr(lib, name)(x, 1)
        g = y.grad_fn
        y.backward(lib.tensor([[1.0, 0.0, -1.0], [2.0, 0.5, 0.0]]))
        return log, g.name(), g._saved_dim, _np(x.grad)

    (lt, nt, dt, gt), (lh, nh, dh, gh) = run(torch), run(hookgrad)
    assert (lt, nt, dt) == (lh, nh, dh)
    np.testing.assert_allclose(gh, gt, rtol=1e-6)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_dtype_argument_inserts_a_copy_node(torch, name):
    def run(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 5.0]], requires_grad=True)
        y = getattr(x, name)(0, dtype=lib.float64)
        same = getattr(x, name)(0, dtype=lib.float32)
        y.sum().backward()
        return (str(y.dtype), y.grad_fn.next_functions[0][0].name(),
                same.grad_fn.next_functions[0][0].name(), str(x.grad.dtype))

    assert run(hookgrad) == run(torch)


_EXTREMES = {
    "huge": [[1000.0, 1001.0, 999.0]],
    "tiny": [[-1000.0, -1001.0, -999.0]],
    "masked": [[0.0, float("-inf"), 1.0]],
    "all_masked": [[float("-inf"), float("-inf")]],
    "with_inf": [[float("inf"), 1.0, 2.0]],
}


@pytest.mark.parametrize("case", sorted(_EXTREMES))
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_extreme_values_match_torch(torch, case, name):
    def run(lib):
        x = lib.tensor(_EXTREMES[case], requires_grad=True)
        y = getattr(lib, name)(x, -1)
        y.backward(lib.ones_like(y) * lib.tensor([0.3]))
        return _np(y), _np(x.grad)

    for a, b in zip(run(torch), run(hookgrad)):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7, equal_nan=True)


def test_errors_match_torch(torch):
    cases = [
        lambda lib: lib.arange(6).reshape(2, 3).softmax(1),
        lambda lib: lib.arange(6).reshape(2, 3).log_softmax(0),
        lambda lib: lib.ones(2, dtype=lib.bool).softmax(0),
        lambda lib: lib.ones(2, 3).softmax(2),
        lambda lib: lib.softmax(lib.ones(3), None),
    ]
    for fn in cases:
        with pytest.raises(Exception) as et:
            fn(torch)
        with pytest.raises(Exception) as eh:
            fn(hookgrad)
        assert type(eh.value).__name__ == type(et.value).__name__
        assert str(eh.value) == str(et.value)


def test_integer_input_with_float_dtype_works(torch):
    def run(lib):
        return _np(lib.arange(6).reshape(2, 3).softmax(1, dtype=lib.float64))

    np.testing.assert_allclose(run(hookgrad), run(torch), rtol=1e-12)


def test_create_graph_second_order_matches_torch(torch):
    def run(lib, name):
        x = lib.tensor([[0.2, -1.0, 0.7], [1.5, 0.1, -0.3]], dtype=lib.float64,
                       requires_grad=True)
        y = getattr(lib, name)(x, 1)
        (g,) = lib.autograd.grad((y * lib.tensor([[1.0, 2.0, 3.0]], dtype=lib.float64)).sum(),
                                 x, create_graph=True)
        (gg,) = lib.autograd.grad((g**2).sum(), x)
        return _np(g), _np(gg)

    for name in ("softmax", "log_softmax"):
        for a, b in zip(run(torch, name), run(hookgrad, name)):
            np.testing.assert_allclose(b, a, rtol=1e-10)


def test_default_dim_helper_warns_like_torch(torch):
    from torch.nn.functional import _get_softmax_dim as torch_dim

    for ndim in range(5):
        with pytest.warns(UserWarning) as wt:
            want = torch_dim("softmax", ndim, 1)
        with pytest.warns(UserWarning) as wh:
            got = _get_softmax_dim("softmax", ndim, 1)
        assert got == want
        assert str(wh[0].message) == str(wt[0].message)


def test_softmax_hot_path_is_fused():
    """One primitive call forward, one node backward: no composite of exp/sum/div."""
    x = hookgrad.randn(4, 5, requires_grad=True)
    y = x.softmax(-1)
    assert [n for n, _ in y.grad_fn.next_functions][0].name() == "torch::autograd::AccumulateGrad"
