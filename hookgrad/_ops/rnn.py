"""Recurrent-network primitives: the fused LSTM layer and two nodes of the unfused RNN graphs.

Layer 3. What PyTorch 2.13 shows on the CPU (checked with ``next_functions`` and
``saved_tensors_hooks``), and what is registered here to match it:

- ``nn.LSTM`` on float32 runs every layer and direction as one ``mkldnn_rnn_layer`` call, node
  ``MkldnnRnnLayerBackward0`` with edges ``(input, weight0..3, hx_, cx_)`` (``weight2/3`` are
  the biases; without biases PyTorch passes zero tensors shaped like ``weight0/1``), saving
  ``hx_, cx_, input, weight0..3, result0..3`` in that pack order. Outputs: ``output [T, N, H]``,
  ``hy``, ``cy`` and a ``uint8`` workspace. Forward AD raises ``NotImplementedError``.
- GRU, RNN (tanh/relu) and LSTM on other dtypes or with projections are per-step compositions
  of ordinary ops (``hookgrad.nn._functional_rnn``); two of their nodes need primitives:
  ``unsafe_split`` (``UnsafeSplitBackward0``: the gate chunks are not views) and the in-place
  ``transpose_`` of a ``batch_first`` output (``TransposeBackward1``).

The fused layer computes with the kernels of `_rnn_kernels`. Its derivative follows NOTE [Raw
backward]: a plain ``backward()`` runs one BPTT pass on arrays; under ``create_graph`` the
gradients are built from hookgrad ops (the forward recomputed from the saved inputs, then the
BPTT), as PyTorch's ``mkldnn_rnn_layer_differentiable_backward`` does, so double backward works.

Differences from PyTorch: the workspace holds hookgrad's own layout (NOTE [Fused LSTM layout]),
so its size and bytes differ; it is returned even when ``train=False``; the saved outputs are
exposed as ``_saved_results`` (one tuple) instead of ``_saved_result0..3``; ``batch_first`` is
recorded but the input is always time-major (PyTorch's callers transpose first, as here);
packed sequences (``batch_sizes``) are not supported.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from hookgrad._backend import namespace_of
from hookgrad._ops import _rnn_kernels as K
from hookgrad._ops._rules import api, const
from hookgrad._ops.registry import PRIMITIVES, defop
from hookgrad._tensor import Tensor

__all__ = ["MKLDNN_RNN_LAYER", "LSTM_MODE", "mkldnn_rnn_layer", "unsafe_split", "transpose_"]

LSTM_MODE = 2  # ideep::rnn_kind::LSTM: the only mode PyTorch's CPU path runs fused
_INPUTS = ("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_")
_PARAMS = ("reverse", "batch_sizes", "mode", "hidden_size", "num_layers", "has_biases",
           "bidirectional", "batch_first", "train")


def _impl(input: Any, weight0: Any, weight1: Any, weight2: Any, weight3: Any, hx_: Any,
          cx_: Any, reverse: bool, batch_sizes: tuple, mode: int, hidden_size: int,
          num_layers: int, has_biases: bool, bidirectional: bool, batch_first: bool,
          train: bool) -> tuple:
    if mode != LSTM_MODE:
        raise RuntimeError(
            "could not create a primitive descriptor for the LSTM forward propagation primitive."
        )
    if batch_sizes:
        raise NotImplementedError("hookgrad: mkldnn_rnn_layer does not support batch_sizes")
    K.check_sequence(input)
    bias = weight2 + weight3 if has_biases else None
    return K.lstm_forward(input, weight0, weight1, bias, hx_, cx_, reverse)


# ---------------------------------------------------------------- the shared BPTT
# NOTE [One BPTT per node]
# The engine calls one rule per input that needs a gradient, but every gradient comes out of
# the same backward pass through time. The first rule computes it (the "bundle"); the others
# of the same node call find it here. A call is recognised by the identity of its unpacked
# ``results[0]`` (a fresh tensor per node application) and of its incoming gradients, all
# held weakly, so the entry dies with them. One entry per thread: the raw bundle lives in the
# thread's scratchpad (NOTE [Scratchpad]), which the next bundle overwrites.
_LOCAL = threading.local()


def _drop(ref: Any) -> None:
    entry = getattr(_LOCAL, "last", None)
    if entry is not None and entry[0] is ref:
        _LOCAL.last = None


def _cached(results: tuple, grads: tuple) -> dict | None:
    entry = getattr(_LOCAL, "last", None)
    if entry is None or entry[0]() is not results[0]:
        return None
    for ref, g in zip(entry[1], grads, strict=True):
        if (ref is None) != (g is None) or (ref is not None and ref() is not g):
            return None
    return entry[2]


def _bundle(grads: tuple, saved: tuple, results: tuple, reverse: bool, ops: Any) -> dict:
    grads = grads[:3]
    bundle = _cached(results, grads)
    if bundle is None:
        if not ops.graph:  # the array kernel on the values (see _KERNEL_NOTE)
            bundle = _raw_bundle(grads, saved, results, reverse)
        else:
            bundle = _graph_bundle(grads, saved, reverse)
        refs = tuple(None if g is None else _ref(g) for g in grads)
        _LOCAL.last = (_ref(results[0], _drop), refs, bundle)
    return bundle


def _ref(value: Any, callback: Any = None) -> Any:
    """A weak reference to `value`; a strong one (a closure) for arrays that cannot be weakly
    referenced (some backends' arrays), which the next bundle of the thread replaces."""
    try:
        return weakref.ref(value, callback)
    except TypeError:
        return lambda: value


def _raw_bundle(grads: tuple, saved: tuple, results: tuple, reverse: bool) -> dict:
    d, dc0 = K.lstm_backward(grads, saved[2], saved[6], results[3], reverse)
    return {"raw": True, "d": d, "dc0": dc0, "reverse": reverse}


def _flat_d(b: dict) -> Any:
    """The pre-activation gradients as one ``[4H, T*N]`` matrix (computed once per bundle)."""
    flat = b.get("flat")
    if flat is None:
        d = b["d"]
        t_len, h4, n = d.shape
        flat = K.scratch("flat_d", (h4, t_len, n), d.dtype, namespace_of(d))
        namespace_of(d).copyto(flat, (d[::-1] if b["reverse"] else d).transpose(1, 0, 2))
        flat = b["flat"] = flat.reshape(h4, t_len * n)
    return flat


def _raw_grad(which: str, b: dict, saved: tuple, results: tuple, reverse: bool) -> Any:
    if which == "hx_":
        return b["d"][0].T @ K.to_internal(saved[2])  # the first step's gradient
    if which == "cx_":
        return b["dc0"]
    x = saved[0]
    d2 = _flat_d(b)
    if which == "input":
        return (d2.T @ K.to_internal(saved[1])).reshape(x.shape)
    if which == "weight0":
        return K.from_internal(d2 @ x.reshape(d2.shape[1], -1))
    if which == "weight1":
        return K.from_internal(_hh_product(d2, results[0], saved[5], reverse))
    db = b.pop("db", None)  # weight2/3: one sum for both biases, each gets its own array
    if db is None:
        ones = namespace_of(d2).ones(d2.shape[1], d2.dtype)
        db = b["db"] = K.from_internal(d2 @ ones)  # a product sums faster than `sum`
        return db.copy()
    return db


def _hh_product(d2: Any, y: Any, h0: Any, reverse: bool) -> Any:
    """``sum_t d_t h_{t-1}^T``; a zero ``h0`` (the default) adds nothing, so it is skipped and
    the product reads the output shifted by one step in place (no copy of the states)."""
    n = h0.shape[0]
    if not h0.any():
        flat = y.reshape(d2.shape[1], -1)
        return d2[:, :-n] @ flat[n:] if reverse else d2[:, n:] @ flat[:-n]
    prev = K.previous(y, h0, reverse, K.scratch("hprev", y.shape, y.dtype, namespace_of(y)))
    return d2 @ prev.reshape(d2.shape[1], -1)


# ---------------------------------------------------------------- differentiable BPTT
def _graph_forward(saved: tuple, reverse: bool) -> tuple[list, list]:
    """The layer's forward again, from the saved inputs, with hookgrad ops."""
    x, w_ih, w_hh, b_ih, b_hh, h, c = saved
    xw = x.matmul(w_ih.t())  # type: ignore[attr-defined]
    if b_ih is not None:
        xw = xw + (b_ih + b_hh)
    t_len = x._data.shape[0]
    steps: list = [None] * t_len
    prev: list = [None] * t_len
    for t in range(t_len - 1, -1, -1) if reverse else range(t_len):
        i, f, g, o = (xw[t] + h.mm(w_hh.t())).chunk(4, 1)  # type: ignore[attr-defined]
        i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()  # type: ignore[attr-defined]
        c_t = f * c + i * g
        tc = c_t.tanh()  # type: ignore[attr-defined]
        steps[t], prev[t] = (c, i, f, g, o, tc), h
        h, c = o * tc, c_t
    return steps, prev


def _graph_bundle(grads: tuple, saved: tuple, reverse: bool) -> dict:
    steps, prev = _graph_forward(saved, reverse)
    hx = saved[5]
    dy, dh, dc = grads
    zeros = const(namespace_of(hx._data).zeros_like(hx._data))
    dh = zeros if dh is None else dh
    dc = zeros if dc is None else dc
    t_len = len(steps)
    ds: list = [None] * t_len
    for t in range(t_len) if reverse else range(t_len - 1, -1, -1):
        c_prev, i, f, g, o, tc = steps[t]
        if dy is not None:
            dh = dh + dy[t]
        dc = dc + dh * o * (1 - tc * tc)
        ds[t] = api().cat(
            [dc * g * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - g * g),
             dh * tc * o * (1 - o)], 1)
        dh = ds[t].mm(saved[2])  # type: ignore[attr-defined]
        dc = dc * f
    return {"raw": False, "d": api().stack(ds, 0), "prev": api().stack(prev, 0), "dh0": dh,
            "dc0": dc}


def _graph_grad(which: str, b: dict, saved: tuple) -> Tensor:
    x, w_ih = saved[0], saved[1]
    d = b["d"]
    d2 = d.reshape(-1, d.shape[-1])  # type: ignore[attr-defined]
    if which == "input":
        return d.matmul(w_ih)  # type: ignore[attr-defined]
    if which == "weight0":
        return d2.t().mm(x.reshape(d2.shape[0], -1))  # type: ignore[attr-defined]
    if which == "weight1":
        return d2.t().mm(b["prev"].reshape(d2.shape[0], -1))  # type: ignore[attr-defined]
    if which in ("weight2", "weight3"):
        return d2.sum(0)  # type: ignore[attr-defined]
    return b["dh0"] if which == "hx_" else b["dc0"]


# _KERNEL_NOTE: with `ARRAY_OPS` (NOTE [Rule operations]) the rules run the fused LSTM backward
# kernel on the values; with `TENSOR_OPS` they run the same recurrence as hookgrad ops
# (`_graph_bundle`), so it is differentiable and visible to recorders. The kernel cannot be
# spelled in the operations namespace without an LSTM-backward primitive of its own.
def _rule(which: str) -> Any:
    # Every rule names every saved value: PyTorch saves all of them whichever input needs a
    # gradient, and the recorder saves what the rules of the needed inputs name.
    def rule(grads: tuple, hx_: Tensor, cx_: Tensor, input: Tensor, weight0: Tensor,
             weight1: Tensor, weight2: Tensor, weight3: Tensor, results: tuple, reverse: bool,
             has_biases: bool, ops: Any) -> Tensor:
        saved = (input, weight0, weight1, weight2 if has_biases else None,
                 weight3 if has_biases else None, hx_, cx_)
        b = _bundle(grads, saved, results, reverse, ops)
        if b["raw"]:
            return _raw_grad(which, b, saved, results, reverse)
        return _graph_grad(which, b, saved)

    return rule


def _no_forward_ad(t: Any) -> Any:
    raise NotImplementedError(
        "Trying to use forward AD with mkldnn_rnn_layer that does not support it because it has "
        "not been implemented yet."
    )


MKLDNN_RNN_LAYER = defop(
    "mkldnn_rnn_layer",
    impl=_impl,
    inputs=_INPUTS,
    params=_PARAMS,
    saves=("hx_", "cx_", "input", "weight0", "weight1", "weight2", "weight3", "results"),
    vjp={name: _rule(name) for name in _INPUTS},
    jvp={name: _no_forward_ad for name in _INPUTS},  # PyTorch has no formula either
    num_outputs=4,
    nondifferentiable_outputs=(3,),
)


def mkldnn_rnn_layer(input: Tensor, weight0: Tensor, weight1: Tensor, weight2: Tensor,
                     weight3: Tensor, hx_: Tensor, cx_: Tensor, reverse: bool, batch_sizes: Any,
                     mode: int, hidden_size: int, num_layers: int, has_biases: bool,
                     bidirectional: bool, batch_first: bool, train: bool) -> tuple:
    """One LSTM layer in one direction over a time-major ``input [T, N, I]``.

    Returns ``(output [T, N, H], hy [N, H], cy [N, H], workspace)``; `mode` must be 2 (LSTM).
    See the module docstring for what differs from PyTorch.

    Mirrors: ``torch.mkldnn_rnn_layer``.
    """
    from hookgrad._dispatch import bind

    params = {"reverse": bool(reverse), "batch_sizes": tuple(batch_sizes), "mode": int(mode),
              "hidden_size": int(hidden_size), "num_layers": int(num_layers),
              "has_biases": bool(has_biases), "bidirectional": bool(bidirectional),
              "batch_first": bool(batch_first), "train": bool(train)}
    return bind(MKLDNN_RNN_LAYER, (input, weight0, weight1, weight2, weight3, hx_, cx_), params)


# ---------------------------------------------------------------- nodes of the unfused graphs
_SPLIT = PRIMITIVES["split"]
# ``unsafe_split`` computes ``split`` but its outputs are not views for autograd (the RNN cells
# write into them in place in ATen); hence its own node name and no view bookkeeping.
UNSAFE_SPLIT = defop("unsafe_split", impl=_SPLIT.impl, params=("split_size", "dim"),
                     num_outputs=-1, vjp=dict(_SPLIT.vjp), jvp="linear")

# ATen's ``rnn_tanh``/``rnn_relu``/``gru`` turn a batch-first output around with ``transpose_``
# on the fresh stacked result (node ``TransposeBackward1``). Nobody else sees that result, so an
# out-of-place primitive with the node's name is observably the same (as ``_matmul_squeeze_``).
TRANSPOSE_ = defop("_rnn_transpose_", impl=lambda self, dim0, dim1: self.swapaxes(dim0, dim1),
                   params=("dim0", "dim1"), node_name="TransposeBackward1",
                   vjp={"self": lambda grad, dim0, dim1: grad.transpose(dim0, dim1)},
                   jvp="linear")


def unsafe_split(tensor: Tensor, split_size: int, dim: int = 0) -> tuple:
    """`split` into pieces of `split_size` that are not views (``UnsafeSplitBackward0``).

    Mirrors: ``torch.unsafe_split``.
    """
    from hookgrad._dispatch import bind

    return bind(UNSAFE_SPLIT, (tensor,), {"split_size": int(split_size), "dim": int(dim)})


def transpose_(t: Tensor, dim0: int, dim1: int) -> Tensor:
    """``t.transpose_(dim0, dim1)`` of a tensor nobody else holds (``TransposeBackward1``)."""
    from hookgrad._dispatch import bind

    return bind(TRANSPOSE_, (t,), {"dim0": dim0, "dim1": dim1})
