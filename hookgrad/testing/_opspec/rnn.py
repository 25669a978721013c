"""OpSpecs: the recurrent primitives of ``_ops/rnn.py`` and the ``_VF``-style functions.

- ``mkldnn_rnn_layer`` directly (float32 samples: PyTorch's oneDNN kernel has no float64; the
  gradient checks run it in float64 in hookgrad only). PyTorch has no forward-AD formula for
  it, so neither the forward-AD comparison nor the adjoint check applies.
- ``lstm`` on float32 (one fused layer per layer and direction) and float64 (PyTorch's per-step
  composition), ``gru`` and ``rnn_tanh``/``rnn_relu`` with ``batch_first`` (``unsafe_split``,
  the ``TransposeBackward1`` of the output), and the single-step cells.

Sizes are tiny (``T=3, N=2, IN=2, H=2``): the second-order checks are the full ones.
"""

from __future__ import annotations

from typing import Any

from hookgrad.testing._opspec import Arg, OpSpec, Sample

T, N, IN, H = 3, 2, 2, 2  # steps, batch, input size, hidden size


def _w(*shape: int, dtype: str = "float64", requires_grad: bool = True) -> Arg:
    return Arg(shape, low=-1.0, high=1.0, dtype=dtype, requires_grad=requires_grad)


def _layer(lib: Any, x: Any, w0: Any, w1: Any, w2: Any, w3: Any, hx: Any, cx: Any,
           reverse: bool = False, has_biases: bool = True) -> Any:
    out = lib.mkldnn_rnn_layer(x, w0, w1, w2, w3, hx, cx, reverse, [], 2, H, 1, has_biases,
                               False, False, True)
    return out[:3]  # the workspace is each library's own bytes


def _layer_args(dtype: str = "float32", biases: bool = True, x_grad: bool = True,
                states_grad: bool = True) -> tuple[Arg, ...]:
    bias = (_w(4 * H, dtype=dtype), _w(4 * H, dtype=dtype)) if biases else (
        Arg((4 * H, IN), value=None, dtype=dtype, requires_grad=False, low=0.0, high=0.0),
        Arg((4 * H, H), value=None, dtype=dtype, requires_grad=False, low=0.0, high=0.0))
    return (_w(T, N, IN, dtype=dtype, requires_grad=x_grad), _w(4 * H, IN, dtype=dtype),
            _w(4 * H, H, dtype=dtype), *bias, _w(N, H, dtype=dtype, requires_grad=states_grad),
            _w(N, H, dtype=dtype, requires_grad=states_grad))


def _flat_params(num_layers: int, dirs: int, gates: int, bias: bool, dtype: str) -> list[Arg]:
    out = []
    for layer in range(num_layers):
        for _ in range(dirs):
            size = IN if layer == 0 else H * dirs
            out += [_w(gates * H, size, dtype=dtype), _w(gates * H, H, dtype=dtype)]
            if bias:
                out += [_w(gates * H, dtype=dtype), _w(gates * H, dtype=dtype)]
    return out


def _lstm(lib: Any, x: Any, h0: Any, c0: Any, *params: Any, **kw: Any) -> Any:
    return lib.lstm(x, (h0, c0), list(params), kw.get("has_biases", True),
                    kw.get("num_layers", 1), 0.0, True, kw.get("bidirectional", False),
                    kw.get("batch_first", False))


def _one_hidden(name: str) -> Any:
    def fn(lib: Any, x: Any, h0: Any, *params: Any, **kw: Any) -> Any:
        return getattr(lib, name)(x, h0, list(params), kw.get("has_biases", True),
                                  kw.get("num_layers", 1), 0.0, True,
                                  kw.get("bidirectional", False), kw.get("batch_first", False))

    return fn


def _lstm_sample(name: str, dtype: str, num_layers: int = 1, bidirectional: bool = False,
                 batch_first: bool = False, bias: bool = True) -> Sample:
    dirs = 2 if bidirectional else 1
    x = _w(N, T, IN, dtype=dtype) if batch_first else _w(T, N, IN, dtype=dtype)
    states = (_w(num_layers * dirs, N, H, dtype=dtype), _w(num_layers * dirs, N, H, dtype=dtype))
    kw = {"has_biases": bias, "num_layers": num_layers, "bidirectional": bidirectional,
          "batch_first": batch_first}
    return Sample((x, *states, *_flat_params(num_layers, dirs, 4, bias, dtype)), kw, name)


def _hidden_sample(name: str, gates: int, num_layers: int = 1, bidirectional: bool = False,
                   batch_first: bool = False, bias: bool = True) -> Sample:
    dirs = 2 if bidirectional else 1
    x = _w(N, T, IN) if batch_first else _w(T, N, IN)
    kw = {"has_biases": bias, "num_layers": num_layers, "bidirectional": bidirectional,
          "batch_first": batch_first}
    return Sample((x, _w(num_layers * dirs, N, H), *_flat_params(num_layers, dirs, gates, bias,
                                                                  "float64")), kw, name)


def _cell(name: str) -> Any:
    def fn(lib: Any, x: Any, h: Any, *rest: Any) -> Any:
        if name == "lstm_cell":
            return getattr(lib, name)(x, (h, rest[0]), *rest[1:])
        return getattr(lib, name)(x, h, *rest)

    return fn


def _cell_samples(gates: int, lstm: bool = False) -> list[Sample]:
    state = (_w(N, H), _w(N, H)) if lstm else (_w(N, H),)
    weights = (_w(gates * H, IN), _w(gates * H, H))
    return [
        Sample((_w(N, IN), *state, *weights, _w(gates * H), _w(gates * H)), {}, "bias"),
        Sample((_w(N, IN), *state, *weights), {}, "no_bias"),
    ]


_TOL = {"atol": 1e-5, "rtol": 1e-4}

SPECS = [
    OpSpec("mkldnn_rnn_layer", _layer, prims=("mkldnn_rnn_layer",), forward_ad=False, **_TOL,
           samples=[
               Sample(_layer_args(), {}, "forward"),
               Sample(_layer_args(), {"reverse": True}, "reverse"),
               Sample(_layer_args(biases=False), {"has_biases": False}, "no_bias"),
               Sample(_layer_args(x_grad=False, states_grad=False), {}, "weights_only"),
           ]),
    # float64 checks of these would run PyTorch's composition, which "lstm" covers
    OpSpec("lstm_fused", _lstm, prims=("mkldnn_rnn_layer",), forward_ad=False, gradcheck=False,
           gradgradcheck=False, **_TOL, samples=[
               _lstm_sample("f32", "float32"),
               _lstm_sample("f32_stacked_bidir", "float32", num_layers=2, bidirectional=True),
               _lstm_sample("f32_batch_first_no_bias", "float32", batch_first=True, bias=False),
           ]),
    OpSpec("lstm", _lstm, prims=("unsafe_split",), samples=[
        _lstm_sample("f64", "float64"),
        _lstm_sample("f64_bidir_batch_first", "float64", bidirectional=True, batch_first=True),
    ]),
    OpSpec("gru", _one_hidden("gru"), prims=("unsafe_split", "_rnn_transpose_"), samples=[
        _hidden_sample("plain", 3),
        _hidden_sample("bidir_batch_first", 3, bidirectional=True, batch_first=True),
    ]),
    OpSpec("gru_stacked", _one_hidden("gru"), gradgradcheck=False, samples=[  # slow: 1st order
        _hidden_sample("stacked_bidir", 3, num_layers=2, bidirectional=True),
    ]),
    OpSpec("rnn_tanh", _one_hidden("rnn_tanh"), prims=("_rnn_transpose_",), samples=[
        _hidden_sample("batch_first", 1, batch_first=True),
        _hidden_sample("no_bias", 1, bias=False),
    ]),
    OpSpec("rnn_relu", _one_hidden("rnn_relu"), samples=[_hidden_sample("plain", 1)]),
    OpSpec("lstm_cell", _cell("lstm_cell"), prims=("unsafe_split",),
           samples=_cell_samples(4, lstm=True)),
    OpSpec("gru_cell", _cell("gru_cell"), prims=("unsafe_split",), samples=_cell_samples(3)),
    OpSpec("rnn_tanh_cell", _cell("rnn_tanh_cell"), samples=_cell_samples(1)),
    OpSpec("rnn_relu_cell", _cell("rnn_relu_cell"), samples=_cell_samples(1)),
]
