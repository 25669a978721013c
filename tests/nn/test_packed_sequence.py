"""``torch.nn.utils.rnn`` against PyTorch: packing/unpacking (values, batch sizes, index
permutations, gradients, errors) and RNN/LSTM/GRU on packed input (outputs, final states, input
and parameter gradients), in both batch layouts and both ``enforce_sorted`` modes."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import hookgrad
from tests.nn._compare import copy_state

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(11)


def _R(lib):
    return importlib.import_module(lib.__name__ + ".nn.utils.rnn")


def _np(t):
    return None if t is None else t.detach().numpy()


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_pad_round_trip(torch, batch_first, enforce_sorted):
    x = RNG.standard_normal((4, 3, 2))
    lengths = [4, 2, 1] if enforce_sorted else [2, 4, 1]
    res = []
    for lib in (torch, hookgrad):
        R = _R(lib)
        xt = lib.tensor(x, requires_grad=True)
        xin = xt.transpose(0, 1) if batch_first else xt
        p = R.pack_padded_sequence(xin, lib.tensor(lengths), batch_first=batch_first,
                                   enforce_sorted=enforce_sorted)
        out, lens = R.pad_packed_sequence(p, batch_first=batch_first, padding_value=-2.0,
                                          total_length=6)
        weights = lib.arange(out.numel(), dtype=lib.float64).reshape(out.shape)
        (out * weights).sum().backward()
        res.append([_np(p.data), _np(p.batch_sizes), _np(p.sorted_indices),
                    _np(p.unsorted_indices), _np(out), _np(lens), xt.grad.numpy(),
                    p.data.grad_fn.name(), str(lens.dtype), str(p.batch_sizes.dtype)])
    for mine, theirs in zip(res[1], res[0]):
        if isinstance(theirs, np.ndarray):
            np.testing.assert_array_equal(mine, theirs)
        else:
            assert mine == theirs


def test_packed_sequence_is_a_namedtuple(torch):
    for lib in (torch, hookgrad):
        R = _R(lib)
        p = R.pack_sequence([lib.ones(3), lib.ones(1), lib.ones(2)], enforce_sorted=False)
        data, batch_sizes, sorted_indices, unsorted_indices = p
        assert p._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
        assert isinstance(p, tuple)
        assert batch_sizes.tolist() == [3, 2, 1]
        assert sorted_indices.tolist() == [0, 2, 1] and unsorted_indices.tolist() == [0, 2, 1]
        assert p.double().data.dtype == lib.float64
        assert R.invert_permutation(lib.tensor([2, 0, 1])).tolist() == [1, 2, 0]


@pytest.mark.parametrize(("lengths", "kw"), [([4, 1, 2], {}), ([4, 0, 1], {}), ([4, 2], {}),
                                             ([2, 0, 1], {"enforce_sorted": False})])
def test_pack_errors(torch, lengths, kw):
    msgs = []
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError) as e:
            _R(lib).pack_padded_sequence(lib.ones(4, 3, 2), lengths, **kw)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_pad_packed_total_length_error(torch):
    msgs = []
    for lib in (torch, hookgrad):
        p = _R(lib).pack_padded_sequence(lib.ones(4, 2, 1), [4, 2])
        with pytest.raises(ValueError) as e:
            _R(lib).pad_packed_sequence(p, total_length=2)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("kw", [{}, {"batch_first": True, "padding_value": 0.5},
                                {"padding_side": "left"}])
def test_pad_sequence_and_unpad(torch, kw):
    seqs = [RNG.standard_normal((n, 2)) for n in (3, 1, 4)]
    res = []
    for lib in (torch, hookgrad):
        R = _R(lib)
        ts = [lib.tensor(s, requires_grad=True) for s in seqs]
        out = R.pad_sequence(ts, **kw)
        out.sum().backward()
        padded = _np(out).copy()  # PyTorch's unpad_sequence transposes `out` in place
        unpadded = R.unpad_sequence(out, lib.tensor([3, 1, 4]),
                                    batch_first=kw.get("batch_first", False)) \
            if kw.get("padding_side", "right") == "right" else []
        packed = R.pack_sequence(ts, enforce_sorted=False)
        res.append((padded, [_np(u) for u in unpadded],
                    [_np(u) for u in R.unpack_sequence(packed)], _np(packed.data)))
    np.testing.assert_array_equal(res[1][0], res[0][0])
    for a, b in zip(res[1][1] + res[1][2], res[0][1] + res[0][2]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(res[1][3], res[0][3])


_RNNS = [("RNN", {}), ("RNN", {"nonlinearity": "relu", "bidirectional": True}),
         ("GRU", {"num_layers": 2, "bidirectional": True}), ("GRU", {"bias": False}),
         ("LSTM", {"num_layers": 2, "bidirectional": True}), ("LSTM", {"proj_size": 2}),
         ("LSTM", {"num_layers": 2, "proj_size": 3, "bidirectional": True})]


def _state_sum(lib, h):
    hs = h if isinstance(h, tuple) else (h,)
    total = 0
    for k, t in enumerate(hs):
        total = total + (t * lib.arange(t.numel(), dtype=t.dtype).reshape(t.shape) * (k + 1)).sum()
    return total


@pytest.mark.parametrize(("mode", "kw"), _RNNS)
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("with_hx", [False, True])
def test_rnn_on_packed_input(torch, mode, kw, enforce_sorted, batch_first, with_hx):
    def make(lib):
        lib.manual_seed(0)
        return getattr(lib.nn, mode)(3, 4, batch_first=batch_first, **kw).double()

    tm, hm = make(torch), make(hookgrad)
    copy_state(tm, hm, hookgrad)
    x = RNG.standard_normal((5, 3, 3))
    lengths = [5, 3, 2] if enforce_sorted else [3, 5, 2]
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    h0 = RNG.standard_normal((layers, 3, kw.get("proj_size") or 4))
    c0 = RNG.standard_normal((layers, 3, 4))
    res = []
    for lib, m in ((torch, tm), (hookgrad, hm)):
        R = _R(lib)
        xt = lib.tensor(x, requires_grad=True)
        p = R.pack_padded_sequence(xt.transpose(0, 1) if batch_first else xt, lengths,
                                   batch_first=batch_first, enforce_sorted=enforce_sorted)
        hx = None
        if with_hx:
            hx = (lib.tensor(h0), lib.tensor(c0)) if mode == "LSTM" else lib.tensor(h0)
        out, h = m(p, hx)
        assert isinstance(out, R.PackedSequence)
        padded, _ = R.pad_packed_sequence(out, batch_first=batch_first)
        ((padded**2).sum() + _state_sum(lib, h)).backward()
        hs = h if isinstance(h, tuple) else (h,)
        res.append(([_np(padded)] + [_np(t) for t in hs] + [xt.grad.numpy()],
                    [q.grad.numpy() for q in m.parameters()], _np(out.batch_sizes)))
    for a, b in zip(res[1][0] + res[1][1], res[0][0] + res[0][1]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(res[1][2], res[0][2])


def test_lstm_float32_packed_and_hooks(torch):
    """float32 packed LSTM (no fused path in PyTorch either); forward hooks see the packed
    output."""
    def make(lib):
        lib.manual_seed(0)
        return lib.nn.LSTM(2, 3)

    tm, hm = make(torch), make(hookgrad)
    copy_state(tm, hm, hookgrad)
    x = RNG.standard_normal((4, 2, 2)).astype("float32")
    res = []
    for lib, m in ((torch, tm), (hookgrad, hm)):
        seen = []
        m.register_forward_hook(lambda mod, args, out: seen.append(
            (type(args[0]).__name__, type(out[0]).__name__)))
        R = _R(lib)
        out, (h, c) = m(R.pack_padded_sequence(lib.tensor(x), [4, 3]))
        res.append((_np(out.data), _np(h), _np(c), seen))
    for a, b in zip(res[1][:3], res[0][:3]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert res[1][3] == res[0][3]


def test_packed_hidden_size_check(torch):
    msgs = []
    for lib in (torch, hookgrad):
        p = _R(lib).pack_padded_sequence(lib.ones(3, 2, 2), [3, 1])
        with pytest.raises(RuntimeError) as e:
            lib.nn.GRU(2, 3)(p, lib.zeros(1, 3, 3))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
