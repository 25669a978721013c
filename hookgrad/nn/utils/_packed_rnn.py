"""`RNN`, `LSTM` and `GRU` on a `PackedSequence` (ATen's ``PackedLayer``/``ReversedPackedLayer``).

At every time step the layer takes the ``batch_sizes[t]`` rows of that step. Forward in time,
when the batch shrinks the finished sequences' states are set aside (they are final); backward in
time, it starts from the shortest batch and grows the state with the initial states of the
sequences that join. Cells are the same per-step functions as the padded path
(`hookgrad.nn._functional_rnn`), so values and gradients equal PyTorch's.
"""

from __future__ import annotations

from typing import Any

from hookgrad._functional import creation as _creation
from hookgrad._functional import shape as _shape
from hookgrad._functional._gather import index_select
from hookgrad._tensor import Tensor
from hookgrad.nn._functional_rnn import _STEPS, _between_layers, _group
from hookgrad.nn.functional import linear
from hookgrad.nn.utils.rnn import PackedSequence

__all__ = ["forward_packed"]


def _slice(state: Any, start: int, end: int) -> Any:
    if isinstance(state, tuple):
        return tuple(s[start:end] for s in state)
    return state[start:end]


def _concat(states: list) -> Any:
    if isinstance(states[0], tuple):
        return tuple(_shape.cat([s[i] for s in states], 0) for i in range(len(states[0])))
    return _shape.cat(states, 0)


def _as_output(state: Any) -> Tensor:
    return state[0] if isinstance(state, tuple) else state


def _packed_layer(mode: str, data: Tensor, sizes: list[int], state: Any, p: Any) -> tuple:
    step = _STEPS[mode]
    finished: list = []
    outs: list = []
    offset, last = 0, sizes[0]
    for bs in sizes:
        x = data[offset:offset + bs]
        offset += bs
        if bs < last:
            finished.append(_slice(state, bs, last))
            state = _slice(state, 0, bs)
        last = bs
        state = step(linear(x, p[0], p[2]), state, p)
        outs.append(_as_output(state))
    finished.append(state)
    return _shape.cat(outs, 0), _concat(finished[::-1])


def _reversed_packed_layer(mode: str, data: Tensor, sizes: list[int], initial: Any,
                           p: Any) -> tuple:
    step = _STEPS[mode]
    outs: list = []
    last = sizes[-1]
    state = _slice(initial, 0, last)
    offset = data.size(0)
    for bs in reversed(sizes):
        if bs > last:
            state = _concat([state, _slice(initial, last, bs)])
        x = data[offset - bs:offset]
        offset -= bs
        last = bs
        state = step(linear(x, p[0], p[2]), state, p)
        outs.append(_as_output(state))
    return _shape.cat(outs[::-1], 0), state


def _permute(hx: Any, order: Tensor | None) -> Any:
    if order is None:
        return hx
    if isinstance(hx, tuple):
        return tuple(index_select(h, 1, order) for h in hx)
    return index_select(hx, 1, order)


def _initial(module: Any, batch: int, like: Tensor) -> Any:
    layers = module.num_layers * (2 if module.bidirectional else 1)
    if module.mode == "LSTM":
        real = module.proj_size or module.hidden_size
        return (_creation.zeros(layers, batch, real, dtype=like.dtype),
                _creation.zeros(layers, batch, module.hidden_size, dtype=like.dtype))
    return _creation.zeros(layers, batch, module.hidden_size, dtype=like.dtype)


def _check_hidden(module: Any, hx: Any, batch: int) -> None:
    layers = module.num_layers * (2 if module.bidirectional else 1)
    if module.mode == "LSTM":
        real = module.proj_size or module.hidden_size
        module._check_hidden(hx[0], (layers, batch, real), "hidden[0]")
        module._check_hidden(hx[1], (layers, batch, module.hidden_size), "hidden[1]")
    else:
        module._check_hidden(hx, (layers, batch, module.hidden_size))


def forward_packed(module: Any, input: PackedSequence, hx: Any) -> tuple[PackedSequence, Any]:
    """``module.forward`` on packed input: ``(packed output, final states)``, the states in the
    caller's batch order (PyTorch's ``permute_hidden``)."""
    data, batch_sizes, sorted_indices, unsorted_indices = input
    sizes = [int(v) for v in batch_sizes.tolist()]
    hx = _initial(module, sizes[0], data) if hx is None else _permute(hx, sorted_indices)
    module._check_input(data)
    _check_hidden(module, hx, sizes[0])
    dirs = 2 if module.bidirectional else 1
    mode = module.mode
    has_proj = mode == "LSTM" and bool(module.proj_size)
    weights = _group(module._flat_weights, module.bias, has_proj, module.num_layers * dirs)
    if mode == "LSTM":
        states = list(zip(hx[0].unbind(0), hx[1].unbind(0), strict=True))  # type: ignore
    else:
        states = list(hx.unbind(0))  # type: ignore[attr-defined]
    x, finals = data, []
    for layer in range(module.num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            run = _reversed_packed_layer if d == 1 else _packed_layer
            out, state = run(mode, x, sizes, states[k], weights[k])
            outs.append(out)
            finals.append(state)
        x = outs[0] if dirs == 1 else _shape.cat(outs, -1)
        x = _between_layers(x, layer, module.num_layers, module.dropout, module.training)
    if mode == "LSTM":
        hidden: Any = (_shape.stack([s[0] for s in finals], 0),
                       _shape.stack([s[1] for s in finals], 0))
    else:
        hidden = _shape.stack(finals, 0)
    output = PackedSequence(x, batch_sizes, sorted_indices, unsorted_indices)
    return output, _permute(hidden, unsorted_indices)
