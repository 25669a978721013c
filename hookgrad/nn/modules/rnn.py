"""Recurrent layers: `RNN`, `LSTM`, `GRU` and the cells `RNNCell`, `LSTMCell`, `GRUCell`.

Parameter names, shapes, registration order and initialisation are PyTorch's
(``weight_ih_l0``, ``weight_hh_l0``, ``bias_ih_l0``, ``bias_hh_l0``, ``weight_hr_l0``,
``..._reverse``), so state dicts load both ways. Forwards call the ``_VF``-style functions of
`hookgrad.nn._functional_rnn` (``lstm``, ``gru``, ``rnn_tanh``, ``rnn_relu``, the cells) with the
same arguments PyTorch's modules pass, so the graphs match PyTorch's.
``PackedSequence`` inputs run through `hookgrad.nn.utils._packed_rnn` (ATen's packed layers).
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from hookgrad._functional import creation as _creation
from hookgrad._tensor import Tensor
from hookgrad.nn import _functional_rnn as R
from hookgrad.nn import init
from hookgrad.nn.modules.module import Module
from hookgrad.nn.parameter import Parameter
from hookgrad.nn.utils._packed_rnn import forward_packed
from hookgrad.nn.utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _empty(*shape: int, dtype: Any = None) -> Parameter:
    return Parameter(_creation.empty(*shape, dtype=dtype))


def _check_config(
    input_size: Any,
    hidden_size: Any,
    num_layers: int,
    bias: Any,
    batch_first: Any,
    dropout: Any,
    proj_size: int,
) -> None:
    """PyTorch's constructor checks (same exception types and messages)."""
    if (
        not isinstance(dropout, numbers.Number)
        or isinstance(dropout, bool)
        or not 0 <= dropout <= 1
    ):  # type: ignore[operator]
        raise ValueError(
            "dropout should be a number in range [0, 1] representing the "
            "probability of an element being zeroed"
        )
    if dropout > 0 and num_layers == 1:  # type: ignore[operator]
        warnings.warn(
            "dropout option adds dropout after all but last recurrent layer, so "
            "non-zero dropout expects num_layers greater than 1, but got "
            f"dropout={dropout} and num_layers={num_layers}",
            stacklevel=4,
        )
    for name, value, kind in (
        ("bias", bias, bool),
        ("batch_first", batch_first, bool),
        ("input_size", input_size, int),
        ("hidden_size", hidden_size, int),
    ):
        if not isinstance(value, kind):
            raise TypeError(
                f"{name} should be of type {kind.__name__}, got: {type(value).__name__}"
            )
        if kind is int and value <= 0:
            raise ValueError(f"{name} must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


class RNNBase(Module):
    """Parameters, checks and the forward driver shared by `RNN`, `LSTM` and `GRU`.

    Mirrors: ``torch.nn.RNNBase`` (no ``PackedSequence``; ``flatten_parameters`` is a no-op).
    """

    __constants__ = [
        "mode",
        "input_size",
        "hidden_size",
        "num_layers",
        "bias",
        "batch_first",
        "dropout",
        "bidirectional",
        "proj_size",
    ]

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        _check_config(input_size, hidden_size, num_layers, bias, batch_first, dropout, proj_size)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(2 if bidirectional else 1):
                self._add_layer(layer, direction, dtype)
        self.reset_parameters()

    def _add_layer(self, layer: int, direction: int, dtype: Any) -> None:
        gate = _GATES[self.mode] * self.hidden_size
        real_hidden = self.proj_size or self.hidden_size
        dirs = 2 if self.bidirectional else 1
        layer_in = self.input_size if layer == 0 else real_hidden * dirs
        params = [("weight_ih_l{}{}", (gate, layer_in)), ("weight_hh_l{}{}", (gate, real_hidden))]
        if self.bias:
            params += [("bias_ih_l{}{}", (gate,)), ("bias_hh_l{}{}", (gate,))]
        if self.proj_size > 0:
            params += [("weight_hr_l{}{}", (self.proj_size, self.hidden_size))]
        suffix = "_reverse" if direction == 1 else ""
        names = []
        for fmt, shape in params:
            name = fmt.format(layer, suffix)
            setattr(self, name, _empty(*shape, dtype=dtype))
            names.append(name)
        self._flat_weights_names.extend(names)
        self._all_weights.append(names)

    @property
    def _flat_weights(self) -> list[Parameter]:
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters grouped per layer and direction."""
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """No-op (PyTorch compacts cuDNN weights here)."""

    def reset_parameters(self) -> None:
        """Every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _check_input(self, input: Tensor) -> None:
        w = self._flat_weights[0]
        if input.dtype != w.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). "
                f"Convert input: input.to({w.dtype}), or convert model: model.to({input.dtype})"
            )
        if self.input_size != input.size(-1):
            raise RuntimeError(
                "input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.size(-1)}"
            )

    def _check_hidden(self, hx: Tensor, expected: tuple, what: str = "hidden",
                      like: Tensor | None = None) -> None:
        if tuple(hx.shape) != expected:
            raise RuntimeError(f"Expected {what} size {expected}, got {list(hx.shape)}")
        if like is not None and hx.dtype != like.dtype:  # PyTorch's kernels refuse to mix them
            raise RuntimeError(f"Expected {what} to have the input's dtype "
                               f"{like.dtype.scalar_type}, got {hx.dtype.scalar_type}")

    def _zeros(self, batch: int, size: int, like: Tensor) -> Tensor:
        dirs = 2 if self.bidirectional else 1
        return _creation.zeros(self.num_layers * dirs, batch, size, dtype=like.dtype)

    def _run(self, input: Tensor, hx: Any) -> tuple:
        """``_VF.<mode>(input, hx, flat weights, ...)`` as PyTorch's modules call it."""
        fn = {"LSTM": R.lstm, "GRU": R.gru, "RNN_TANH": R.rnn_tanh, "RNN_RELU": R.rnn_relu}
        return fn[self.mode](
            input,
            hx,
            self._flat_weights,
            self.bias,
            self.num_layers,
            self.dropout,
            self.training,
            self.bidirectional,
            self.batch_first,
        )

    def _batched(self, input: Tensor, name: str) -> tuple[Tensor, bool]:
        if input.dim() not in (2, 3):
            raise ValueError(
                f"{name}: Expected input to be 2D or 3D, got {input.dim()}D tensor instead"
            )
        if input.dim() == 3:
            return input, True
        return input.unsqueeze(0 if self.batch_first else 1), False  # type: ignore[attr-defined]


class _SingleStateRNN(RNNBase):
    """`RNN` and `GRU`: one hidden-state tensor."""

    _label = "RNN"

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        if isinstance(input, PackedSequence):
            return forward_packed(self, input, hx)
        x, batched = self._batched(input, self._label)
        if hx is not None:
            want = 3 if batched else 2
            if hx.dim() != want:
                kind = "batched 3-D" if batched else "unbatched 2-D"
                raise RuntimeError(
                    f"For {kind} input, hx should also be {want}-D but got {hx.dim()}-D tensor"
                )
            if not batched:
                hx = hx.unsqueeze(1)  # type: ignore[attr-defined]
        batch = x.size(0) if self.batch_first else x.size(1)
        if hx is None:
            hx = self._zeros(batch, self.hidden_size, x)
        self._check_input(x)
        dirs = 2 if self.bidirectional else 1
        self._check_hidden(hx, (self.num_layers * dirs, batch, self.hidden_size), like=x)
        out, h = self._run(x, hx)
        if not batched:
            out = out.squeeze(0 if self.batch_first else 1)  # type: ignore[attr-defined]
            h = h.squeeze(1)  # type: ignore[attr-defined]
        return out, h


class RNN(_SingleStateRNN):
    """Elman RNN: ``h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``.

    Args:
        input_size, hidden_size: feature sizes.
        num_layers: stacked layers.
        nonlinearity: ``"tanh"`` or ``"relu"``.
        bias: learn ``b_ih`` and ``b_hh``.
        batch_first: inputs and outputs are ``[N, T, *]``.
        dropout: dropout between layers (training only).
        bidirectional: add a reverse-time direction.
        device, dtype: factory arguments.

    ``forward(input, h0=None) -> (output, h_n)`` with ``input [T, N, I]`` (or ``[T, I]``).

    Example:
        >>> import hookgrad as torch
        >>> out, h = torch.nn.RNN(3, 4, num_layers=2)(torch.randn(5, 2, 3))
        >>> out.shape, h.shape
        (torch.Size([5, 2, 4]), torch.Size([2, 2, 4]))

    Mirrors: ``torch.nn.RNN``.
    """

    _label = "RNN"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *args, **kwargs)


class GRU(_SingleStateRNN):
    """Gated recurrent unit (gates ``r, z, n`` in PyTorch's order and formulas).

    Args as `RNN` (no `nonlinearity`).

    Mirrors: ``torch.nn.GRU``.
    """

    _label = "GRU"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory (gates ``i, f, g, o``), optionally with a projection
    (``proj_size``, weight ``weight_hr_l{k}``).

    Args as `RNN` (no `nonlinearity`), plus ``proj_size``.

    ``forward(input, (h0, c0)=None) -> (output, (h_n, c_n))``.

    Example:
        >>> import hookgrad as torch
        >>> out, (h, c) = torch.nn.LSTM(3, 4, batch_first=True)(torch.randn(2, 5, 3))
        >>> out.shape, c.shape
        (torch.Size([2, 5, 4]), torch.Size([1, 2, 4]))

    Mirrors: ``torch.nn.LSTM`` (on float32 CPU input without projections, each layer and
    direction is one fused ``MkldnnRnnLayerBackward0`` node, as in PyTorch).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input: Any, hx: tuple | None = None) -> tuple[Any, tuple]:
        if isinstance(input, PackedSequence):
            return forward_packed(self, input, hx)
        x, batched = self._batched(input, "LSTM")
        if hx is not None:
            want = 3 if batched else 2
            if hx[0].dim() != want or hx[1].dim() != want:
                kind = "batched 3-D" if batched else "unbatched 2-D"
                raise RuntimeError(
                    f"For {kind} input, hx and cx should also be {want}-D but "
                    f"got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
                )
            if not batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))  # type: ignore[attr-defined]
        batch = x.size(0) if self.batch_first else x.size(1)
        real_hidden = self.proj_size or self.hidden_size
        if hx is None:
            hx = (self._zeros(batch, real_hidden, x), self._zeros(batch, self.hidden_size, x))
        self._check_input(x)
        layers = self.num_layers * (2 if self.bidirectional else 1)
        self._check_hidden(hx[0], (layers, batch, real_hidden), "hidden[0]", x)
        self._check_hidden(hx[1], (layers, batch, self.hidden_size), "hidden[1]", x)
        out, h, c = self._run(x, hx)
        if not batched:
            out = out.squeeze(0 if self.batch_first else 1)  # type: ignore[attr-defined]
            h, c = h.squeeze(1), c.squeeze(1)  # type: ignore[attr-defined]
        return out, (h, c)


# ---------------------------------------------------------------- cells
class RNNCellBase(Module):
    """Parameters ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh`` of the cells.

    Mirrors: ``torch.nn.RNNCellBase``.
    """

    __constants__ = ["input_size", "hidden_size", "bias"]
    _name = "RNNCell"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = _empty(num_chunks * hidden_size, input_size, dtype=dtype)
        self.weight_hh = _empty(num_chunks * hidden_size, hidden_size, dtype=dtype)
        if bias:
            self.bias_ih = _empty(num_chunks * hidden_size, dtype=dtype)
            self.bias_hh = _empty(num_chunks * hidden_size, dtype=dtype)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        """Every parameter from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input: Tensor, hx: Any, n_states: int) -> tuple[Tensor, Any, bool]:
        if input.dim() not in (1, 2):
            raise ValueError(
                f"{self._name}: Expected input to be 1D or 2D, got {input.dim()}D instead"
            )
        states = [] if hx is None else ([hx] if n_states == 1 else list(hx))
        for i, h in enumerate(states):
            if h.dim() not in (1, 2):
                what = "hidden" if n_states == 1 else f"hx[{i}]"
                raise ValueError(
                    f"{self._name}: Expected {what} to be 1D or 2D, got {h.dim()}D instead"
                )
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)  # type: ignore[attr-defined]
            states = [h.unsqueeze(0) for h in states]  # type: ignore[attr-defined]
        if not states:
            zeros = _creation.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
            states = [zeros] * n_states
        return input, states[0] if n_states == 1 else tuple(states), batched

    def _weights(self) -> tuple:
        return self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh


class RNNCell(RNNCellBase):
    """One Elman step: ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``.

    Args:
        input_size, hidden_size: feature sizes.
        bias: learn the biases.
        nonlinearity: ``"tanh"`` or ``"relu"``.
        device, dtype: factory arguments.

    Mirrors: ``torch.nn.RNNCell``.
    """

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, h, batched = self._prepare(input, hx, 1)
        if self.nonlinearity == "tanh":
            ret = R.rnn_tanh_cell(x, h, *self._weights())
        elif self.nonlinearity == "relu":
            ret = R.rnn_relu_cell(x, h, *self._weights())
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return ret if batched else ret.squeeze(0)  # type: ignore[attr-defined]


class LSTMCell(RNNCellBase):
    """One LSTM step: ``forward(input, (h, c)=None) -> (h', c')``.

    Args:
        input_size, hidden_size: feature sizes.
        bias: learn the biases.
        device, dtype: factory arguments.

    Mirrors: ``torch.nn.LSTMCell``.
    """

    _name = "LSTMCell"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple | None = None) -> tuple[Tensor, Tensor]:
        x, state, batched = self._prepare(input, hx, 2)
        h, c = R.lstm_cell(x, state, *self._weights())
        if not batched:
            return h.squeeze(0), c.squeeze(0)  # type: ignore[attr-defined]
        return h, c


class GRUCell(RNNCellBase):
    """One GRU step.

    Args:
        input_size, hidden_size: feature sizes.
        bias: learn the biases.
        device, dtype: factory arguments.

    Mirrors: ``torch.nn.GRUCell``.
    """

    _name = "GRUCell"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, h, batched = self._prepare(input, hx, 1)
        ret = R.gru_cell(x, h, *self._weights())
        return ret if batched else ret.squeeze(0)  # type: ignore[attr-defined]
