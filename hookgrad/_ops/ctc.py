"""The connectionist temporal classification primitive ``_ctc_loss`` and its backward.

Layer 3. PyTorch shows ``CtcLossBackward0``. The forward runs the alpha recursion in log space
over the extended target (a blank between labels and at both ends), vectorised over the batch and
the extended positions, one step per time frame; it returns the negative log likelihood per
sequence and ``log_alpha`` ``(N, T, 2 * S + 1)``, as ATen does. The backward runs the beta
recursion and gives ATen's gradient ``exp(lp) - exp(log(sum alpha * beta) + nll - lp)``: the
gradient for log-softmax outputs (PyTorch's formula assumes them, which makes it agree with the
true gradient once composed with ``log_softmax``). Frames past a sequence's input length get
zero gradient; with ``zero_infinity`` so do sequences whose loss is infinite. Its derivative is
not implemented in PyTorch, so its inputs are marked nondifferentiable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hookgrad._backend import namespace_of
from hookgrad._dispatch import bind
from hookgrad._ops.registry import defop

_NO_DOUBLE = "PyTorch does not implement the derivative of _ctc_loss_backward"


def padded_targets(xp: Any, targets: Any, target_lengths: tuple, width: Any = None) -> Any:
    """Targets ``(N, max length)`` (or `width`) from either layout (padded rows, or
    concatenated)."""
    n = len(target_lengths)
    if width is None:
        width = max(target_lengths, default=0)
    if targets.ndim == 2:
        return targets[:, :width].astype(xp.int64)
    out = xp.zeros((n, width), dtype=xp.int64)
    pos = 0
    for i, length in enumerate(target_lengths):
        out[i, :length] = targets[pos:pos + length]
        pos += length
    return out


def _setup(log_probs: Any, targets: Any, target_lengths: tuple, blank: int,
           width: Any = None) -> tuple:
    """Extended labels ``(N, L)``, the skip masks and the emissions ``(T, N, L)``."""
    xp = namespace_of(log_probs)
    tg = padded_targets(xp, targets, target_lengths, width)
    n, width = tg.shape
    ext = xp.full((n, 2 * width + 1), blank, dtype=xp.int64)
    ext[:, 1::2] = tg
    valid = xp.arange(2 * width + 1)[None, :] < (2 * xp.asarray(target_lengths, dtype=xp.int64)
                                                  .reshape(n, 1) + 1)
    # s may be reached from s - 2 when it is a label that differs from the one before it
    skip = xp.zeros(ext.shape, dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    emit = xp.take_along_axis(log_probs, xp.broadcast_to(ext[None], (log_probs.shape[0], *ext.shape)),
                              axis=2)
    return ext, valid, skip, emit


def _shift(xp: Any, a: Any, k: int, fill: float) -> Any:
    """`a` moved `k` places along the last axis (right for k > 0), filled with `fill`."""
    out = xp.full(a.shape, fill, dtype=a.dtype)
    if k > 0:
        out[..., k:] = a[..., :-k]
    else:
        out[..., :k] = a[..., -k:]
    return out


def _alpha(emit: Any, valid: Any, skip: Any, input_lengths: tuple) -> Any:
    xp = namespace_of(emit)
    t_max, n, length = emit.shape
    ninf = -xp.inf
    la = xp.full((n, t_max, length), ninf, dtype=emit.dtype)
    if t_max == 0:
        return la
    first = xp.full((n, length), ninf, dtype=emit.dtype)
    first[:, :2] = emit[0, :, :2]
    la[:, 0] = xp.where(valid, first, ninf)
    for t in range(1, t_max):
        a = la[:, t - 1]
        s = xp.logaddexp(a, _shift(xp, a, 1, ninf))
        s = xp.where(skip, xp.logaddexp(s, _shift(xp, a, 2, ninf)), s)
        la[:, t] = xp.where(valid, s + emit[t], ninf)
    late = xp.arange(t_max)[None, :] >= xp.asarray(input_lengths).reshape(n, 1)
    la[late] = ninf
    return la


def lengths_tuple(value: Any) -> tuple:
    """Lengths as ints: a tuple, or one sample's length tensor (per-sample lengths under
    vmap reach the kernel through the per-sample loop, hookgrad/_ops/_batching_extra.py)."""
    data = getattr(value, "_data", None)
    if data is None:
        return tuple(value)
    return tuple(int(v) for v in np.asarray(data).reshape(-1))


def sample_width(targets: Any, input_lengths: Any, target_lengths: Any) -> Any:
    """One sample's lengths as tensors (vmap's per-sample loop): every sample's ``log_alpha``
    gets the width the targets allow, so that the samples stack (else None: the longest)."""
    if hasattr(input_lengths, "_data") or hasattr(target_lengths, "_data"):
        return targets.shape[1] if targets.ndim == 2 else targets.shape[0]
    return None


def _impl(log_probs: Any, targets: Any, input_lengths: tuple, target_lengths: tuple,
          blank: int = 0, zero_infinity: bool = False) -> tuple:
    xp = namespace_of(log_probs)
    width = sample_width(targets, input_lengths, target_lengths)
    input_lengths, target_lengths = lengths_tuple(input_lengths), lengths_tuple(target_lengths)
    ext, valid, skip, emit = _setup(log_probs, targets, target_lengths, blank, width)
    la = _alpha(emit, valid, skip, input_lengths)
    nll = xp.empty(len(input_lengths), dtype=log_probs.dtype)
    for b, (t_len, s_len) in enumerate(zip(input_lengths, target_lengths)):
        if t_len == 0:
            nll[b] = -0.0 if s_len == 0 else xp.inf
            continue
        end = la[b, t_len - 1, 2 * s_len]
        if s_len > 0:
            end = xp.logaddexp(end, la[b, t_len - 1, 2 * s_len - 1])
        nll[b] = -end
    return nll, la


def _beta(emit: Any, valid: Any, skip: Any, input_lengths: tuple,
          target_lengths: tuple) -> Any:
    xp = namespace_of(emit)
    t_max, n, length = emit.shape
    ninf = -xp.inf
    lb = xp.full((n, t_max, length), ninf, dtype=emit.dtype)
    # s may be left towards s + 2 when s + 2 may be entered from s
    skip_from = _shift(xp, skip, -2, False)
    lengths = xp.asarray(input_lengths).reshape(n)
    ends = xp.full((n, length), ninf, dtype=emit.dtype)
    nxt = xp.full((n, length), ninf, dtype=emit.dtype)
    for t in range(t_max - 1, -1, -1):
        s = xp.logaddexp(nxt, _shift(xp, nxt, -1, ninf))
        s = xp.where(skip_from, xp.logaddexp(s, _shift(xp, nxt, -2, ninf)), s)
        cur = xp.where(valid, s + emit[t], ninf)
        last = lengths == t + 1
        if last.any():
            ends[:] = ninf
            for b in xp.nonzero(last)[0]:
                s_len = target_lengths[b]
                ends[b, 2 * s_len] = emit[t, b, 2 * s_len]
                if s_len > 0:
                    ends[b, 2 * s_len - 1] = emit[t, b, 2 * s_len - 1]
            cur = xp.where(last[:, None], ends, cur)
        cur = xp.where((lengths > t)[:, None], cur, ninf)
        lb[:, t] = cur
        nxt = cur
    return lb


def _backward_impl(grad: Any, log_probs: Any, targets: Any, neg_log_likelihood: Any,
                   log_alpha: Any, input_lengths: tuple, target_lengths: tuple, blank: int = 0,
                   zero_infinity: bool = False) -> Any:
    xp = namespace_of(log_probs)
    width = sample_width(targets, input_lengths, target_lengths)
    input_lengths, target_lengths = lengths_tuple(input_lengths), lengths_tuple(target_lengths)
    ext, valid, skip, emit = _setup(log_probs, targets, target_lengths, blank, width)
    lb = _beta(emit, valid, skip, input_lengths, target_lengths)
    t_max, n, c = log_probs.shape
    v = log_alpha + lb  # (N, T, L)
    with xp.errstate(invalid="ignore"):
        m = xp.max(v, axis=2, keepdims=True)
        m = xp.where(xp.isfinite(m), m, 0)
        acc = xp.zeros((n, t_max, c), dtype=log_probs.dtype)
        rows = xp.arange(n)[:, None, None]
        cols = xp.arange(t_max)[None, :, None]
        xp.add.at(acc, (rows, cols, ext[:, None, :]), xp.exp(v - m))
    with xp.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lcab = xp.log(acc) + m
        lp = xp.swapaxes(log_probs, 0, 1)  # (N, T, C)
        nll = neg_log_likelihood.reshape(n, 1, 1)
        g = (xp.exp(lp) - xp.exp(lcab + nll - lp)) * grad.reshape(n, 1, 1)
    live = xp.arange(t_max)[None, :] < xp.asarray(input_lengths).reshape(n, 1)
    g = xp.where(live[:, :, None], g, 0)
    if zero_infinity:
        g = xp.where(xp.isinf(nll), 0, g)
    return xp.swapaxes(g, 0, 1).astype(log_probs.dtype, copy=False)


_PARAMS = ("input_lengths", "target_lengths", "blank", "zero_infinity")

CTC_LOSS_BACKWARD = defop(
    "_ctc_loss_backward", impl=_backward_impl,
    inputs=("grad", "log_probs", "targets", "neg_log_likelihood", "log_alpha"),
    params=_PARAMS, node_name="CtcLossBackwardBackward0",
    nondifferentiable={k: _NO_DOUBLE for k in ("grad", "log_probs", "targets",
                                               "neg_log_likelihood", "log_alpha")},
)


def _grad(grads: tuple, log_probs: Any, targets: Any, result0: Any, result1: Any,
          input_lengths: tuple, target_lengths: tuple, blank: int, zero_infinity: bool) -> Any:
    return bind(CTC_LOSS_BACKWARD, (grads[0], log_probs, targets, result0, result1), {
        "input_lengths": input_lengths, "target_lengths": target_lengths, "blank": blank,
        "zero_infinity": zero_infinity})


def _no_jvp(t: Any) -> Any:
    # PyTorch has no forward-mode rule for _ctc_loss
    raise NotImplementedError("Trying to use forward AD with _ctc_loss that does not support it "
                              "because it has not been implemented yet.")


CTC_LOSS = defop(
    "_ctc_loss", impl=_impl, inputs=("log_probs", "targets"), params=_PARAMS,
    num_outputs=2, nondifferentiable_outputs=(1,),
    saves=("log_probs", "targets", "result0", "result1"), node_name="CtcLossBackward0",
    vjp={"log_probs": _grad}, nondifferentiable={"targets": "integer labels"},
    jvp={"log_probs": _no_jvp},
)
