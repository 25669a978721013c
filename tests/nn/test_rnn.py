"""Recurrent layers and cells against the oracle: outputs, final states, input/state and
parameter gradients; parameter names and shapes; state dicts in both directions; checks."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.nn._compare import compare_module, copy_state

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(9)


def randn(*shape):
    return RNG.standard_normal(shape).astype("float32")


def _flat(lib, out):
    """Every tensor of a (nested) RNN result, flattened into one vector."""
    if isinstance(out, tuple):
        return lib.cat([_flat(lib, o) for o in out])
    return out.reshape(-1)


def _wrap(lib, module, with_state):
    class Wrapped(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = module

        def forward(self, x, *state):
            if not with_state:
                return _flat(lib, self.rnn(x))
            hx = state[0] if len(state) == 1 else tuple(state)
            return _flat(lib, self.rnn(x, hx))

    return Wrapped()


CONFIGS = [
    {},
    {"num_layers": 2},
    {"bidirectional": True},
    {"num_layers": 2, "bidirectional": True, "batch_first": True},
    {"bias": False},
]


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("kw", CONFIGS, ids=lambda kw: "-".join(kw) or "default")
def test_recurrent_layers(torch, cls, kw):
    x = randn(4, 5, 3) if kw.get("batch_first") else randn(5, 4, 3)
    compare_module(
        torch,
        lambda lib: _wrap(lib, getattr(lib.nn, cls)(3, 6, **kw), False),
        [(x, True)],
        check_name=False,
    )


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_initial_states_get_gradients(torch, cls):
    x, h0, c0 = randn(5, 2, 3), randn(2, 2, 4), randn(2, 2, 4)
    states = [(h0, True), (c0, True)] if cls == "LSTM" else [(h0, True)]
    compare_module(
        torch,
        lambda lib: _wrap(lib, getattr(lib.nn, cls)(3, 4, num_layers=2), True),
        [(x, True), *states],
        check_name=False,
    )


def test_rnn_relu_and_unbatched(torch):
    compare_module(
        torch,
        lambda lib: _wrap(lib, lib.nn.RNN(3, 4, nonlinearity="relu"), False),
        [(randn(5, 2, 3), True)],
        check_name=False,
    )
    for cls in ("RNN", "LSTM", "GRU"):
        compare_module(
            torch,
            lambda lib, cls=cls: _wrap(lib, getattr(lib.nn, cls)(3, 4), False),
            [(randn(5, 3), True)],
            check_name=False,
        )


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
def test_lstm_projection(torch):
    def make(lib):
        return _wrap(lib, lib.nn.LSTM(3, 5, proj_size=2, num_layers=2, bidirectional=True), False)

    compare_module(torch, make, [(randn(4, 2, 3), True)], check_name=False)


def test_top_level_nodes_match(torch):
    """RNN/GRU are per-step compositions; float32 LSTM is one fused node per layer (CPU)."""
    for cls, out_node in (("RNN", "StackBackward0"), ("GRU", "StackBackward0"),
                          ("LSTM", "MkldnnRnnLayerBackward0")):
        for lib_out in [
            getattr(lib.nn, cls)(3, 4)(lib.ones(5, 2, 3, requires_grad=True))
            for lib in (torch, hookgrad)
        ]:
            assert lib_out[0].grad_fn.name() == out_node
            states = lib_out[1] if cls == "LSTM" else (lib_out[1],)
            assert [s.grad_fn.name() for s in states] == ["StackBackward0"] * len(states)


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_parameter_names_shapes_and_state_dicts(torch, cls):
    kw = {"num_layers": 2, "bidirectional": True, **({"proj_size": 2} if cls == "LSTM" else {})}
    tm, hm = getattr(torch.nn, cls)(3, 4, **kw), getattr(hookgrad.nn, cls)(3, 4, **kw)
    assert [(n, tuple(p.shape)) for n, p in tm.named_parameters()] == [
        (n, tuple(p.shape)) for n, p in hm.named_parameters()
    ]
    assert tm._flat_weights_names == hm._flat_weights_names
    assert [[tuple(p.shape) for p in w] for w in tm.all_weights] == [
        [tuple(p.shape) for p in w] for w in hm.all_weights
    ]
    assert repr(tm) == repr(hm)
    copy_state(tm, hm, hookgrad)
    back = getattr(torch.nn, cls)(3, 4, **kw)
    copy_state(hm, back, torch)
    for (n, a), b in zip(tm.state_dict().items(), back.state_dict().values(), strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=n)


@pytest.mark.parametrize("cls", ["RNNCell", "LSTMCell", "GRUCell"])
@pytest.mark.parametrize("batched", [True, False])
def test_cells(torch, cls, batched):
    x, h = (randn(3, 5), randn(3, 4)) if batched else (randn(5), randn(4))

    def make(lib, with_state):
        cell = getattr(lib.nn, cls)(5, 4)

        class Wrapped(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.cell = cell

            def forward(self, x, *state):
                if not with_state:
                    return _flat(lib, self.cell(x))
                return _flat(lib, self.cell(x, state if cls == "LSTMCell" else state[0]))

        return Wrapped()

    compare_module(torch, lambda lib: make(lib, False), [(x, True)], check_name=False)
    states = [(h, True), (h * 0.5, True)] if cls == "LSTMCell" else [(h, True)]
    compare_module(torch, lambda lib: make(lib, True), [(x, True), *states], check_name=False)


def test_cell_reprs_and_names(torch):
    for cls, kw in [
        ("RNNCell", {"nonlinearity": "relu", "bias": False}),
        ("GRUCell", {}),
        ("LSTMCell", {}),
    ]:
        tm, hm = getattr(torch.nn, cls)(3, 4, **kw), getattr(hookgrad.nn, cls)(3, 4, **kw)
        assert repr(tm) == repr(hm)
        assert list(tm.state_dict()) == list(hm.state_dict())


def test_default_init_bounds():
    hookgrad.manual_seed(0)
    lstm = hookgrad.nn.LSTM(3, 16)
    for p in lstm.parameters():
        assert np.abs(p.detach().numpy()).max() <= 0.25 + 1e-7  # U(-1/sqrt(16), 1/sqrt(16))


def test_errors_match(torch):
    for lib in (torch, hookgrad):
        with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
            lib.nn.GRU(3, 4, proj_size=2)
        with pytest.raises(ValueError, match="Unknown nonlinearity 'sigmoid'"):
            lib.nn.RNN(3, 4, nonlinearity="sigmoid")
        with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
            lib.nn.LSTM(3, 4, proj_size=4)
        with pytest.raises(RuntimeError, match=r"input.size\(-1\) must be equal to input_size"):
            lib.nn.GRU(3, 4)(lib.ones(5, 2, 2))
        with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got"):
            lib.nn.RNN(3, 4)(lib.ones(5, 2, 3), lib.zeros(1, 3, 4))
        with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D"):
            lib.nn.LSTM(3, 4)(lib.ones(3))
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        hookgrad.nn.LSTM(3, 4, dropout=0.5)
