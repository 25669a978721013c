"""The op part of the bad-input corpus (see `_bad_inputs` for the contract)."""

from __future__ import annotations

from tests.fuzz._bad_inputs import INPLACE, _add


def _x(lib, *shape, dtype=None, rg=False):
    n = 1
    for s in shape:
        n *= s
    t = lib.arange(float(n)).reshape(shape) * 0.5 - 1
    if dtype is not None:
        t = t.to(getattr(lib, dtype))
    return t.requires_grad_() if rg else t


# ---------------------------------------------------------------------------- shape ops
_SHAPE = {
    "view_mismatch": lambda lib: _x(lib, 2, 3).view(4, 2),
    "view_two_infer": lambda lib: _x(lib, 2, 3).view(-1, -1),
    "view_noncontig": lambda lib: _x(lib, 2, 3).t().view(6),
    "view_float": lambda lib: _x(lib, 2, 3).view(6.0),
    "view_str": lambda lib: _x(lib, 2, 3).view("a"),
    "view_neg": lambda lib: _x(lib, 2, 3).view(-2, 3),
    "view_dtype_size": lambda lib: _x(lib, 3).view(lib.float64),
    "reshape_mismatch": lambda lib: _x(lib, 2, 3).reshape(5),
    "reshape_empty_infer": lambda lib: _x(lib, 0, 3).reshape(-1, 0),
    "permute_short": lambda lib: _x(lib, 2, 3).permute(0),
    "permute_repeat": lambda lib: _x(lib, 2, 3).permute(0, 0),
    "permute_range": lambda lib: _x(lib, 2, 3).permute(0, 2),
    "transpose_range": lambda lib: _x(lib, 2, 3).transpose(0, 2),
    "t_3d": lambda lib: _x(lib, 2, 3, 1).t(),
    "squeeze_range": lambda lib: _x(lib, 2, 1).squeeze(3),
    "unsqueeze_range": lambda lib: _x(lib, 2, 1).unsqueeze(4),
    "unsqueeze_float": lambda lib: _x(lib, 2, 1).unsqueeze(1.0),
    "expand_shrink": lambda lib: _x(lib, 2, 3).expand(2, 2),
    "expand_fewer": lambda lib: _x(lib, 2, 3).expand(3),
    "expand_neg_new": lambda lib: _x(lib, 3).expand(-1, 3),
    "cat_mismatch": lambda lib: lib.cat([_x(lib, 2, 3), _x(lib, 2, 2)]),
    "cat_ndim": lambda lib: lib.cat([_x(lib, 2, 3), _x(lib, 3)]),
    "cat_0d": lambda lib: lib.cat([lib.tensor(1.0), lib.tensor(2.0)]),
    "cat_empty_list": lambda lib: lib.cat([]),
    "cat_not_list": lambda lib: lib.cat(_x(lib, 2)),
    "cat_dim_range": lambda lib: lib.cat([_x(lib, 2), _x(lib, 2)], 1),
    "cat_non_tensor": lambda lib: lib.cat([_x(lib, 2), [1.0, 2.0]]),
    "stack_mismatch": lambda lib: lib.stack([_x(lib, 2), _x(lib, 3)]),
    "stack_empty": lambda lib: lib.stack([]),
    "stack_dim_range": lambda lib: lib.stack([_x(lib, 2), _x(lib, 2)], 3),
    "split_zero": lambda lib: _x(lib, 4).split(0),
    "split_sizes_sum": lambda lib: _x(lib, 4).split([1, 2]),
    "chunk_zero": lambda lib: _x(lib, 4).chunk(0),
    "chunk_dim": lambda lib: _x(lib, 4).chunk(2, 1),
    "narrow_range": lambda lib: _x(lib, 4).narrow(0, 2, 3),
    "narrow_neg_len": lambda lib: _x(lib, 4).narrow(0, 0, -1),
    "select_range": lambda lib: _x(lib, 4).select(0, 4),
    "select_0d": lambda lib: lib.tensor(1.0).select(0, 0),
    "unbind_range": lambda lib: _x(lib, 4).unbind(1),
    "flatten_order": lambda lib: _x(lib, 2, 3, 4).flatten(2, 1),
    "movedim_repeat": lambda lib: _x(lib, 2, 3).movedim((0, 0), (0, 1)),
    "repeat_fewer": lambda lib: _x(lib, 2, 3).repeat(2),
    "repeat_neg": lambda lib: _x(lib, 2).repeat(-1),
    "diagonal_same_dims": lambda lib: _x(lib, 2, 3).diagonal(0, 0, 0),
    "diagonal_1d": lambda lib: _x(lib, 3).diagonal(),
    "flip_repeat": lambda lib: _x(lib, 2, 3).flip(0, 0),
    "roll_mismatch": lambda lib: _x(lib, 2, 3).roll((1, 2), (0,)),
    "tile_neg": lambda lib: _x(lib, 2).tile(-1),
    "as_strided_oob": lambda lib: _x(lib, 4).as_strided((3,), (2,)),
    "unfold_big": lambda lib: _x(lib, 4).unfold(0, 5, 1),
    "unfold_step0": lambda lib: _x(lib, 4).unfold(0, 2, 0),
    "contiguous_bad_format": lambda lib: _x(lib, 2, 3).contiguous(memory_format=lib.channels_last),
    "item_multi": lambda lib: _x(lib, 2).item(),
    "float_multi": lambda lib: float(_x(lib, 2)),
    "int_multi": lambda lib: int(_x(lib, 2)),
    "bool_multi": lambda lib: bool(_x(lib, 2)),
    "bool_empty": lambda lib: bool(_x(lib, 0)),
    "index_int_multi": lambda lib: [0, 1][_x(lib, 2, dtype="int64")],
    "len_0d": lambda lib: len(lib.tensor(1.0)),
    "iter_0d": lambda lib: iter(lib.tensor(1.0)),
    "numpy_requires_grad": lambda lib: _x(lib, 2, rg=True).numpy(),
}
for _k, _f in _SHAPE.items():
    _add(f"shape[{_k}]", _f)

# ---------------------------------------------------------------------------- dims of reductions
_REDUCTIONS = ("sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "logsumexp", "std",
               "var", "softmax", "log_softmax", "cumsum", "cumprod", "norm", "all", "any",
               "max", "min", "median", "nansum", "count_nonzero", "sort", "argsort")
_BAD_DIMS = {"range": 3, "neg_range": -4, "float": 1.5, "str": "a", "list_repeat": [0, 0]}
for _r in _REDUCTIONS:
    for _k, _d in _BAD_DIMS.items():
        if _k == "list_repeat" and _r in ("softmax", "log_softmax", "cumsum", "cumprod", "sort",
                                          "argsort", "argmax", "argmin", "max", "min",
                                          "median"):
            continue
        _add(f"reduce[{_r},{_k}]", lambda lib, r=_r, d=_d: getattr(_x(lib, 2, 3), r)(d))
    _add(f"reduce[{_r},bad_kwarg]", lambda lib, r=_r: getattr(_x(lib, 2, 3), r)(dimm=0))
for _r in ("mean", "std", "var", "logsumexp", "softmax", "log_softmax"):
    _add(f"reduce[{_r},int_input]", lambda lib, r=_r: getattr(_x(lib, 2, 3, dtype="int64"), r)(0))
for _r in ("argmax", "argmin", "amax", "amin", "max", "min", "median"):
    _add(f"reduce[{_r},empty]", lambda lib, r=_r: getattr(_x(lib, 0, 3), r)(0))
_add("reduce[sum,bad_dtype]", lambda lib: _x(lib, 2).sum(dtype="float"))
_add("reduce[sum,dtype_int_from_float]", lambda lib: lib.sum(_x(lib, 2), dtype=lib.int64))
_add("reduce[var,correction_str]", lambda lib: _x(lib, 3).var(correction="a"))
_add("reduce[topk,too_many]", lambda lib: _x(lib, 3).topk(4))
_add("reduce[kthvalue,range]", lambda lib: _x(lib, 3).kthvalue(4))
_add("reduce[norm,bad_p]", lambda lib: _x(lib, 3).norm(p="x"))
_add("reduce[all,float_dim_tuple]", lambda lib: _x(lib, 3).all(dim=(0.5,)))

# ---------------------------------------------------------------------------- pointwise
_BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
           "div": lambda a, b: a / b, "pow": lambda a, b: a ** b, "max": None,
           "atan2": None, "lt": lambda a, b: a < b, "eq": lambda a, b: a == b,
           "fmod": None, "remainder": lambda a, b: a % b, "floor_divide": lambda a, b: a // b}
for _k, _f in _BINARY.items():
    def _call(lib, a, b, k=_k, f=_f):
        if f is None:
            return getattr(lib, "maximum" if k == "max" else k)(a, b)
        return f(a, b)
    _add(f"binary[{_k},shape]", lambda lib, c=_call: c(lib, _x(lib, 2, 3), _x(lib, 4)))
    _add(f"binary[{_k},str]", lambda lib, c=_call: c(lib, _x(lib, 2), "a"))
    _add(f"binary[{_k},list_of_str]", lambda lib, c=_call: c(lib, _x(lib, 2), ["a", "b"]))
    _add(f"binary[{_k},none]", lambda lib, c=_call: c(lib, _x(lib, 2), None))
    _add(f"binary[{_k},object]", lambda lib, c=_call: c(lib, _x(lib, 2), object()))
_BOOL_BAD = {"neg": lambda t: -t, "sub": lambda t: t - t, "rsub": lambda t: 1 - t}
for _k, _f in _BOOL_BAD.items():
    _add(f"bool[{_k}]", lambda lib, f=_f: f(lib.tensor([True, False])))
_INT_BAD = {
    "pow_neg": lambda lib: lib.tensor([2, 3]) ** -1,
    "pow_neg_tensor": lambda lib: lib.tensor([2, 3]).pow(lib.tensor([-1, 1])),
    "div_bad_mode": lambda lib: lib.div(lib.tensor([2]), 2, rounding_mode="x"),
    "add_float_alpha": lambda lib: lib.add(lib.tensor([2]), lib.tensor([1]), alpha=0.5),
    "add_bool_alpha": lambda lib: lib.add(_x(lib, 2), _x(lib, 2), alpha=True),
    "bitwise_float": lambda lib: _x(lib, 2) & _x(lib, 2),
    "bitwise_not_float": lambda lib: ~_x(lib, 2),
    "lshift_float": lambda lib: _x(lib, 2) << 1,
    "floor_div_zero_int": lambda lib: lib.tensor([1]) // 0,
    "remainder_zero_int": lambda lib: lib.tensor([1]) % 0,
    "clamp_none": lambda lib: _x(lib, 2).clamp(),
    "clamp_str": lambda lib: _x(lib, 2).clamp("a"),
    "clamp_tensor_and_number": lambda lib: _x(lib, 2, 2).clamp(min=_x(lib, 2), max=0.5),
    "where_float_cond": lambda lib: lib.where(_x(lib, 2), _x(lib, 2), _x(lib, 2)),
    "where_shape": lambda lib: lib.where(_x(lib, 2) > 0, _x(lib, 3), _x(lib, 2)),
    "masked_fill_float_mask": lambda lib: _x(lib, 2).masked_fill(_x(lib, 2), 1.0),
    "masked_fill_shape": lambda lib: _x(lib, 2).masked_fill(_x(lib, 3) > 0, 1.0),
    "masked_fill_value_1d": lambda lib: _x(lib, 2).masked_fill(_x(lib, 2) > 0, _x(lib, 2)),
    "lerp_dtype": lambda lib: lib.lerp(_x(lib, 2), _x(lib, 2, dtype="float64"), 0.5),
    "lerp_shape": lambda lib: lib.lerp(_x(lib, 2), _x(lib, 3), 0.5),
    "addcmul_shape": lambda lib: lib.addcmul(_x(lib, 2), _x(lib, 3), _x(lib, 2)),
    "exp_str": lambda lib: lib.exp("a"),
    "exp_list": lambda lib: lib.exp([1.0]),
    "sigmoid_int_method_out": lambda lib: lib.sigmoid(_x(lib, 2), out=lib.zeros(2, dtype=lib.long)),
    "add_out_shape_dtype": lambda lib: lib.add(_x(lib, 2), 1, out=lib.zeros(2, dtype=lib.long)),
    "isclose_dtype": lambda lib: lib.isclose(_x(lib, 2), _x(lib, 2, dtype="float64")),
    "allclose_shape": lambda lib: lib.allclose(_x(lib, 2), _x(lib, 3)),
    "logical_shape": lambda lib: lib.logical_and(_x(lib, 2), _x(lib, 3)),
    "round_decimals_str": lambda lib: _x(lib, 2).round(decimals="a"),
    "to_bad": lambda lib: _x(lib, 2).to("nope"),
    "to_kwarg": lambda lib: _x(lib, 2).to(lib.float64, bad=1),
    "type_bad": lambda lib: _x(lib, 2).type("torch.NopeTensor"),
}
for _k, _f in _INT_BAD.items():
    _add(f"pointwise[{_k}]", _f)
