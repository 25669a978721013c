"""Recurrent cells and the multi-layer, bidirectional time loop behind `RNN`, `LSTM`, `GRU`.

Everything is a composite of hookgrad ops (PyTorch's CPU kernels ``_VF.rnn_tanh``/``gru`` are
composites too; its ``lstm`` uses a oneDNN node ``MkldnnRnnLayerBackward0`` that has no
counterpart here). The input projection of a whole sequence is one matrix multiply per layer and
direction (``linear`` over ``[T, N, I]``), so the Python loop over time steps only does the
small recurrent products. Gate order and formulas are PyTorch's:

- RNN: ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``
- LSTM: gates ``i, f, g, o``; ``c' = f * c + i * g``, ``h' = o * tanh(c')`` (then
  ``h' W_hr^T`` with a projection)
- GRU: gates ``r, z, n``; ``n = tanh(x_n + r * (h W_hn^T + b_hn))``, ``h' = n + z * (h - n)``
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hookgrad._functional import pointwise as _pw
from hookgrad._functional import shape as _shape
from hookgrad._tensor import Tensor
from hookgrad.nn.functional import dropout, linear

__all__ = ["rnn_tanh_cell", "rnn_relu_cell", "lstm_cell", "gru_cell", "run_layers"]

Cell = Callable[..., Any]


def _sigmoid(x: Tensor) -> Tensor:
    return x.sigmoid()  # type: ignore[attr-defined]


def _tanh(x: Tensor) -> Tensor:
    return x.tanh()  # type: ignore[attr-defined]


# ---------------------------------------------------------------- cells (projected input)
def _rnn_step(act: Callable[[Tensor], Tensor]) -> Cell:
    def step(xw: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
        return act(xw + linear(h, w_hh, b_hh))

    return step


def _lstm_step(
    xw: Tensor, state: tuple, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    h, c = state
    i, f, g, o = (xw + linear(h, w_hh, b_hh)).chunk(4, 1)  # type: ignore[attr-defined]
    c2 = _sigmoid(f) * c + _sigmoid(i) * _tanh(g)
    h2 = _sigmoid(o) * _tanh(c2)
    if w_hr is not None:
        h2 = linear(h2, w_hr)
    return h2, c2


def _gru_step(xw: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    x_r, x_z, x_n = xw.chunk(3, 1)  # type: ignore[attr-defined]
    h_r, h_z, h_n = linear(h, w_hh, b_hh).chunk(3, 1)  # type: ignore[attr-defined]
    r = _sigmoid(x_r + h_r)
    z = _sigmoid(x_z + h_z)
    n = _tanh(x_n + r * h_n)
    return n + z * (h - n)


STEPS: dict[str, Cell] = {
    "RNN_TANH": _rnn_step(_tanh),
    "RNN_RELU": _rnn_step(_pw.relu),
    "LSTM": _lstm_step,
    "GRU": _gru_step,
}


# ---------------------------------------------------------------- public cells
def rnn_tanh_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """One Elman step with ``tanh``. Mirrors: ``torch.rnn_tanh_cell``."""
    return STEPS["RNN_TANH"](linear(input, w_ih, b_ih), hx, w_hh, b_hh)


def rnn_relu_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """One Elman step with ``relu``. Mirrors: ``torch.rnn_relu_cell``."""
    return STEPS["RNN_RELU"](linear(input, w_ih, b_ih), hx, w_hh, b_hh)


def lstm_cell(
    input: Tensor,
    hx: Sequence[Tensor],
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """One LSTM step: ``(h', c')``. Mirrors: ``torch.lstm_cell``."""
    return _lstm_step(linear(input, w_ih, b_ih), tuple(hx), w_hh, b_hh)


def gru_cell(
    input: Tensor,
    hx: Tensor,
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> Tensor:
    """One GRU step. Mirrors: ``torch.gru_cell``."""
    return _gru_step(linear(input, w_ih, b_ih), hx, w_hh, b_hh)


# ---------------------------------------------------------------- the time loop
def _direction(
    mode: str, x: Tensor, state: Any, weights: Sequence[Any], reverse: bool
) -> tuple[Tensor, Any]:
    """Run one layer in one direction over ``x: [T, N, I]``; returns ``([T, N, H], state)``."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    xw = linear(x, w_ih, b_ih).unbind(0)  # type: ignore[attr-defined]
    step = STEPS[mode]
    order = range(len(xw) - 1, -1, -1) if reverse else range(len(xw))
    outs: list[Tensor] = [None] * len(xw)  # type: ignore[list-item]
    for t in order:
        if mode == "LSTM":
            state = step(xw[t], state, w_hh, b_hh, w_hr)
            outs[t] = state[0]
        else:
            state = step(xw[t], state, w_hh, b_hh)
            outs[t] = state
    return _shape.stack(outs, 0), state


def run_layers(
    mode: str,
    x: Tensor,
    hx: Any,
    layer_weights: Sequence[Sequence[Any]],
    num_layers: int,
    bidirectional: bool,
    dropout_p: float,
    training: bool,
) -> tuple[Tensor, Any]:
    """The stacked (optionally bidirectional) recurrence over ``x: [T, N, I]``.

    `hx` is ``h0`` (``[L*D, N, H]``) or ``(h0, c0)`` for LSTM; `layer_weights` lists
    ``(w_ih, w_hh, b_ih, b_hh, w_hr)`` per layer and direction (None where absent). Returns the
    last layer's outputs ``[T, N, D*H]`` and the final states stacked like `hx`.
    """
    dirs = 2 if bidirectional else 1
    finals: list[Any] = []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            state = (hx[0][k], hx[1][k]) if mode == "LSTM" else hx[k]
            out, state = _direction(mode, x, state, layer_weights[k], d == 1)
            outs.append(out)
            finals.append(state)
        x = outs[0] if dirs == 1 else _shape.cat(outs, 2)
        if dropout_p and training and layer < num_layers - 1:
            x = dropout(x, dropout_p, True)
    if mode == "LSTM":
        return x, (_shape.stack([s[0] for s in finals], 0), _shape.stack([s[1] for s in finals], 0))
    return x, _shape.stack(finals, 0)
