"""The oracle harness itself (runs without torch: a fake "library" stands in for it)."""

from __future__ import annotations

import types
import warnings

import pytest

import hookgrad
from hookgrad.testing._oracle import (
    NodeValue,
    TensorValue,
    assert_same,
    compare,
    graph_signature,
    normalize_text,
    plain,
    run_scenario,
)


def test_plain_converts_tensors_nodes_and_containers():
    a = hookgrad.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    value = plain({"t": [b, (a.shape, a.dtype)], "n": b.grad_fn, "e": ValueError("x at 0x7f")})
    assert value == {
        "t": [TensorValue([2.0, 4.0], "torch.float32", True), ((2,), "torch.float32")],
        "n": NodeValue("MulBackward0"),
        "e": ("E", "ValueError", "x at 0x?"),
    }


def test_run_scenario_records_log_result_exception_and_warnings():
    def scenario(lib, log):
        log.append(lib.tensor([1.0]))
        warnings.warn("careful", UserWarning, stacklevel=1)
        raise RuntimeError("boom")

    out = run_scenario(scenario, hookgrad)
    assert out.log == [TensorValue([1.0], "torch.float32", False)]
    assert out.exc == ("RuntimeError", "boom")
    assert out.warnings == [("UserWarning", "careful")]


def test_compare_uses_tolerance_for_floats_only():
    assert compare([1.0, (2.0,)], [1.0 + 1e-9, (2.0,)]) == []
    assert compare([1], [2]) == ["[0]: hookgrad=1 torch=2"]
    assert compare(float("nan"), float("nan")) == []
    t1 = TensorValue([1.0, 2.0], "torch.float32", False)
    t2 = TensorValue([1.0, 2.5], "torch.float32", False)
    assert compare(t1, t1) == [] and compare(t1, t2) != []
    assert compare(t1, t1._replace(requires_grad=True)) != []


def test_normalize_text_strips_addresses_and_cpp_suffix():
    text = "bad <f at 0x7ffd12> (Triggered internally at /src/engine.cpp:12.)"
    assert normalize_text(text) == "bad <f at 0x?>"


def test_assert_same_reports_every_difference():
    fake = types.SimpleNamespace(tensor=hookgrad.tensor, name="fake")

    def scenario(lib, log):
        log.append(lib is hookgrad)
        return 1 if lib is hookgrad else 2

    with pytest.raises(AssertionError) as info:
        assert_same(scenario, fake)
    assert "log[0]" in str(info.value) and "result" in str(info.value)


def test_graph_signature_is_structural():
    a = hookgrad.tensor([1.0, 2.0], requires_grad=True)
    y = (a * a).exp()
    assert graph_signature(y.grad_fn) == [
        ("ExpBackward0", ((1, 0),)),
        ("MulBackward0", ((2, 0), (2, 0))),
        ("torch::autograd::AccumulateGrad", ()),
    ]
