"""The recurrent functions behind `RNN`, `LSTM`, `GRU` and their cells, shaped like ATen's.

``lstm``, ``gru``, ``rnn_tanh``, ``rnn_relu`` and the ``*_cell`` functions mirror the
``torch._VF`` functions the modules call, and build the graph PyTorch 2.13 builds on the CPU:

- ``lstm`` on float32 CPU input without projections runs each layer and direction as one fused
  ``mkldnn_rnn_layer`` (node ``MkldnnRnnLayerBackward0``; see `hookgrad._ops.rnn`): the input
  is made time-major and contiguous, the initial states are selected per layer (``hx[k]``),
  directions are concatenated on the last dim, and the final states are stacked.
- everything else (GRU, RNN, LSTM on other dtypes or with ``proj_size``) is ATen's per-step
  composition: the input projection of a whole layer is one ``linear`` over ``[T, N, I]`` then
  ``unbind(0)``; each step adds ``linear(h, W_hh, b_hh)`` to its slice of it; gate chunks are
  ``unsafe_split`` pieces; per-layer outputs are stacked, directions concatenated, final states
  unbound from ``hx`` and stacked again. Between layers (training) ``dropout`` multiplies by a
  mask (``MulBackward0``, as ATen's CPU dropout). A batch-first output is transposed back
  (in place, ``TransposeBackward1``, for RNN/GRU; out of place for LSTM).

Gate order and formulas are PyTorch's:
- RNN: ``h' = act(h W_hh^T + b_hh + x W_ih^T + b_ih)``
- LSTM: gates ``i, f, g, o``; ``c' = f * c + i * g``, ``h' = o * tanh(c')`` (then
  ``h' W_hr^T`` with a projection)
- GRU: gates ``r, z, n``; ``n = tanh(x_n + (h W_hn^T + b_hn) * r)``, ``h' = (h - n) * z + n``
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from hookgrad._functional import creation as _creation
from hookgrad._functional import pointwise as _pw
from hookgrad._functional import shape as _shape
from hookgrad._ops import rnn as _rnn
from hookgrad._tensor import Tensor
from hookgrad.nn.functional import dropout, linear

__all__ = [
    "lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell",
    "rnn_relu_cell",
]

Params = Sequence[Any]  # (w_ih, w_hh, b_ih | None, b_hh | None, w_hr | None) of one layer
_WARNED: set = set()


# ---------------------------------------------------------------- one step (ATen's cells)
def _tanh(x: Tensor) -> Tensor:
    return x.tanh()  # type: ignore[attr-defined]


def _lstm_gates(gates: Tensor, c: Tensor, w_hr: Tensor | None) -> tuple[Tensor, Tensor]:
    i, f, g, o = _rnn.unsafe_split(gates, gates.shape[1] // 4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()  # type: ignore[attr-defined]
    c2 = f * c + i * g
    h2 = o * c2.tanh()  # type: ignore[attr-defined]
    if w_hr is not None:
        h2 = h2.matmul(w_hr.t())  # type: ignore[attr-defined]
    return h2, c2


def _gru_gates(ig: Sequence[Tensor], hg: Sequence[Tensor], h: Tensor) -> Tensor:
    r = (hg[0] + ig[0]).sigmoid()  # type: ignore[attr-defined]
    z = (hg[1] + ig[1]).sigmoid()  # type: ignore[attr-defined]
    n = (ig[2] + hg[2] * r).tanh()  # type: ignore[attr-defined]
    return (h - n) * z + n


def _thirds(t: Tensor) -> tuple:
    return _rnn.unsafe_split(t, t.shape[1] // 3, 1)


def _simple_step(act: Callable[[Tensor], Tensor]) -> Callable[..., Tensor]:
    def step(xw: Tensor, h: Tensor, p: Params) -> Tensor:
        return act(linear(h, p[1], p[3]) + xw)

    return step


def _lstm_step(xw: Tensor, state: tuple, p: Params) -> tuple[Tensor, Tensor]:
    return _lstm_gates(linear(state[0], p[1], p[3]) + xw, state[1], p[4])


def _gru_step(xw: Tensor, h: Tensor, p: Params) -> Tensor:
    ig = _thirds(xw)
    return _gru_gates(ig, _thirds(linear(h, p[1], p[3])), h)


_STEPS: dict[str, Callable[..., Any]] = {
    "RNN_TANH": _simple_step(_tanh),
    "RNN_RELU": _simple_step(_pw.relu),
    "LSTM": _lstm_step,
    "GRU": _gru_step,
}


# ---------------------------------------------------------------- public cells
def _check_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor) -> None:
    """ATen's ``check_rnn_cell_forward_input`` / ``_hidden`` (same messages)."""
    if input.dim() == 2 and input.size(1) != w_ih.size(1):
        raise RuntimeError(
            f"input has inconsistent input_size: got {input.size(1)} expected {w_ih.size(1)}"
        )
    for k, h in enumerate(hx):
        if input.size(0) != h.size(0):
            raise RuntimeError(
                f"Input batch size {input.size(0)} doesn't match hidden{k} batch size {h.size(0)}"
            )
        if h.size(1) != w_hh.size(1):
            raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {h.size(1)}, "
                               f"expected {w_hh.size(1)}")


def _simple_cell(act: Callable[[Tensor], Tensor], input: Tensor, hx: Tensor, w_ih: Tensor,
                 w_hh: Tensor, b_ih: Tensor | None, b_hh: Tensor | None) -> Tensor:
    _check_cell(input, [hx], w_ih, w_hh)
    hh = linear(hx, w_hh, b_hh)  # ATen projects the state first, then the input
    return act(hh + linear(input, w_ih, b_ih))


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One Elman step with ``tanh``. Mirrors: ``torch.rnn_tanh_cell``."""
    return _simple_cell(_tanh, input, hx, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One Elman step with ``relu``. Mirrors: ``torch.rnn_relu_cell``."""
    return _simple_cell(_pw.relu, input, hx, w_ih, w_hh, b_ih, b_hh)


def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor,
              b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """One LSTM step: ``(h', c')``. Mirrors: ``torch.lstm_cell``."""
    h, c = hx
    _check_cell(input, [h, c], w_ih, w_hh)
    hh = linear(h, w_hh, b_hh)
    return _lstm_gates(hh + linear(input, w_ih, b_ih), c, None)


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
             b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One GRU step. Mirrors: ``torch.gru_cell``."""
    _check_cell(input, [hx], w_ih, w_hh)
    ig = _thirds(linear(input, w_ih, b_ih))
    return _gru_gates(ig, _thirds(linear(hx, w_hh, b_hh)), hx)


# ---------------------------------------------------------------- the per-step composition
def _layer(mode: str, x: Tensor, state: Any, p: Params, reverse: bool) -> tuple[Tensor, Any]:
    """ATen's ``FullLayer`` / ``ReversedFullLayer`` on ``x [T, N, I]``: ``([T, N, H], state)``."""
    xw = linear(x, p[0], p[2]).unbind(0)  # type: ignore[attr-defined]
    step = _STEPS[mode]
    outs: list = [None] * len(xw)
    for t in range(len(xw) - 1, -1, -1) if reverse else range(len(xw)):
        state = step(xw[t], state, p)
        outs[t] = state[0] if mode == "LSTM" else state
    return _shape.stack(outs, 0), state


def _group(params: Sequence[Tensor], has_biases: bool, has_proj: bool, count: int) -> list:
    """The flat weight list as ``(w_ih, w_hh, b_ih, b_hh, w_hr)`` per layer and direction."""
    per = 2 + 2 * has_biases + has_proj
    if len(params) != per * count:
        raise RuntimeError(f"expected {per * count} parameters, got {len(params)}")
    out = []
    for k in range(count):
        w = list(params[k * per : (k + 1) * per])
        b = (w[2], w[3]) if has_biases else (None, None)
        out.append((w[0], w[1], *b, w[-1] if has_proj else None))
    return out


def _between_layers(x: Tensor, layer: int, num_layers: int, p: float, train: bool) -> Tensor:
    if p and train and layer < num_layers - 1:
        return dropout(x, p, True)
    return x


def _stacked(mode: str, x: Tensor, states: list, weights: list, num_layers: int, p: float,
             train: bool, dirs: int) -> tuple[Tensor, list]:
    """ATen's ``apply_layer_stack``: every layer (and direction); the final states in order."""
    finals = []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            out, state = _layer(mode, x, states[k], weights[k], d == 1)
            outs.append(out)
            finals.append(state)
        x = outs[0] if dirs == 1 else _shape.cat(outs, 2)
        x = _between_layers(x, layer, num_layers, p, train)
    return x, finals


def _check_length(input: Tensor, batch_first: bool) -> None:
    if input.size(1 if batch_first else 0) == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")


def _one_hidden(mode: str) -> Callable[..., tuple[Tensor, Tensor]]:
    def fn(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool,
           num_layers: int, dropout: float, train: bool, bidirectional: bool,
           batch_first: bool) -> tuple[Tensor, Tensor]:
        _check_length(input, batch_first)
        x = input.transpose(0, 1) if batch_first else input  # type: ignore[attr-defined]
        dirs = 2 if bidirectional else 1
        weights = _group(params, has_biases, False, num_layers * dirs)
        out, finals = _stacked(mode, x, list(hx.unbind(0)), weights,  # type: ignore[attr-defined]
                               num_layers, dropout, train, dirs)
        if batch_first:
            out = _rnn.transpose_(out, 0, 1)
        return out, _shape.stack(finals, 0)

    return fn


_rnn_tanh = _one_hidden("RNN_TANH")
_rnn_relu = _one_hidden("RNN_RELU")
_gru = _one_hidden("GRU")


def rnn_tanh(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool,
             num_layers: int, dropout: float, train: bool, bidirectional: bool,
             batch_first: bool) -> tuple[Tensor, Tensor]:
    """Multi-layer Elman RNN with ``tanh``: ``(output, h_n)``.

    Mirrors: ``torch.rnn_tanh`` (``_VF.rnn_tanh``; no packed-sequence overload).
    """
    return _rnn_tanh(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                     batch_first)


def rnn_relu(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool,
             num_layers: int, dropout: float, train: bool, bidirectional: bool,
             batch_first: bool) -> tuple[Tensor, Tensor]:
    """Multi-layer Elman RNN with ``relu``: ``(output, h_n)``.

    Mirrors: ``torch.rnn_relu`` (``_VF.rnn_relu``; no packed-sequence overload).
    """
    return _rnn_relu(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                     batch_first)


def gru(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool, num_layers: int,
        dropout: float, train: bool, bidirectional: bool,
        batch_first: bool) -> tuple[Tensor, Tensor]:
    """Multi-layer GRU: ``(output, h_n)``.

    Mirrors: ``torch.gru`` (``_VF.gru``; no packed-sequence overload).
    """
    return _gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                batch_first)


# ---------------------------------------------------------------- LSTM
def _use_fused(input: Tensor) -> bool:
    """ATen's ``use_mkldnn``: float32 on the CPU (oneDNN's other dtypes are not modelled)."""
    return input._data.dtype.name == "float32" and input.device.type == "cpu"


def _lstm_fused(input: Tensor, hx: Sequence[Tensor], weights: list, has_biases: bool,
                num_layers: int, p: float, train: bool, bidirectional: bool,
                batch_first: bool) -> tuple[Tensor, Tensor, Tensor]:
    """ATen's ``mkldnn_impl``: one ``mkldnn_rnn_layer`` per layer and direction."""
    x = input.transpose(0, 1) if batch_first else input  # type: ignore[attr-defined]
    x = x.contiguous()  # type: ignore[attr-defined]
    dirs = 2 if bidirectional else 1
    hidden = hx[1].size(2)
    hy, cy = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            w_ih, w_hh, b_ih, b_hh, _ = weights[k]
            if not has_biases:  # ATen passes zeros shaped like the weights
                b_ih, b_hh = _creation.zeros_like(w_ih), _creation.zeros_like(w_hh)
            out, h, c, _ = _rnn.mkldnn_rnn_layer(
                x, w_ih, w_hh, b_ih, b_hh, hx[0][k], hx[1][k], d == 1, (), _rnn.LSTM_MODE,
                hidden, num_layers, has_biases, bidirectional, batch_first, train)
            outs.append(out)
            hy.append(h)
            cy.append(c)
        x = outs[0] if dirs == 1 else _shape.cat(outs, -1)
        x = _between_layers(x, layer, num_layers, p, train)
    if batch_first:
        x = x.transpose(0, 1)  # type: ignore[attr-defined]
    return x, _shape.stack(hy, 0), _shape.stack(cy, 0)


def _warn_once(message: str) -> None:
    """``TORCH_WARN_ONCE``: once per process."""
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, UserWarning, stacklevel=4)


def lstm(input: Tensor, hx: Sequence[Tensor], params: Sequence[Tensor], has_biases: bool,
         num_layers: int, dropout: float, train: bool, bidirectional: bool,
         batch_first: bool) -> tuple[Tensor, Tensor, Tensor]:
    """Multi-layer LSTM: ``(output, h_n, c_n)``; `hx` is ``(h_0, c_0)``.

    Fused per layer on float32 CPU input without projections (see the module docstring).

    Mirrors: ``torch.lstm`` (``_VF.lstm``; no packed-sequence overload).
    """
    if len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    has_proj = hx[0].size(2) != hx[1].size(2)
    dirs = 2 if bidirectional else 1
    weights = _group(params, has_biases, has_proj, num_layers * dirs)
    _check_length(input, batch_first)
    if _use_fused(input):
        if not has_proj:
            return _lstm_fused(input, hx, weights, has_biases, num_layers, dropout, train,
                               bidirectional, batch_first)
        _warn_once("LSTM with projections is not supported with oneDNN. Using default "
                   "implementation.")
    x = input.transpose(0, 1) if batch_first else input  # type: ignore[attr-defined]
    states = list(zip(hx[0].unbind(0), hx[1].unbind(0), strict=True))  # type: ignore[attr-defined]
    out, finals = _stacked("LSTM", x, states, weights, num_layers, dropout, train, dirs)
    if batch_first:
        out = out.transpose(0, 1)  # type: ignore[attr-defined]
    return (out, _shape.stack([s[0] for s in finals], 0),
            _shape.stack([s[1] for s in finals], 0))
