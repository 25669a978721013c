"""A corpus of inputs PyTorch rejects, for comparing exception types (docs/fuzzing.md).

``CORPUS`` maps an id to ``fn(lib)``, a call PyTorch refuses; ``INPLACE`` maps an id to
``(make, op)``: ``op(lib, make(lib))`` is an in-place call PyTorch refuses, after which the target
must be unchanged; ``STATEFUL`` entries (modules, optimizers, schedulers, ...) also say how to
observe the object the call was made on, and whether it changed must agree with PyTorch. The entries are built from small tables crossed with each other (ops x bad
arguments) so the corpus stays readable while covering several hundred cases.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

CORPUS: dict[str, Callable[[Any], Any]] = {}
INPLACE: dict[str, tuple[Callable[[Any], Any], Callable[[Any, Any], Any]]] = {}
# id -> (make, op, observe): ``op(lib, obj)`` with ``obj = make(lib)`` is a call PyTorch refuses;
# ``observe(obj)`` lists what a caller can see of ``obj`` (arrays, numbers, strings), compared
# before and after, so whether the failing call changed it must agree with PyTorch.
STATEFUL: dict[str, tuple[Callable[[Any], Any], Callable[[Any, Any], Any],
                          Callable[[Any], list]]] = {}


def _add(name: str, fn: Callable[[Any], Any]) -> None:
    assert name not in CORPUS, name
    CORPUS[name] = fn


def _add_stateful(name: str, make: Callable[[Any], Any], op: Callable[[Any, Any], Any],
                  observe: Callable[[Any], list]) -> None:
    assert name not in STATEFUL and name not in CORPUS, name
    STATEFUL[name] = (make, op, observe)


# ---------------------------------------------------------------------------- creation
_BAD_DATA = {
    "ragged_empty": [[], [1]],
    "ragged": [[1, 2], [3]],
    "ragged_deep": [[[1]], [[1, 2]]],
    "scalar_and_list": [1, [2]],
    "list_and_scalar": [[2], 1],
    "bytes_in_list": [b"a", 1],
    "bytes": b"ab",
    "str": "abc",
    "str_in_list": ["a"],
    "none_in_list": [None],
    "none_nested": [[1.0], [None]],
    "dict": {1: 2},
    "set": {1, 2},
    "object": object(),
    "object_in_list": [object()],
    "bytearray_in_list": [bytearray(b"a")],
    "dict_in_list": [{}],
    "nested_str": [["a", "b"]],
    "np_object": np.array([1, "a"], dtype=object),
    "np_str": np.array(["a", "b"]),
    "np_datetime": np.array(["2020-01-01"], dtype="datetime64[D]"),
    "np_void": np.zeros(2, dtype="V4"),
    "mixed_tuple_list_ragged": ([1, 2], (3,)),
    "slice": slice(1, 2),
    "ellipsis": ...,
    "complex_in_bool_list": [[True], [1j, 2]],
}
for _k, _v in _BAD_DATA.items():
    _add(f"tensor[{_k}]", lambda lib, v=_v: lib.tensor(v))
    _add(f"as_tensor[{_k}]", lambda lib, v=_v: lib.as_tensor(v))

_add("tensor[multi_element_tensors]", lambda lib: lib.tensor([lib.ones(2), lib.ones(2)]))
_add("tensor[ragged_tensors]", lambda lib: lib.tensor([lib.ones(2), lib.ones(3)]))
_add("tensor[int_requires_grad]", lambda lib: lib.tensor([1, 2], requires_grad=True))
_add("tensor[bool_requires_grad]", lambda lib: lib.tensor([True], requires_grad=True))
_add("tensor[bad_dtype_str]", lambda lib: lib.tensor([1], dtype="float32"))
_add("tensor[bad_dtype_obj]", lambda lib: lib.tensor([1], dtype=3))
_add("tensor[bad_device]", lambda lib: lib.tensor([1], device="nope"))
_add("tensor[requires_grad_str]", lambda lib: lib.tensor([1.0], requires_grad="yes"))
_add("tensor[overflow_int]", lambda lib: lib.tensor([2**64]))
_add("tensor[overflow_uint8]", lambda lib: lib.tensor([300], dtype=lib.uint8))
_add("tensor[float_to_bool_none]", lambda lib: lib.tensor(None))
_add("tensor[no_args]", lambda lib: lib.tensor())
_add("from_numpy[list]", lambda lib: lib.from_numpy([1, 2]))
_add("from_numpy[object]", lambda lib: lib.from_numpy(np.array([1, "a"], dtype=object)))
_add("from_numpy[str]", lambda lib: lib.from_numpy(np.array(["a"])))

_SIZES = {"neg": (-1,), "neg2": (2, -3), "float": (2.5,), "str": ("a",), "none": (None,),
          "nested_bad": ((2, "a"),), "list_float": ([2, 1.5],)}
for _f in ("zeros", "ones", "empty", "rand", "randn"):
    for _k, _v in _SIZES.items():
        _add(f"{_f}[{_k}]", lambda lib, f=_f, v=_v: getattr(lib, f)(*v))
    _add(f"{_f}[bad_kwarg]", lambda lib, f=_f: getattr(lib, f)(2, dtypee=lib.float32))
    _add(f"{_f}[bad_dtype]", lambda lib, f=_f: getattr(lib, f)(2, dtype="float32"))
    _add(f"{_f}[bad_layout]", lambda lib, f=_f: getattr(lib, f)(2, layout="strided"))
for _f in ("rand", "randn"):
    _add(f"{_f}[int_dtype]", lambda lib, f=_f: getattr(lib, f)(2, dtype=lib.int64))
_add("full[no_value]", lambda lib: lib.full((2,)))
_add("full[str_value]", lambda lib: lib.full((2,), "a"))
_add("full[neg]", lambda lib: lib.full((-2,), 1.0))
_add("arange[zero_step]", lambda lib: lib.arange(0, 10, 0))
_add("arange[wrong_sign]", lambda lib: lib.arange(10, 0, 1))
_add("arange[str]", lambda lib: lib.arange("a"))
_add("arange[nan]", lambda lib: lib.arange(0, float("nan")))
_add("arange[inf]", lambda lib: lib.arange(0, float("inf")))
_add("linspace[neg_steps]", lambda lib: lib.linspace(0, 1, -1))
_add("linspace[no_steps]", lambda lib: lib.linspace(0, 1))
_add("eye[neg]", lambda lib: lib.eye(-1))
_add("eye[neg_m]", lambda lib: lib.eye(2, -1))
_add("randint[empty_range]", lambda lib: lib.randint(5, 2, (2,)))
_add("randint[no_size]", lambda lib: lib.randint(5))
_add("randint[float_dtype_size]", lambda lib: lib.randint(0, 5, (2.5,)))
_add("randperm[neg]", lambda lib: lib.randperm(-1))
_add("zeros_like[list]", lambda lib: lib.zeros_like([1, 2]))
_add("ones_like[bad_dtype]", lambda lib: lib.ones_like(lib.ones(2), dtype="x"))
_add("full_like[str]", lambda lib: lib.full_like(lib.ones(2), "a"))
_add("empty_strided[bad]", lambda lib: lib.empty_strided((2, 2), (1,)))
_add("normal[neg_std]", lambda lib: lib.normal(0.0, -1.0, (2,)))
_add("multinomial[neg]", lambda lib: lib.multinomial(lib.tensor([-1.0, 1.0]), 1))
_add("multinomial[too_many]", lambda lib: lib.multinomial(lib.tensor([1.0, 1.0]), 3))
_add("bernoulli[p>1]", lambda lib: lib.bernoulli(lib.tensor([2.0])))
