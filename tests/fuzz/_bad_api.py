"""Devices, Python protocols, odd index objects and keyword misuse in the bad-input corpus.

Every table here is crossed with another (factories x devices, tensors x dunders, index objects x
get/set, ops x keyword faults), so the entries are not picked to pass: whatever PyTorch does with
the pair is what hookgrad must do.
"""

from __future__ import annotations

import numpy as np

from tests.fuzz._bad_inputs import _add
from tests.fuzz._bad_ops import _x

# ---------------------------------------------------------------------------- factories x devices
_FACTORIES = {
    "tensor": lambda lib, d: lib.tensor([1.0, 2.0], device=d),
    "as_tensor": lambda lib, d: lib.as_tensor([1.0], device=d),
    "zeros": lambda lib, d: lib.zeros(2, device=d),
    "ones": lambda lib, d: lib.ones(2, device=d),
    "empty": lambda lib, d: lib.empty(2, device=d),
    "full": lambda lib, d: lib.full((2,), 1.0, device=d),
    "rand": lambda lib, d: lib.rand(2, device=d),
    "randn": lambda lib, d: lib.randn(2, device=d),
    "randint": lambda lib, d: lib.randint(0, 3, (2,), device=d),
    "arange": lambda lib, d: lib.arange(3, device=d),
    "linspace": lambda lib, d: lib.linspace(0, 1, 3, device=d),
    "eye": lambda lib, d: lib.eye(2, device=d),
    "randperm": lambda lib, d: lib.randperm(3, device=d),
    "zeros_like": lambda lib, d: lib.zeros_like(_x(lib, 2), device=d),
    "full_like": lambda lib, d: lib.full_like(_x(lib, 2), 3.0, device=d),
    "rand_like": lambda lib, d: lib.rand_like(_x(lib, 2), device=d),
    "Tensor.to": lambda lib, d: _x(lib, 2).to(d),
    "Tensor.new_zeros": lambda lib, d: _x(lib, 2).new_zeros(2, device=d),
    "Module.to": lambda lib, d: lib.nn.Linear(2, 2).to(d),
}
_DEVICES = {
    "cuda": "cuda", "cuda:0": "cuda:0", "cuda:1": "cuda:1", "mps": "mps", "xpu": "xpu",
    "cpu:-1": "cpu:-1", "CPU": "CPU", "gpu": "gpu", "empty": "", "cuda:x": "cuda:x",
    "cpu:0:0": "cpu:0:0", "cuda-0": "cuda-0", "int0": 0, "int-1": -1, "float": 1.5,
    "list": ["cpu"], "dict": {"type": "cpu"}, "obj_cuda": "@cuda", "obj_cuda1": "@cuda:1",
}
for _fk, _fn in _FACTORIES.items():
    for _dk, _dv in _DEVICES.items():
        def _call(lib, fn=_fn, dv=_dv):
            if isinstance(dv, str) and dv.startswith("@"):
                dv = lib.device(dv[1:])
            return fn(lib, dv)
        _add(f"device[{_fk},{_dk}]", _call)
for _dk in ("cpu:-1", "CPU", "gpu", "empty", "cuda:x", "cpu:0:0", "cuda-0"):
    _add(f"device[torch.device,{_dk}]", lambda lib, d=_DEVICES[_dk]: lib.device(d))
_add("device[torch.device,int_neg]", lambda lib: lib.device("cpu", -1))
_add("device[torch.device,float]", lambda lib: lib.device(1.5))
_add("device[torch.device,none]", lambda lib: lib.device(None))
_add("device[Tensor.cuda]", lambda lib: _x(lib, 2).cuda())
_add("device[Module.cuda]", lambda lib: lib.nn.Linear(2, 2).cuda())
_add("device[cuda.current_device]", lambda lib: lib.cuda.current_device())
_add("device[cuda.get_device_name]", lambda lib: lib.cuda.get_device_name(0))
_add("device[cuda.set_device]", lambda lib: lib.cuda.set_device(0))

# ---------------------------------------------------------------------------- Python protocols
_PTENSORS = {
    "pair": lambda lib: _x(lib, 2),
    "empty": lambda lib: _x(lib, 0),
    "0d": lambda lib: lib.tensor(1.5),
    "int2d": lambda lib: _x(lib, 2, 2, dtype="int64"),
    "bool": lambda lib: lib.tensor([True, False]),
    "rg": lambda lib: _x(lib, 2, rg=True),
}
_DUNDERS = {
    "int": int, "float": float, "bool": bool, "index": lambda t: t.__index__(),
    "len": len, "iter_next": lambda t: next(iter(t)), "hash_list": lambda t: {t: 1, 3: [t]}[3],
    "format_f": lambda t: format(t, ".2f"), "format_d": lambda t: format(t, "d"),
    "round": lambda t: round(t, 1), "round_str": lambda t: round(t, "a"),
    "divmod": lambda t: divmod(t, 2), "rdivmod": lambda t: divmod(2, t),
    "contains_none": lambda t: None in t, "contains_str": lambda t: "a" in t,
    "contains_list": lambda t: [1, 2] in t,
    "lt_none": lambda t: t < None, "gt_str": lambda t: t > "a", "le_list_str": lambda t: t <= ["a"],
    "ge_object": lambda t: t >= object(), "eq_str_list": lambda t: t == ["a", "b"],
    "matmul_none": lambda t: t @ None, "rmatmul_list": lambda t: [[1.0]] @ t,
    "and_float": lambda t: t & 1.5, "or_str": lambda t: t | "a", "xor_none": lambda t: t ^ None,
    "lshift_str": lambda t: t << "a", "neg_invert": lambda t: ~(t * 1.5),
    "abs_str_add": lambda t: abs(t) + "a", "complex": complex, "oct": oct, "bytes": bytes,
    "range": lambda t: range(t), "list_index": lambda t: [1, 2, 3][t],
    "setattr_shape": lambda t: setattr(t, "shape", (1,)),
    "setattr_data_list": lambda t: setattr(t, "data", [1.0]),
    "setattr_dtype": lambda t: setattr(t, "dtype", None),
    "delattr_grad_fn": lambda t: delattr(t, "grad_fn"),
    "reversed": lambda t: list(reversed(t)), "sorted_mixed": lambda t: sorted([t, "a"]),
    "dict_keys": lambda t: dict([t]),
}
for _tk, _tf in _PTENSORS.items():
    for _dk, _df in _DUNDERS.items():
        _add(f"protocol[{_tk},{_dk}]", lambda lib, tf=_tf, df=_df: df(tf(lib)))

# ---------------------------------------------------------------------------- odd index objects
_NP_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "bool_")
_INDEXES = {
    "float": 0.0, "float_neg": -1.0, "float_list": [0.0], "float_list2": [0.0, 1.0],
    "mixed_list": [0, 1.0], "nested_list": [[0, 1], [1, 0]], "nested_float": [[0.5]],
    "ragged_list": [[0], [0, 1]], "str_list": ["a"], "none_list": [None],
    "tuple_of_tensors": "@tt", "ellipsis_twice": (..., ...), "ellipsis_none_twice": (..., None, ...),
    "none_too_many": (None, 0, 0), "bool_list_short": [True], "bool_list_long": [True] * 4,
    "bool_list_mixed": [True, 0], "neg_range": -4, "neg_range_list": [-4], "big": 2**63,
    "big_list": [2**63], "slice_float": slice(0.0, 1), "slice_str": slice("a"),
    "slice_tensor_float": "@sf", "dict": {0: 1}, "set": {0}, "object": object(),
    "bytes": b"\x00", "complex": 1j, "tensor_2d_float": "@t2f", "bool_tensor_short": "@bts",
    "tuple_list_list_mismatch": ([0, 1], [0, 1, 2]), "range_obj": range(0, 4),
    "empty_tuple_tuple": ((),), "list_of_slices": [slice(0, 1)], "list_of_ellipsis": [...],
}
for _d in _NP_DTYPES:
    _INDEXES[f"np_{_d}_scalar"] = f"@np:{_d}"
    _INDEXES[f"np_{_d}_array"] = f"@npa:{_d}"


def _index(lib, spec):
    if not (isinstance(spec, str) and spec.startswith("@")):
        return spec
    if spec == "@tt":
        return (lib.tensor([0]), lib.tensor([1]), lib.tensor([0]))
    if spec == "@sf":
        return slice(lib.tensor(0.5), 2)
    if spec == "@t2f":
        return _x(lib, 1, 1)
    if spec == "@bts":
        return lib.tensor([True, False])
    kind, dtype = spec[1:].split(":")
    value = np.array(1 if dtype != "bool_" else True).astype(dtype)
    return value[()] if kind == "np" else np.array([value, value]).astype(dtype)


for _ik, _iv in _INDEXES.items():
    _add(f"getindex[{_ik}]", lambda lib, iv=_iv: _x(lib, 3, 2)[_index(lib, iv)])
    _add(f"setindex[{_ik}]", lambda lib, iv=_iv: _x(lib, 3, 2).__setitem__(_index(lib, iv), 1.0))
    _add(f"getindex1d[{_ik}]", lambda lib, iv=_iv: _x(lib, 3)[_index(lib, iv)])

# ---------------------------------------------------------------------------- keyword misuse
_KW_OPS = {
    "sum": lambda lib, **k: lib.sum(_x(lib, 2, 3), **k),
    "mean": lambda lib, **k: _x(lib, 2, 3).mean(**k),
    "amax": lambda lib, **k: lib.amax(_x(lib, 2, 3), **k),
    "argmax": lambda lib, **k: _x(lib, 2, 3).argmax(**k),
    "softmax": lambda lib, **k: lib.softmax(_x(lib, 2, 3), **k),
    "cumsum": lambda lib, **k: lib.cumsum(_x(lib, 2, 3), **k),
    "squeeze": lambda lib, **k: _x(lib, 2, 1).squeeze(**k),
    "cat": lambda lib, **k: lib.cat([_x(lib, 2, 3), _x(lib, 2, 3)], **k),
    "std": lambda lib, **k: lib.std(_x(lib, 2, 3), **k),
    "zeros": lambda lib, **k: lib.zeros(2, 3, **k),
    "add": lambda lib, **k: lib.add(_x(lib, 2, 3), 1.0, **k),
    "exp": lambda lib, **k: lib.exp(_x(lib, 2, 3), **k),
}
_KW_FAULTS = {
    "unknown": {"nope": 1}, "dim_str": {"dim": "a"}, "dim_float": {"dim": 0.5},
    "dim_list_float": {"dim": [0.5]}, "dim_range": {"dim": 7}, "keepdim_str": {"keepdim": "a"},
    "keepdim_float": {"keepdim": 0.5}, "keepdim_list": {"keepdim": [1]},
    "dtype_str": {"dtype": "float32"}, "dtype_int": {"dtype": 3},
    "dtype_np": {"dtype": np.float32}, "dtype_pytype": {"dtype": float},
    "out_list": {"out": [1.0]}, "out_int": {"out": 3}, "out_tuple": {"out": ("@out",)},
    "input_and_kw": {"input": "@t"}, "alpha_str": {"alpha": "a"},
}


def _kwargs(lib, spec):
    def val(v):
        if v == "@t":
            return _x(lib, 2, 3)
        if isinstance(v, tuple):
            return tuple(lib.zeros(2, 3) for _ in v)
        return v
    return {k: val(v) for k, v in spec.items()}


for _ok, _of in _KW_OPS.items():
    for _fk, _fv in _KW_FAULTS.items():
        _add(f"kwarg[{_ok},{_fk}]", lambda lib, of=_of, fv=_fv: of(lib, **_kwargs(lib, fv)))
_add("kwarg[sum,dim_twice]", lambda lib: lib.sum(_x(lib, 2, 3), 0, dim=0))
_add("kwarg[transpose,dim_twice]", lambda lib: _x(lib, 2, 3).transpose(0, 1, dim0=0))
_add("kwarg[reshape,shape_twice]", lambda lib: _x(lib, 2, 3).reshape((3, 2), shape=(3, 2)))
_add("kwarg[tensor,data_twice]", lambda lib: lib.tensor([1.0], data=[1.0]))
_add("kwarg[full,fill_twice]", lambda lib: lib.full((2,), 1.0, fill_value=1.0))
_add("kwarg[clamp,min_twice]", lambda lib: _x(lib, 2).clamp(0.0, min=0.0))
_add("kwarg[where,positional_extra]", lambda lib: lib.where(_x(lib, 2) > 0, 1.0, 2.0, 3.0))
_add("kwarg[linear,extra]", lambda lib: lib.nn.functional.linear(_x(lib, 2), _x(lib, 2, 2),
                                                                 None, None))

# ---------------------------------------------------------------------------- data PyTorch takes
# (compared like the rest: hookgrad must accept them too)
_EDGE_DATA = {
    "bytearray": lambda lib: lib.tensor(bytearray(b"ab")),
    "bytearray_empty": lambda lib: lib.tensor(bytearray()),
    "bytearray_float": lambda lib: lib.tensor(bytearray(b"ab"), dtype=lib.float32),
    "as_tensor_bytearray": lambda lib: lib.as_tensor(bytearray(b"ab")),
    "memoryview": lambda lib: lib.tensor(memoryview(b"ab")),
    "bytes_in_nested": lambda lib: lib.tensor([[b"a"]]),
}
for _ek, _ef in _EDGE_DATA.items():
    _add(f"creation_edge[{_ek}]", _ef)
