"""Recurrent layers against the oracle, beyond values: the graph PyTorch builds on the CPU
(fused ``MkldnnRnnLayerBackward0`` per LSTM layer on float32, per-step composition otherwise),
what the fused node saves, double backward, repeated backward, forward AD and errors."""

from __future__ import annotations

import gc
import warnings
import weakref

import numpy as np
import pytest

import hookgrad
from hookgrad._ops import rnn as _rnn_ops
from hookgrad.nn import _functional_rnn
from hookgrad.testing._oracle import graph_signature

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(11)


def _arr(*shape, dtype="float32"):
    return RNG.uniform(-1, 1, shape).astype(dtype)


def _tensor(lib, arr, requires_grad=True):
    return lib.tensor(arr.tolist(), dtype=getattr(lib, str(arr.dtype)),
                      requires_grad=requires_grad)


def _pair(torch, cls, kw, dtype="float32"):
    """The same module in both libraries (hookgrad gets torch's weights)."""
    tm = getattr(torch.nn, cls)(3, 4, **kw)
    hm = getattr(hookgrad.nn, cls)(3, 4, **kw)
    if dtype == "float64":
        tm, hm = tm.double(), hm.double()
    hm.load_state_dict({k: _tensor(hookgrad, v.detach().numpy(), False)
                        for k, v in tm.state_dict().items()})
    return tm, hm


def _states(cls, kw, batch, dtype):
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    h = _arr(layers, batch, kw.get("proj_size") or 4, dtype=dtype)
    return [h, _arr(layers, batch, 4, dtype=dtype)] if cls == "LSTM" else [h]


def _run(lib, module, x, states):
    xs = _tensor(lib, x)
    if not states:
        return module(xs)
    hx = [_tensor(lib, s) for s in states]
    return module(xs, tuple(hx) if len(hx) == 2 else hx[0])


def _flat_outputs(out):
    return [out[0], *(out[1] if isinstance(out[1], tuple) else (out[1],))]


CONFIGS = [
    ("LSTM", {}), ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"batch_first": True}), ("LSTM", {"bias": False}), ("LSTM", {"proj_size": 2}),
    ("GRU", {}), ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("RNN", {"batch_first": True, "bias": False}), ("RNN", {"nonlinearity": "relu"}),
]


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("with_states", [False, True], ids=["zeros", "hx"])
@pytest.mark.parametrize(("cls", "kw"), CONFIGS, ids=lambda v: v if isinstance(v, str) else
                         "-".join(f"{k}" for k in v) or "default")
def test_graph_matches_torch(torch, cls, kw, dtype, with_states):
    tm, hm = _pair(torch, cls, kw, dtype)
    x = _arr(2, 5, 3, dtype=dtype) if kw.get("batch_first") else _arr(5, 2, 3, dtype=dtype)
    states = _states(cls, kw, 2, dtype) if with_states else []
    t_out, h_out = _run(torch, tm, x, states), _run(hookgrad, hm, x, states)
    for t, h in zip(_flat_outputs(t_out), _flat_outputs(h_out), strict=True):
        assert graph_signature(h.grad_fn) == graph_signature(t.grad_fn)
        np.testing.assert_allclose(h.detach().numpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_unbatched_graph_matches_torch(torch, cls):
    tm, hm = _pair(torch, cls, {})
    x = _arr(5, 3)
    for t, h in zip(_flat_outputs(tm(_tensor(torch, x))), _flat_outputs(hm(_tensor(hookgrad, x))),
                    strict=True):
        assert graph_signature(h.grad_fn) == graph_signature(t.grad_fn)


def test_fused_node_saves_like_torch(torch):
    """Pack order and shapes of the saved values (not the workspace's size) and the params."""
    tm, hm = _pair(torch, "LSTM", {})
    x = _arr(5, 2, 3)
    logs = {}
    for lib, module in ((torch, tm), (hookgrad, hm)):
        packed = []

        def pack(t, packed=packed):
            packed.append((tuple(t.shape), str(t.dtype).split(".")[-1]))
            return t

        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = module(_tensor(lib, x))[0]
        fn = out.grad_fn
        params = [getattr(fn, f"_saved_{p}") for p in ("reverse", "mode", "hidden_size",
                  "num_layers", "has_biases", "bidirectional", "batch_first", "train")]
        logs[lib.__name__] = (fn.name(), packed[:-1], packed[-1][1], params,
                              tuple(fn._saved_batch_sizes))
    assert logs["hookgrad"] == logs["torch"]


def test_double_backward_matches_torch(torch):
    kw = {"num_layers": 2, "bidirectional": True}
    tm, hm = _pair(torch, "LSTM", kw)
    x, states = _arr(4, 2, 3), _states("LSTM", kw, 2, "float32")
    grads = {}
    for lib, module in ((torch, tm), (hookgrad, hm)):
        xs = _tensor(lib, x)
        hx = tuple(_tensor(lib, s) for s in states)
        out, (h, c) = module(xs, hx)
        loss = (out**2).sum() + (h * c).sum()
        params = list(module.parameters())
        first = lib.autograd.grad(loss, [xs, *hx, *params], create_graph=True)
        second = lib.autograd.grad(sum((g**2).sum() for g in first), [xs, *hx, *params])
        grads[lib.__name__] = [g.detach().numpy() for g in (*first, *second)]
    for h, t in zip(grads["hookgrad"], grads["torch"], strict=True):
        np.testing.assert_allclose(h, t, rtol=1e-3, atol=1e-4)


def test_repeated_backward_and_partial_inputs(torch):
    """One node, several backward calls (retain_graph) with other gradients and inputs."""
    tm, hm = _pair(torch, "LSTM", {"num_layers": 2})
    x, states = _arr(5, 2, 3), _states("LSTM", {"num_layers": 2}, 2, "float32")
    results = {}
    for lib, module in ((torch, tm), (hookgrad, hm)):
        xs = _tensor(lib, x)
        hx = tuple(_tensor(lib, s) for s in states)
        out, (h, c) = module(xs, hx)
        w = module.weight_hh_l0
        got = []
        for scale in (1.0, -2.0):
            got += lib.autograd.grad(out.sum() * scale, [w, xs], retain_graph=True)
        got += lib.autograd.grad(c.sum(), [hx[0]], retain_graph=True)
        got += lib.autograd.grad((out * out).sum(), [module.bias_ih_l1, module.bias_hh_l1])
        results[lib.__name__] = [g.numpy() for g in got]
    for h, t in zip(results["hookgrad"], results["torch"], strict=True):
        np.testing.assert_allclose(h, t, rtol=1e-4, atol=1e-5)


def test_backward_releases_the_graph():
    """The shared per-node BPTT result must not keep a graph alive after backward."""
    m = hookgrad.nn.LSTM(3, 4)
    x = hookgrad.randn(5, 2, 3, requires_grad=True)
    out = m(x)[0]
    probe = out.grad_fn

    ref = weakref.ref(probe)
    grads = hookgrad.autograd.grad(out.sum(), [x, *m.parameters()], create_graph=True)
    assert all(g.grad_fn is not None for g in grads)
    # the node's shared BPTT bundle was dropped with the node application's unpacked outputs
    assert getattr(_rnn_ops._LOCAL, "last", None) is None
    del out, probe, grads
    gc.collect()
    assert ref() is None


def test_forward_ad_is_not_implemented_like_torch(torch):
    for lib in (torch, hookgrad):
        m = lib.nn.LSTM(3, 4)
        fw = lib.autograd.forward_ad
        with fw.dual_level(), pytest.raises(NotImplementedError, match="mkldnn_rnn_layer"):
            m(fw.make_dual(lib.ones(5, 2, 3), lib.ones(5, 2, 3)))
    m = hookgrad.nn.LSTM(3, 4).double()  # PyTorch's composition (float64) has forward AD
    with hookgrad.autograd.forward_ad.dual_level():
        fw = hookgrad.autograd.forward_ad
        out = m(fw.make_dual(hookgrad.ones(5, 2, 3, dtype=hookgrad.float64),
                             hookgrad.ones(5, 2, 3, dtype=hookgrad.float64)))[0]
        assert fw.unpack_dual(out).tangent is not None


def test_dropout_between_layers_graph(torch):
    for lib in (torch, hookgrad):
        m = lib.nn.LSTM(3, 4, num_layers=2, dropout=0.5)
        out = m(lib.ones(5, 2, 3, requires_grad=True))[0]
        first_input = out.grad_fn.next_functions[0][0]
        assert first_input.name() == "MulBackward0"
        assert first_input.next_functions[0][0].name() == "MkldnnRnnLayerBackward0"


def test_errors_match_torch(torch):
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0"):
            lib.nn.LSTM(3, 4)(lib.ones(0, 2, 3))
        with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(1, 2, 4\), got"):
            lib.nn.LSTM(3, 4)(lib.ones(5, 2, 3), (lib.zeros(1, 2, 4), lib.zeros(1, 3, 4)))
        with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 2"):
            lib.gru_cell(lib.ones(2, 2), lib.ones(2, 4), lib.ones(12, 3), lib.ones(12, 4))
        with pytest.raises(RuntimeError, match="hidden1 has inconsistent hidden_size: got 3"):
            lib.lstm_cell(lib.ones(2, 3), (lib.ones(2, 4), lib.ones(2, 3)), lib.ones(16, 3),
                          lib.ones(16, 4))


def test_projection_warns_once():
    _functional_rnn._WARNED.clear()
    m = hookgrad.nn.LSTM(3, 4, proj_size=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m(hookgrad.ones(5, 2, 3))
        m(hookgrad.ones(5, 2, 3))
    assert [str(w.message) for w in caught] == [
        "LSTM with projections is not supported with oneDNN. Using default implementation."
    ]


def test_scratchpad_keeps_only_small_buffers():
    from hookgrad._ops import _rnn_kernels as K

    small = K.scratch("probe", (4, 4), np.dtype("float32"), np)
    assert K.scratch("probe", (4, 4), np.dtype("float32"), np) is small
    big = (K.SCRATCH_LIMIT // 4 + 1,)
    assert K.scratch("probe", big, np.dtype("float32"), np) is not K.scratch(
        "probe", big, np.dtype("float32"), np)
