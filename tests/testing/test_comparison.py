"""`hookgrad.testing.assert_close` against ``torch.testing.assert_close``: same pass/fail, same
exception types, same messages."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from hookgrad.testing._oracle import assert_same

_CASES = {
    "equal": lambda lib, T: (T([1.0, 2.0]), T([1.0, 2.0])),
    "one_mismatch": lambda lib, T: (T([1.0, 2.0, 3.0]), T([1.0, 2.1, 3.0])),
    "2d_mismatches": lambda lib, T: (T([[1.0, 2.0], [3.0, 4.0]]), T([[1.0, 2.1], [3.0, 5.0]])),
    "shape": lambda lib, T: (T([1.0, 2.0]), T([1.0, 2.0, 3.0])),
    "dtype": lambda lib, T: (T([1.0, 2.0]), T([1.0, 2.0], dtype=lib.float64)),
    "int_vs_float_tensor": lambda lib, T: (T([1, 2]), T([1.0, 2.0])),
    "int_tensors": lambda lib, T: (T([1, 2]), T([1, 3])),
    "bool_tensors": lambda lib, T: (T([True, False]), T([True, True])),
    "int_zero_expected": lambda lib, T: (T([5, 1]), T([0, 2])),
    "zero_expected": lambda lib, T: (T([0.0, 1.0]), T([0.0, 2.0])),
    "nan": lambda lib, T: (T([float("nan")]), T([float("nan")])),
    "inf": lambda lib, T: (T([float("inf"), 2.0]), T([float("inf"), 2.0])),
    "inf_vs_finite": lambda lib, T: (T([1.0, 2.0]), T([float("inf"), 2.0])),
    "0d": lambda lib, T: (T(1.0), T(2.0)),
    "0d_int": lambda lib, T: (T(1), T(2)),
    "empty": lambda lib, T: (T([]), T([])),
    "float16": lambda lib, T: (T([1.0, 2.0], dtype=lib.float16), T([1.0, 2.001],
                                                                    dtype=lib.float16)),
    "requires_grad_ignored": lambda lib, T: (T([1.0, 2.0]), T([1.0, 2.0]).requires_grad_()),
    "python_floats": lambda lib, T: (1.0, 1.1),
    "python_ints": lambda lib, T: (1, 2),
    "int_vs_float": lambda lib, T: (1, 1.0),
    "float_nan": lambda lib, T: (1.0, float("nan")),
    "bools": lambda lib, T: (True, False),
    "none": lambda lib, T: (None, None),
    "none_vs_number": lambda lib, T: (None, 1),
    "sequence_item": lambda lib, T: ([1.0, 2.0], [1.0, 2.5]),
    "sequence_length": lambda lib, T: ([1.0, 2.0], [1.0]),
    "nested_tensor_item": lambda lib, T: ([[T([0.0, 2.0])]], [[T([1e-3, 2.0])]]),
    "mapping_item": lambda lib, T: ({"a": 1.0}, {"a": 2.0}),
    "mapping_keys": lambda lib, T: ({"a": 1.0}, {"b": 2.0}),
    "tensor_vs_list": lambda lib, T: (T([1.0, 2.0]), [1.0, 2.0]),
    "tensor_vs_number": lambda lib, T: (T(1.0), 1.0),
    "strings": lambda lib, T: ("a", "a"),
    "ndarrays": lambda lib, T: (np.array([1.0, 2.0]), np.array([1.0, 2.5])),
}

_OPTIONS = {
    "defaults": {},
    "loose": {"rtol": 0.2, "atol": 0.0},
    "rtol_only": {"rtol": 0.2},
    "atol_only": {"atol": 0.2},
    "equal_nan": {"equal_nan": True},
    "no_dtype_check": {"check_dtype": False},
    "msg": {"msg": "custom message"},
    "msg_callable": {"msg": lambda m: "wrapped: " + m.splitlines()[0]},
}


@pytest.mark.oracle
@pytest.mark.parametrize("options", sorted(_OPTIONS))
@pytest.mark.parametrize("case", sorted(_CASES))
def test_assert_close_matches_torch(torch, case, options):
    def scenario(lib, log):
        actual, expected = _CASES[case](lib, lib.tensor)
        lib.testing.assert_close(actual, expected, **_OPTIONS[options])

    assert_same(scenario, torch)


def test_assert_close_messages_name_hookgrad_types():
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs of type"):
        hookgrad.testing.assert_close(hookgrad.tensor([1.0]), [1.0])
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
        hookgrad.testing.assert_close(hookgrad.tensor([1.0, 2.0]), hookgrad.tensor([1.0, 3.0]))
