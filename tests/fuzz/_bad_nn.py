"""nn layers in the bad-input corpus: constructors given bad arguments, and forward calls with
bad shapes, dtypes and extra inputs (masks, states, offsets); a failing forward must leave the
layer's parameters and buffers as PyTorch leaves them (see `_bad_inputs` for the contract)."""

from __future__ import annotations

import numpy as np

from tests.fuzz._bad_inputs import _add, _add_stateful
from tests.fuzz._bad_ops import _x

# ---------------------------------------------------------------------------- constructors
_CTORS = {
    "Linear[neg_in]": lambda lib: lib.nn.Linear(-1, 2),
    "Linear[neg_out]": lambda lib: lib.nn.Linear(2, -3),
    "Linear[float_in]": lambda lib: lib.nn.Linear(2.5, 2),
    "Linear[str_in]": lambda lib: lib.nn.Linear("a", 2),
    "Linear[dtype_int]": lambda lib: lib.nn.Linear(2, 2, dtype=lib.int64),
    "Bilinear[neg]": lambda lib: lib.nn.Bilinear(2, -2, 2),
    "Conv1d[groups_in]": lambda lib: lib.nn.Conv1d(3, 4, 2, groups=2),
    "Conv2d[groups_out]": lambda lib: lib.nn.Conv2d(4, 3, 2, groups=2),
    "Conv2d[groups_zero]": lambda lib: lib.nn.Conv2d(4, 4, 2, groups=0),
    "Conv2d[padding_str]": lambda lib: lib.nn.Conv2d(2, 2, 2, padding="nope"),
    "Conv2d[same_stride]": lambda lib: lib.nn.Conv2d(2, 2, 3, stride=2, padding="same"),
    "Conv2d[padding_mode]": lambda lib: lib.nn.Conv2d(2, 2, 2, padding_mode="nope"),
    "Conv2d[kernel_tuple3]": lambda lib: lib.nn.Conv2d(2, 2, (2, 2, 2)),
    "Conv2d[kernel_str]": lambda lib: lib.nn.Conv2d(2, 2, "a"),
    "Conv2d[neg_channels]": lambda lib: lib.nn.Conv2d(-2, 2, 2),
    "Conv3d[same_dilation_stride]": lambda lib: lib.nn.Conv3d(2, 2, 3, stride=2, padding="same",
                                                         dilation=2),
    "ConvTranspose2d[padding_mode]": lambda lib: lib.nn.ConvTranspose2d(2, 2, 2,
                                                                   padding_mode="reflect"),
    "ConvTranspose1d[groups]": lambda lib: lib.nn.ConvTranspose1d(3, 2, 2, groups=2),
    "Embedding[padding_idx]": lambda lib: lib.nn.Embedding(4, 2, padding_idx=5),
    "Embedding[padding_idx_neg]": lambda lib: lib.nn.Embedding(4, 2, padding_idx=-5),
    "Embedding[neg_num]": lambda lib: lib.nn.Embedding(-1, 2),
    "Embedding[weight_shape]": lambda lib: lib.nn.Embedding(4, 2, _weight=_x(lib, 3, 2)),
    "Embedding[from_pretrained_1d]": lambda lib: lib.nn.Embedding.from_pretrained(_x(lib, 4)),
    "EmbeddingBag[mode]": lambda lib: lib.nn.EmbeddingBag(4, 2, mode="nope"),
    "EmbeddingBag[padding_idx]": lambda lib: lib.nn.EmbeddingBag(4, 2, padding_idx=9),
    "LSTM[dropout_big]": lambda lib: lib.nn.LSTM(3, 2, dropout=1.5),
    "LSTM[dropout_str]": lambda lib: lib.nn.LSTM(3, 2, dropout="a"),
    "LSTM[hidden_zero]": lambda lib: lib.nn.LSTM(3, 0),
    "LSTM[layers_zero]": lambda lib: lib.nn.LSTM(3, 2, num_layers=0),
    "LSTM[layers_float]": lambda lib: lib.nn.LSTM(3, 2, num_layers=1.5),
    "LSTM[proj_big]": lambda lib: lib.nn.LSTM(3, 2, proj_size=2),
    "LSTM[proj_neg]": lambda lib: lib.nn.LSTM(3, 2, proj_size=-1),
    "GRU[proj]": lambda lib: lib.nn.GRU(3, 2, proj_size=1),
    "RNN[nonlinearity]": lambda lib: lib.nn.RNN(3, 2, nonlinearity="gelu"),
    "RNN[hidden_float]": lambda lib: lib.nn.RNN(3, 2.5),
    "RNNCell[nonlinearity]": lambda lib: lib.nn.RNNCell(3, 2, nonlinearity="nope"),
    "MultiheadAttention[heads]": lambda lib: lib.nn.MultiheadAttention(5, 2),
    "MultiheadAttention[zero_dim]": lambda lib: lib.nn.MultiheadAttention(0, 1),
    "TransformerEncoderLayer[heads]": lambda lib: lib.nn.TransformerEncoderLayer(5, 2),
    "TransformerEncoderLayer[activation]": lambda lib: lib.nn.TransformerEncoderLayer(
        4, 2, activation="nope"),
    "Transformer[heads]": lambda lib: lib.nn.Transformer(d_model=6, nhead=4, num_encoder_layers=1,
                                                   num_decoder_layers=1),
    "GroupNorm[groups]": lambda lib: lib.nn.GroupNorm(3, 4),
    "GroupNorm[zero]": lambda lib: lib.nn.GroupNorm(0, 4),
    "Dropout[p_big]": lambda lib: lib.nn.Dropout(1.5),
    "Dropout[p_neg]": lambda lib: lib.nn.Dropout(-0.1),
    "Dropout2d[p_big]": lambda lib: lib.nn.Dropout2d(2.0),
    "AlphaDropout[p_neg]": lambda lib: lib.nn.AlphaDropout(-1.0),
    "Dropout[p_str]": lambda lib: lib.nn.Dropout("a"),
    "Upsample[mode]": lambda lib: lib.nn.Upsample(scale_factor=2, mode="nope")(_x(lib, 1, 1, 2, 2)),
    "Upsample[both]": lambda lib: lib.nn.Upsample(size=2, scale_factor=2)(_x(lib, 1, 1, 2)),
    "Upsample[neither]": lambda lib: lib.nn.Upsample()(_x(lib, 1, 1, 2)),
    "PixelShuffle[zero]": lambda lib: lib.nn.PixelShuffle(0)(_x(lib, 1, 4, 2, 2)),
    "PixelUnshuffle[indivisible]": lambda lib: lib.nn.PixelUnshuffle(2)(_x(lib, 1, 1, 3, 3)),
    "Softmax[dim_range]": lambda lib: lib.nn.Softmax(dim=3)(_x(lib, 2, 2)),
    "Flatten[dims]": lambda lib: lib.nn.Flatten(2, 1)(_x(lib, 2, 2, 2)),
    "Unflatten[sizes]": lambda lib: lib.nn.Unflatten(1, (3, 3))(_x(lib, 2, 4)),
    "Unflatten[dim]": lambda lib: lib.nn.Unflatten(5, (2, 2))(_x(lib, 2, 4)),
    "MaxPool2d[pad_big]": lambda lib: lib.nn.MaxPool2d(2, padding=2)(_x(lib, 1, 1, 4, 4)),
    "MaxPool2d[stride_zero]": lambda lib: lib.nn.MaxPool2d(2, stride=0)(_x(lib, 1, 1, 4, 4)),
    "MaxPool1d[kernel_zero]": lambda lib: lib.nn.MaxPool1d(0)(_x(lib, 1, 1, 4)),
    "AvgPool2d[kernel_big]": lambda lib: lib.nn.AvgPool2d(5)(_x(lib, 1, 1, 4, 4)),
    "AvgPool1d[pad_big]": lambda lib: lib.nn.AvgPool1d(2, padding=3)(_x(lib, 1, 1, 4)),
    "AdaptiveAvgPool2d[neg]": lambda lib: lib.nn.AdaptiveAvgPool2d(-1)(_x(lib, 1, 1, 4, 4)),
    "AdaptiveMaxPool1d[too_many]": lambda lib: lib.nn.AdaptiveMaxPool1d((2, 2))(_x(lib, 1, 1, 4)),
    "LPPool2d[kernel_big]": lambda lib: lib.nn.LPPool2d(2, 5)(_x(lib, 1, 1, 4, 4)),
    "Fold[output]": lambda lib: lib.nn.Fold((3, 3), 2)(_x(lib, 1, 4, 5)),
    "Unfold[kernel_big]": lambda lib: lib.nn.Unfold(5)(_x(lib, 1, 1, 3, 3)),
    "ConstantPad2d[neg_big]": lambda lib: lib.nn.ConstantPad2d(-3, 0.0)(_x(lib, 1, 1, 2, 2)),
    "ReflectionPad1d[too_big]": lambda lib: lib.nn.ReflectionPad1d(3)(_x(lib, 1, 1, 2)),
    "ReplicationPad2d[tuple3]": lambda lib: lib.nn.ReplicationPad2d((1, 1, 1))(_x(lib, 1, 1, 2, 2)),
    "ZeroPad2d[float]": lambda lib: lib.nn.ZeroPad2d(1.5)(_x(lib, 1, 1, 2, 2)),
    "PReLU[params]": lambda lib: lib.nn.PReLU(3)(_x(lib, 2, 2)),
    "Threshold[str]": lambda lib: lib.nn.Threshold("a", 0.0)(_x(lib, 2)),
    "Hardtanh[range]": lambda lib: lib.nn.Hardtanh(1.0, -1.0),
    "Softplus[beta_str]": lambda lib: lib.nn.Softplus(beta="a")(_x(lib, 2)),
    "ELU[alpha_str]": lambda lib: lib.nn.ELU(alpha="a")(_x(lib, 2)),
    "GLU[odd]": lambda lib: lib.nn.GLU()(_x(lib, 2, 3)),
    "CosineSimilarity[shape]": lambda lib: lib.nn.CosineSimilarity()(_x(lib, 2, 3), _x(lib, 2, 4)),
    "PairwiseDistance[shape]": lambda lib: lib.nn.PairwiseDistance()(_x(lib, 2, 3), _x(lib, 3, 4)),
    "Identity[no_input]": lambda lib: lib.nn.Identity()(),
    "Sequential[not_module]": lambda lib: lib.nn.Sequential(lib.nn.ReLU(), 3),
    "Sequential[dict_not_module]": lambda lib: lib.nn.Sequential({"a": 3}),
    "ModuleList[insert_not_module]": lambda lib: lib.nn.ModuleList().insert(0, 3),
    "ModuleList[extend_not_iterable]": lambda lib: lib.nn.ModuleList().extend(3),
    "ModuleDict[update_bad]": lambda lib: lib.nn.ModuleDict().update(3),
    "ParameterList[append_int]": lambda lib: lib.nn.ParameterList().append("a").parameters(),
    "ParameterDict[bad_key]": lambda lib: lib.nn.ParameterDict({1: lib.nn.Parameter(_x(lib, 2))}),
    "Parameter[list]": lambda lib: lib.nn.Parameter([1.0, 2.0]),
    "Parameter[int_grad]": lambda lib: lib.nn.Parameter(lib.ones(2, dtype=lib.int64)),
    "Module[register_buffer_param]": lambda lib: lib.nn.Linear(2, 2).register_buffer(
        "weight", _x(lib, 2)),
    "Module[register_parameter_tensor]": lambda lib: lib.nn.Linear(2, 2).register_parameter(
        "w", _x(lib, 2)),
    "Module[add_module_str]": lambda lib: lib.nn.Linear(2, 2).add_module("a", "b"),
    "Module[add_module_dot]": lambda lib: lib.nn.Linear(2, 2).add_module("a.b", lib.nn.ReLU()),
    "Module[add_module_empty]": lambda lib: lib.nn.Linear(2, 2).add_module("", lib.nn.ReLU()),
    "Module[to_bad_dtype]": lambda lib: lib.nn.Linear(2, 2).to(lib.int64),
    "Module[to_nothing_valid]": lambda lib: lib.nn.Linear(2, 2).to(3),
    "Module[zero_grad_str]": lambda lib: lib.nn.Linear(2, 2).zero_grad(set_to_none="a").weight.grad
    .sum(),
    "Module[named_modules_memo]": lambda lib: list(lib.nn.Linear(2, 2).named_modules(memo=3)),
    "Module[load_state_dict_list]": lambda lib: lib.nn.Linear(2, 2).load_state_dict([1, 2]),
    "Module[load_state_dict_none]": lambda lib: lib.nn.Linear(2, 2).load_state_dict(None),
    "Module[set_submodule_missing]": lambda lib: lib.nn.Linear(2, 2).set_submodule("a.b", lib.nn.ReLU()),
    "Module[get_extra_state]": lambda lib: lib.nn.Linear(2, 2).get_extra_state(),
    "Module[set_extra_state]": lambda lib: lib.nn.Linear(2, 2).set_extra_state({}),
}
for _ck, _cf in _CTORS.items():
    _add(f"nn_ctor[{_ck}]", lambda lib, cf=_cf: (lib.manual_seed(0), cf(lib)))

# ---------------------------------------------------------------------------- forward calls
_LAYER_MAKERS = {
    "Linear": lambda nn: nn.Linear(3, 2),
    "Bilinear": lambda nn: nn.Bilinear(3, 2, 2),
    "Conv1d": lambda nn: nn.Conv1d(2, 2, 3),
    "Conv2d_pad_reflect": lambda nn: nn.Conv2d(2, 2, 3, padding=2, padding_mode="reflect"),
    "Conv2d_groups": lambda nn: nn.Conv2d(4, 4, 2, groups=2),
    "Conv3d": lambda nn: nn.Conv3d(2, 2, 2),
    "ConvTranspose1d": lambda nn: nn.ConvTranspose1d(2, 2, 2, stride=2),
    "BatchNorm1d": lambda nn: nn.BatchNorm1d(3),
    "BatchNorm2d": lambda nn: nn.BatchNorm2d(3),
    "InstanceNorm1d": lambda nn: nn.InstanceNorm1d(3, affine=True),
    "LayerNorm2": lambda nn: nn.LayerNorm([3, 3]),
    "GroupNorm": lambda nn: nn.GroupNorm(3, 3),
    "LocalResponseNorm": lambda nn: nn.LocalResponseNorm(2),
    "Embedding": lambda nn: nn.Embedding(4, 3),
    "EmbeddingBag": lambda nn: nn.EmbeddingBag(4, 3),
    "LSTMCell": lambda nn: nn.LSTMCell(3, 2),
    "GRUCell": lambda nn: nn.GRUCell(3, 2),
    "LSTM_batch_first": lambda nn: nn.LSTM(3, 2, batch_first=True),
    "TransformerEncoderLayer": lambda nn: nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0),
    "PReLU3": lambda nn: nn.PReLU(3),
    "MaxPool1d": lambda nn: nn.MaxPool1d(2),
    "AdaptiveAvgPool2d": lambda nn: nn.AdaptiveAvgPool2d(2),
    "Softmax2d": lambda nn: nn.Softmax2d(),
    "ChannelShuffle": lambda nn: nn.ChannelShuffle(2),
}
_FORWARD_INPUTS = {
    "0d": lambda lib: lib.tensor(1.0),
    "wrong_last": lambda lib: _x(lib, 2, 3, 5),
    "int64": lambda lib: lib.ones(2, 3, 3, dtype=lib.int64),
    "bool": lambda lib: lib.ones(2, 3, 3, dtype=lib.bool),
    "float16": lambda lib: _x(lib, 2, 3, 3).half(),
    "complex": lambda lib: _x(lib, 2, 3, 3).to(lib.complex64),
    "6d": lambda lib: _x(lib, 1, 1, 1, 2, 3, 3),
    "zero_channels": lambda lib: _x(lib, 2, 0, 3),
    "str": lambda lib: "abc",
    "tuple": lambda lib: (_x(lib, 2, 3),),
}


def _observe_module(m):
    return [np.array(v.detach().numpy(), copy=True) for v in m.state_dict().values()
            if hasattr(v, "detach")]


def _make_layer(mk):
    def make(lib):
        lib.manual_seed(0)
        m = mk(lib.nn)
        with lib.no_grad():
            for k, p in enumerate(m.parameters()):
                p.copy_((lib.arange(p.numel(), dtype=p.dtype).reshape(p.shape) % 5 - 2) / (k + 3))
        return m
    return make


# crossings PyTorch accepts, so not bad input (hookgrad refuses both: a Half input with Float
# LayerNorm parameters, PyTorch's mixed-dtype case; LocalResponseNorm over zero channels)
_TORCH_ACCEPTS = {("LayerNorm2", "float16"), ("LocalResponseNorm", "zero_channels")}
for _lk, _lm in _LAYER_MAKERS.items():
    for _ik, _ii in _FORWARD_INPUTS.items():
        if (_lk, _ik) in _TORCH_ACCEPTS:
            continue
        def _forward(lib, m, ii=_ii, lk=_lk):
            x = ii(lib)
            if lk == "Bilinear":
                return m(x, x)
            return m(x)
        _add_stateful(f"nn_forward[{_lk},{_ik}]", _make_layer(_lm), _forward, _observe_module)

# forward calls with a bad second input (states, masks, offsets)
_EXTRA = {
    "LSTM_h0_shape": ("LSTM_batch_first", lambda lib, m: m(
        _x(lib, 2, 4, 3), (_x(lib, 1, 3, 2), _x(lib, 1, 3, 2)))),
    "LSTM_h0_not_tuple": ("LSTM_batch_first", lambda lib, m: m(_x(lib, 2, 4, 3),
                                                               _x(lib, 1, 2, 2))),
    "LSTM_h0_dtype": ("LSTM_batch_first", lambda lib, m: m(
        _x(lib, 2, 4, 3), (_x(lib, 1, 2, 2, dtype="float64"), _x(lib, 1, 2, 2)))),
    "LSTM_input_float64": ("LSTM_batch_first", lambda lib, m: m(_x(lib, 2, 4, 3,
                                                                   dtype="float64"))),
    "LSTMCell_hx_shape": ("LSTMCell", lambda lib, m: m(_x(lib, 2, 3), (_x(lib, 3, 2),
                                                                       _x(lib, 3, 2)))),
    "LSTMCell_3d": ("LSTMCell", lambda lib, m: m(_x(lib, 1, 2, 3))),
    "GRUCell_hx_batch": ("GRUCell", lambda lib, m: m(_x(lib, 2, 3), _x(lib, 3, 2))),
    "Embedding_float": ("Embedding", lambda lib, m: m(_x(lib, 2))),
    "Embedding_range": ("Embedding", lambda lib, m: m(lib.tensor([0, 4]))),
    "Embedding_neg": ("Embedding", lambda lib, m: m(lib.tensor([-1]))),
    "EmbeddingBag_offsets_2d": ("EmbeddingBag", lambda lib, m: m(
        lib.tensor([[0, 1]]), lib.tensor([0]))),
    "EmbeddingBag_offsets_first": ("EmbeddingBag", lambda lib, m: m(
        lib.tensor([0, 1, 2]), lib.tensor([1]))),
    "EmbeddingBag_no_offsets": ("EmbeddingBag", lambda lib, m: m(lib.tensor([0, 1, 2]))),
    "EmbeddingBag_weights_shape": ("EmbeddingBag", lambda lib, m: m(
        lib.tensor([0, 1]), lib.tensor([0]), per_sample_weights=_x(lib, 3))),
    "Transformer_mask_shape": ("TransformerEncoderLayer", lambda lib, m: m(
        _x(lib, 3, 2, 4), src_mask=lib.zeros(2, 2))),
    "Transformer_padding_mask": ("TransformerEncoderLayer", lambda lib, m: m(
        _x(lib, 3, 2, 4), src_key_padding_mask=lib.zeros(3, 3, dtype=lib.bool))),
    "Transformer_mask_int": ("TransformerEncoderLayer", lambda lib, m: m(
        _x(lib, 3, 2, 4), src_mask=lib.zeros(3, 3, dtype=lib.int64))),
    "ConvTranspose1d_output_size": ("ConvTranspose1d", lambda lib, m: m(
        _x(lib, 1, 2, 3), output_size=[20])),
    "Bilinear_second": ("Bilinear", lambda lib, m: m(_x(lib, 2, 3), _x(lib, 2, 3))),
    "BatchNorm1d_single": ("BatchNorm1d", lambda lib, m: m(_x(lib, 1, 3))),
    "BatchNorm2d_3d": ("BatchNorm2d", lambda lib, m: m(_x(lib, 3, 2, 2))),
    "ChannelShuffle_indivisible": ("ChannelShuffle", lambda lib, m: m(_x(lib, 1, 3, 2, 2))),
}
for _ek, (_lk, _ef) in _EXTRA.items():
    _add_stateful(f"nn_forward_extra[{_ek}]", _make_layer(_LAYER_MAKERS[_lk]), _ef,
                  _observe_module)
