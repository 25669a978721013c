"""Ops, layers, losses and tensor methods crossed with bad operands in the bad-input corpus
(see `_bad_inputs` for the contract)."""

from __future__ import annotations

from tests.fuzz._bad_inputs import _add
from tests.fuzz._bad_ops import _x

_F = lambda lib: lib.nn.functional  # noqa: E731

# ---------------------------------------------------------------------------- unary x operands
_UNARY = ("exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "neg", "sqrt", "floor",
          "round", "sign", "erf", "log1p", "expm1", "reciprocal", "rsqrt", "square", "trunc",
          "isnan", "isfinite", "nan_to_num", "flatten", "t", "clone", "numel", "softmax",
          "argmax", "sum")
_BAD_OPERANDS = {
    "str": "a", "none": None, "list_of_str": ["a", "b"], "dict": {"a": 1}, "object": "@obj",
    "bytes": b"ab", "nested_list": [[1.0, 2.0]], "float": 1.5,
}


def _operand(v):
    return object() if v == "@obj" else v


for _op in _UNARY:
    for _bk, _bv in _BAD_OPERANDS.items():
        def _unary(lib, op=_op, bv=_bv):
            fn = getattr(lib, op)
            return fn(_operand(bv), 0) if op in ("softmax",) else fn(_operand(bv))
        _add(f"unary[{_op},{_bk}]", _unary)

# ---------------------------------------------------------------------------- binary x operands
_BINARY_FNS = ("add", "sub", "mul", "div", "true_divide", "pow", "maximum", "minimum", "eq",
               "ne", "lt", "ge", "logical_and", "logical_or", "atan2", "hypot", "remainder",
               "copysign", "matmul", "dot", "outer", "dist", "bitwise_and", "fmax", "ldexp")
_BAD_SECOND = {
    "str": "a", "none": None, "dict": {}, "object": "@obj", "bytes": b"a", "list_of_str": ["a"],
    "ragged": [[1.0], [1.0, 2.0]], "shape": "@shape", "bool_tensor": "@bool",
}


def _second(lib, v):
    if v == "@shape":
        return _x(lib, 5)
    if v == "@bool":
        return lib.tensor([True, False, True])
    return _operand(v)


for _op in _BINARY_FNS:
    for _bk, _bv in _BAD_SECOND.items():
        _add(f"binfn[{_op},{_bk}]",
             lambda lib, op=_op, bv=_bv: getattr(lib, op)(_x(lib, 3), _second(lib, bv)))
        _add(f"binfn_first[{_op},{_bk}]",
             lambda lib, op=_op, bv=_bv: getattr(lib, op)(_second(lib, bv), _x(lib, 3)))

# ---------------------------------------------------------------------------- layers x inputs
_LAYERS = {
    "Linear": lambda lib: lib.nn.Linear(3, 2),
    "Conv1d": lambda lib: lib.nn.Conv1d(2, 2, 2),
    "Conv2d": lambda lib: lib.nn.Conv2d(2, 2, 2),
    "MaxPool2d": lambda lib: lib.nn.MaxPool2d(2),
    "AvgPool1d": lambda lib: lib.nn.AvgPool1d(2),
    "BatchNorm1d": lambda lib: lib.nn.BatchNorm1d(2),
    "BatchNorm2d": lambda lib: lib.nn.BatchNorm2d(2),
    "LayerNorm": lambda lib: lib.nn.LayerNorm(3),
    "GroupNorm": lambda lib: lib.nn.GroupNorm(1, 2),
    "Embedding": lambda lib: lib.nn.Embedding(4, 2),
    "LSTM": lambda lib: lib.nn.LSTM(3, 2),
    "GRU": lambda lib: lib.nn.GRU(3, 2, batch_first=True),
    "RNN": lambda lib: lib.nn.RNN(3, 2),
    "Dropout": lambda lib: lib.nn.Dropout(0.5),
    "Softmax": lambda lib: lib.nn.Softmax(dim=1),
    "Flatten": lambda lib: lib.nn.Flatten(),
    "MultiheadAttention": lambda lib: lib.nn.MultiheadAttention(4, 2),
    "ConvTranspose2d": lambda lib: lib.nn.ConvTranspose2d(2, 2, 2),
    "Upsample": lambda lib: lib.nn.Upsample(scale_factor=2),
    "PixelShuffle": lambda lib: lib.nn.PixelShuffle(2),
}
_LAYER_INPUTS = {
    "scalar": lambda lib: lib.tensor(1.0),
    "1d": lambda lib: _x(lib, 3),
    "5d": lambda lib: _x(lib, 1, 2, 3, 3, 3),
    "int": lambda lib: lib.ones(2, 2, 3, 3, dtype=lib.int64),
    "float64": lambda lib: _x(lib, 2, 2, 3, dtype="float64"),
    "wrong_features": lambda lib: _x(lib, 2, 5, 5),
    "list": lambda lib: [[1.0, 2.0, 3.0]],
    "none": lambda lib: None,
    "empty_batch": lambda lib: _x(lib, 0, 2, 3),
}
for _lk, _lf in _LAYERS.items():
    for _ik, _if in _LAYER_INPUTS.items():
        def _layer(lib, lf=_lf, inp=_if, lk=_lk):
            lib.manual_seed(0)
            m = lf(lib)
            x = inp(lib)
            return m(x, x, x) if lk == "MultiheadAttention" else m(x)
        _add(f"layer[{_lk},{_ik}]", _layer)

# ---------------------------------------------------------------------------- losses x targets
_LOSSES = ("cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "huber_loss",
           "soft_margin_loss", "multi_margin_loss", "cosine_embedding_loss")
_TARGETS = {
    "shape": lambda lib: _x(lib, 5),
    "float_class": lambda lib: _x(lib, 2),
    "int_for_float": lambda lib: lib.tensor([[0, 1, 0], [1, 0, 1]]),
    "out_of_range": lambda lib: lib.tensor([0, 7]),
    "neg_class": lambda lib: lib.tensor([-3, 0]),
    "list": lambda lib: [0, 1],
    "none": lambda lib: None,
    "3d": lambda lib: _x(lib, 2, 3, 4),
}
for _lo in _LOSSES:
    for _tk, _tf in _TARGETS.items():
        def _loss(lib, lo=_lo, tf=_tf):
            inp = _x(lib, 2, 3).sigmoid() if lo == "binary_cross_entropy" else _x(lib, 2, 3)
            if lo == "cosine_embedding_loss":
                return _F(lib).cosine_embedding_loss(inp, inp, tf(lib))
            return getattr(_F(lib), lo)(inp, tf(lib))
        _add(f"loss[{_lo},{_tk}]", _loss)
    _add(f"loss[{_lo},reduction]",
         lambda lib, lo=_lo: (_F(lib).cosine_embedding_loss(_x(lib, 2, 3), _x(lib, 2, 3),
                                                           lib.tensor([1, -1]), reduction="x")
                              if lo == "cosine_embedding_loss" else
                              getattr(_F(lib), lo)(_x(lib, 2, 3).sigmoid(),
                                                   lib.tensor([0, 1]) if lo in (
                                                       "cross_entropy", "nll_loss",
                                                       "multi_margin_loss") else
                                                   _x(lib, 2, 3).sigmoid(), reduction="x")))

# ---------------------------------------------------------------------------- methods x args
_METHODS = {
    "view": lambda t, a: t.view(a), "reshape": lambda t, a: t.reshape(a),
    "permute": lambda t, a: t.permute(a), "expand": lambda t, a: t.expand(a),
    "repeat": lambda t, a: t.repeat(a), "transpose": lambda t, a: t.transpose(a, 0),
    "squeeze": lambda t, a: t.squeeze(a), "unsqueeze": lambda t, a: t.unsqueeze(a),
    "flip": lambda t, a: t.flip(a), "roll": lambda t, a: t.roll(a),
    "narrow": lambda t, a: t.narrow(0, a, 1), "select": lambda t, a: t.select(0, a),
    "split": lambda t, a: t.split(a), "chunk": lambda t, a: t.chunk(a),
    "topk": lambda t, a: t.topk(a), "index_select": lambda t, a: t.index_select(0, a),
    "fill_": lambda t, a: t.clone().fill_(a), "masked_fill": lambda t, a: t.masked_fill(a, 1.0),
    "new_zeros": lambda t, a: t.new_zeros(a), "new_full": lambda t, a: t.new_full(a, 1.0),
    "to": lambda t, a: t.to(a), "type_as": lambda t, a: t.type_as(a),
    "view_as": lambda t, a: t.view_as(a), "expand_as": lambda t, a: t.expand_as(a),
}
_METHOD_ARGS = {
    "str": "a", "none": None, "float": 1.5, "float_tuple": (1.5, 2.0), "list_str": ["a"],
    "dict": {}, "tensor_2d": "@t2", "object": "@obj",
}


def _marg(lib, v):
    if v == "@t2":
        return _x(lib, 2, 2)
    return _operand(v)


for _mk, _mf in _METHODS.items():
    for _ak, _av in _METHOD_ARGS.items():
        _add(f"method[{_mk},{_ak}]", lambda lib, mf=_mf, av=_av: mf(_x(lib, 2, 3),
                                                                   _marg(lib, av)))

# ---------------------------------------------------------------------------- creation x data
_CREATORS = {
    "tensor": lambda lib, d: lib.tensor(d),
    "as_tensor": lambda lib, d: lib.as_tensor(d),
    "new_tensor": lambda lib, d: _x(lib, 2).new_tensor(d),
    "tensor_float64": lambda lib, d: lib.tensor(d, dtype=lib.float64),
    "tensor_int": lambda lib, d: lib.tensor(d, dtype=lib.int32),
    "tensor_bool": lambda lib, d: lib.tensor(d, dtype=lib.bool),
}
_DATA = {
    "generator": "@gen", "range": range(3), "tuple_nested": ((1, 2), (3, 4)),
    "tensors_and_numbers": "@tn", "nested_tensor_list": "@ntl", "tensor_rg_list": "@trg",
    "np_longdouble": "@ld", "np_scalar_list": "@nsl", "deque": "@deque",
    "array_module": "@array", "mixed_depth": [[1, 2], 3], "str_number": ["1.5"],
    "nan_to_int": [float("nan")], "inf_to_int": [float("inf")], "big_float": [1e300],
    "neg_to_uint": [-1], "bool_and_float": [True, 2.5], "none_only": [None, None],
    "empty_nested": [[], []], "dict_values": "@dv",
}


def _data(lib, v):
    import array
    import collections

    import numpy as np

    table = {
        "@gen": lambda: (i for i in range(3)), "@tn": lambda: [lib.tensor(1.0), 2],
        "@ntl": lambda: [[lib.tensor([1.0])]], "@trg": lambda: [_x(lib, 1, rg=True)[0], 1.0],
        "@ld": lambda: np.array([1.0], dtype=np.longdouble),
        "@nsl": lambda: [np.float32(1.0), np.int64(2)],
        "@deque": lambda: collections.deque([1, 2]), "@array": lambda: array.array("d", [1.0]),
        "@dv": lambda: {1: 2}.values(),
    }
    return table[v]() if isinstance(v, str) and v in table else v


for _ck, _cf in _CREATORS.items():
    for _dk, _dv in _DATA.items():
        _add(f"create[{_ck},{_dk}]", lambda lib, cf=_cf, dv=_dv: cf(lib, _data(lib, dv)))
