"""Array kernels of the fused LSTM layer (``mkldnn_rnn_layer``): forward and one-pass BPTT.

Layer 3 helpers (arrays only, no Tensor). They compute on whatever array namespace the inputs
live in (NumPy, or CuPy through the same ufuncs).

NOTE [Fused LSTM layout]
The recurrence costs a matrix product plus a handful of ufunc calls on ``[H, N]`` arrays per
step, and at these sizes a call costs about as much as its arithmetic; so the layout is chosen
to make every per-step operand one contiguous block and to need as few calls as possible:
- *feature-major*: a step's state is ``[H, N]`` and its gates ``[4H, N]`` (``W @ h`` instead of
  ``h @ W^T``), so each gate is a contiguous ``[H, N]`` slab;
- one product per step, ``[W_ih | b | W_hh] @ [x_t; 1; h]``: the steps' ``[x_t; 1]`` sit in
  one buffer with room below each for the state, which the previous step writes there;
- gates are ordered ``o, i, f, g`` (PyTorch's rows are ``i, f, g, o``) and followed by a fifth
  slot holding the previous cell state: the sigmoid gates are one block, activated by the same
  ``tanh`` as ``g`` through ``sigmoid(z) = 0.5 + 0.5 * tanh(z / 2)`` (the ``1/2`` is folded,
  exactly, into the copied weight rows), ``[i, f] * [g, c_prev]`` is one call, and the new cell
  state is written straight into the next step's fifth slot;
- in the backward step ``[k, tanh(c) σ'(o)] * dh`` is one call writing next to the ``o`` slot
  of the gate gradients, and the ``i, f, g`` gradients are one block ``dc * m``.
`to_internal` / `from_internal` convert gate rows between PyTorch's order and this one.

Everything is stored in *step* order (time order reversed for the reverse direction); only the
input, the output and the output's gradient are read or written in time order.

The workspace (the fourth output, as oneDNN's) is one flat buffer holding the activated gates
and previous cell states ``[T + 1, 5H, N]`` (the last row's fifth slot is the final cell
state) and ``tanh(c)`` ``[T, H, N]``, viewed as bytes (``uint8``) as PyTorch's is.

NOTE [Scratchpad]
Temporaries that never leave a kernel call (the BPTT factors and pre-activation gradients, a
few hundred KiB each) come from a per-thread scratchpad that keeps one buffer per name. Fresh
arrays of that size cost page faults on every call (the allocator maps and unmaps them),
which took longer than the arithmetic. Outputs and everything returned are fresh arrays.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from hookgrad._backend import namespace_of

__all__ = ["to_internal", "from_internal", "split_workspace", "lstm_forward", "lstm_backward",
           "previous", "scratch", "check_sequence"]

_LOCAL = threading.local()
SCRATCH_LIMIT = 8 << 20  # bytes: the largest temporary kept between calls


def scratch(name: str, shape: tuple, dtype: Any, xp: Any) -> Any:
    """A reusable uninitialised buffer for a temporary (NOTE [Scratchpad]).

    One buffer per name and thread; a call with another shape or dtype replaces it. Buffers
    over `SCRATCH_LIMIT` bytes are not kept: for big layers a fresh allocation costs little
    next to the arithmetic, and keeping them would pin that much memory between calls.
    """
    pool = _LOCAL.__dict__
    entry = pool.get(name)
    if entry is not None and entry[0] == shape and entry[1] == dtype and entry[2] is xp:
        return entry[3]
    arr = xp.empty(shape, dtype)
    if arr.nbytes <= SCRATCH_LIMIT:
        pool[name] = (shape, dtype, xp, arr)
    else:
        pool.pop(name, None)
    return arr


def to_internal(w: Any, half: Any = None) -> Any:
    """PyTorch's gate rows ``i, f, g, o`` -> ``o, i, f, g``; `half` scales the sigmoid rows."""
    xp = namespace_of(w)
    h = w.shape[0] // 4
    if half is None:
        return xp.concatenate((w[3 * h :], w[: 3 * h]))
    return xp.concatenate((w[3 * h :] * half, w[: 2 * h] * half, w[2 * h : 3 * h]))


def from_internal(w: Any) -> Any:
    """Inverse of `to_internal` (unscaled): rows ``o, i, f, g`` -> ``i, f, g, o``."""
    h = w.shape[0] // 4
    return namespace_of(w).concatenate((w[h:], w[:h]))


def split_workspace(ws: Any, dtype: Any, n: int, h: int) -> tuple[Any, Any]:
    """``(gates and previous cell states [T + 1, 5H, N], tanh(c) [T, H, N])`` of a workspace."""
    flat = ws.view(dtype)
    t = (flat.size // (h * n) - 5) // 6
    end = (t + 1) * 5 * h * n
    return flat[:end].reshape(t + 1, 5 * h, n), flat[end:].reshape(t, h, n)


def previous(seq: Any, first: Any, reverse: bool, out: Any) -> Any:
    """The state *before* each time step into `out`: `seq` shifted by one step, `first` first."""
    if reverse:
        out[:-1] = seq[1:]
        out[-1] = first
    else:
        out[1:] = seq[:-1]
        out[0] = first
    return out


def check_sequence(x: Any) -> None:
    if x.shape[0] == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")


# ---------------------------------------------------------------- forward
def _stacked_weights(w_ih: Any, w_hh: Any, bias: Any, half: Any) -> Any:
    """``[W_ih | b | W_hh]`` in internal gate order, sigmoid rows halved: ``[4H, I + 1 + H]``."""
    xp = namespace_of(w_hh)
    b = xp.zeros((w_hh.shape[0], 1), w_hh.dtype) if bias is None else bias[:, None]
    return to_internal(xp.concatenate((w_ih, b, w_hh), axis=1), half)


def lstm_forward(
    x: Any, w_ih: Any, w_hh: Any, bias: Any, h0: Any, c0: Any, reverse: bool
) -> tuple[Any, Any, Any, Any]:
    """One LSTM layer over ``x [T, N, I]`` (time-major); `bias` is ``b_ih + b_hh`` or None.

    Returns ``(y [T, N, H], h_T, c_T, workspace)`` (NOTE [Fused LSTM layout]).
    """
    xp = namespace_of(x)
    t_len, n, i_size = x.shape
    h = w_hh.shape[1]
    dt = x.dtype
    half = dt.type(0.5)
    ws = xp.empty(((t_len + 1) * 5 + t_len) * h * n, dt)
    zs, tcs = split_workspace(ws, dt, n, h)
    zs[0, 4 * h :] = c0.T
    top = i_size + 1  # rows of [x_t; 1]: the state follows
    xh = scratch("xh", (t_len + 1, top + h, n), dt, xp)
    xp.copyto(xh[:t_len, :i_size], (x[::-1] if reverse else x).transpose(0, 2, 1))
    xh[:t_len, i_size] = 1
    xh[0, top:] = h0.T
    _forward_steps(zs, tcs, xh, _stacked_weights(w_ih, w_hh, bias, half), half)
    states = xh[1:, top:]  # h after each step
    y = xp.ascontiguousarray((states[::-1] if reverse else states).transpose(0, 2, 1))
    hy, cy = xp.ascontiguousarray(states[-1].T), xp.ascontiguousarray(zs[-1, 4 * h :].T)
    return y, hy, cy, ws.view(np.uint8)


def _forward_steps(zs: Any, tcs: Any, xh: Any, wa: Any, half: Any) -> None:
    """The recurrence: per step one matrix product and seven ufunc calls.

    The per-step views come from `zip` over whole arrays (made in C, cheaper than indexing and
    slicing in Python).
    """
    hs = tcs.shape[1]
    top = xh.shape[1] - hs
    prod = scratch("prod", (2 * hs, tcs.shape[2]), tcs.dtype, namespace_of(tcs))
    # A zero initial state (the default) contributes nothing to the first product.
    skip = top if not xh[0, top:].any() else 0
    dot, tanh, mul, add = np.dot, np.tanh, np.multiply, np.add  # locals: a hot loop
    for z, s, o, i_f, g_c, c_next, tc, x_t, h_next in zip(
        zs[:-1, : 4 * hs], zs[:-1, : 3 * hs], zs[:-1, :hs], zs[:-1, hs : 3 * hs],
        zs[:-1, 3 * hs :], zs[1:, 4 * hs :], tcs, xh[:-1], xh[1:, top:], strict=True
    ):
        if skip:
            dot(wa[:, :skip], x_t[:skip], z)
            skip = 0
        else:
            dot(wa, x_t, z)
        tanh(z, z)
        mul(s, half, s)  # o, i, f: sigmoid(z) = 0.5 + 0.5 * tanh(z / 2) (rows pre-halved)
        add(s, half, s)
        mul(i_f, g_c, prod)  # [i * g, f * c_prev]
        add(prod[:hs], prod[hs:], c_next)
        tanh(c_next, tc)
        mul(o, tc, h_next)  # the next step's state, in its [x; 1; h] column


# ---------------------------------------------------------------- backward
def _factors(zs: Any, tcs: Any) -> tuple[Any, Any]:
    """Per-step multipliers of the BPTT step, for all steps at once (scratch arrays).

    ``m [T, 3H, N]``: what ``dc`` multiplies to give the pre-activation gradients of
    ``i, f, g`` (``g σ'(i)``, ``c_prev σ'(f)``, ``i (1 - g²)``); ``kt [T, 2H, N]``: what ``dh``
    multiplies to give ``dc``'s increment (``o (1 - tanh²(c))``) and ``o``'s gradient
    (``tanh(c) σ'(o)``). Ufuncs on strided views take several times longer than on contiguous
    arrays, so the gates are first copied gate-major (``[5, T, H, N]``, one call), the factors
    computed there, and copied back step-major for the loop.
    """
    xp = namespace_of(zs)
    t_len, hs, n = tcs.shape
    dt = tcs.dtype
    gm = scratch("gates", (5, t_len, hs, n), dt, xp)  # o, i, f, g, c_prev
    xp.copyto(gm, zs[:-1].reshape(t_len, 5, hs, n).transpose(1, 0, 2, 3))
    o, i, g = gm[0], gm[1], gm[3]
    fm = scratch("fm", (5, t_len, hs, n), dt, xp)  # m (3 slots), then k, tcp
    mul, sub = np.multiply, np.subtract
    sig = fm[:2]  # σ' of i, f
    mul(gm[1:3], gm[1:3], sig)
    sub(gm[1:3], sig, sig)
    mul(gm[3:5], sig, sig)
    sq = fm[2]
    mul(g, g, sq)
    sub(1, sq, sq)
    mul(i, sq, sq)
    k, tcp = fm[3], fm[4]
    mul(tcs, tcs, k)
    sub(1, k, k)
    mul(k, o, k)
    mul(o, o, tcp)  # σ'(o)
    sub(o, tcp, tcp)
    mul(tcp, tcs, tcp)
    steps = scratch("factors", (t_len, 5, hs, n), dt, xp)
    xp.copyto(steps, fm.transpose(1, 0, 2, 3))
    return steps[:, :3], steps[:, 3:]


def _initial(g: Any, shape: tuple, dt: Any, xp: Any) -> Any:
    """A fresh ``[H, N]`` accumulator from an incoming ``[N, H]`` gradient (None = zeros)."""
    return xp.zeros(shape, dt) if g is None else xp.array(g.T, dtype=dt, order="C")


def lstm_backward(grads: tuple, w_hh: Any, c0: Any, ws: Any, reverse: bool) -> tuple[Any, Any]:
    """BPTT of `lstm_forward` given ``(dy, dh_T, dc_T)`` (None = zero).

    Returns ``(d, dc0)``: ``d [T, 4H, N]`` (a scratch view, step order) the gradients of the
    pre-activations (internal layout, NOTE [Fused LSTM layout]), and the gradient of ``c0``.
    The gradient of ``h0`` (``d[0]^T @ W_hh``) is left to the caller: skipping that product
    when ``h0`` needs no gradient is the common case.
    """
    dy, dhy, dcy = grads
    xp = namespace_of(ws)
    n, h = c0.shape
    dt = c0.dtype
    zs, tcs = split_workspace(ws, dt, n, h)
    t_len = tcs.shape[0]
    m, kt = _factors(zs, tcs)
    if dy is not None:  # step order and feature-major, like the state
        buf = scratch("dy", (t_len, h, n), dt, xp)
        xp.copyto(buf, (dy[::-1] if reverse else dy).transpose(0, 2, 1))
        dy = buf
    d = scratch("d", (t_len, 5 * h, n), dt, xp)  # [dh * k | o | i, f, g]
    dh, dc = _initial(dhy, (h, n), dt, xp), _initial(dcy, (h, n), dt, xp)
    _backward_steps(d, dy, m, kt, zs[:-1, 2 * h : 3 * h], to_internal(w_hh).T, dh, dc)
    return d[:, h:], xp.ascontiguousarray(dc.T)


def _backward_steps(d: Any, dy: Any, m: Any, kt: Any, f: Any, wh_t: Any, dh: Any,
                    dc: Any) -> None:
    """BPTT steps, last step first; per step one matrix product and five ufunc calls.

    `dh`, `dc` are updated in place and end as the gradients of the initial state (``dh``
    before its final product with ``W_hh``, which the caller does if needed).
    """
    t_len, hs, n = f.shape
    views = [d[:, : 2 * hs].reshape(t_len, 2, hs, n), d[:, :hs],
             d[:, 2 * hs :].reshape(t_len, 3, hs, n), d[:, hs:], m, kt, f]
    views = [v[::-1] for v in views + ([] if dy is None else [dy])]
    last = t_len - 1
    dot, mul, add = np.dot, np.multiply, np.add  # locals: a hot loop
    steps = enumerate(zip(*views, strict=True))
    for step, (d_ko, dhk, d_ifg, d_t, m_t, kt_t, f_t, *dy_t) in steps:
        if dy_t:
            add(dh, dy_t[0], dh)
        mul(dh, kt_t, d_ko)  # [dh * k, dh * tanh(c) σ'(o)]: the second half is o's gradient
        add(dc, dhk, dc)
        mul(dc, m_t, d_ifg)
        mul(dc, f_t, dc)
        if step != last:
            dot(wh_t, d_t, dh)
