"""The census of ATen op names: ``hookgrad.ops.aten`` knows every operator and overload name of
PyTorch 2.13 (tools key tables by them at import time), and the shipped list is the oracle's."""

from __future__ import annotations

import pytest

import hookgrad
from tests.census.generate_aten_names import TARGET, aten_names, render


@pytest.mark.oracle
def test_shipped_list_is_the_oracles(torch):
    assert TARGET.read_text() == render(aten_names()), (
        "regenerate with: python3 -m tests.census.generate_aten_names")


def test_every_aten_name_and_overload_resolves():
    aten = hookgrad.ops.aten
    for line in TARGET.read_text().splitlines():
        name, *overloads = line.split()
        packet = getattr(aten, name)
        assert str(packet) == f"aten.{name}"
        for overload in overloads:
            op = getattr(packet, overload)
            assert op is getattr(packet, overload)  # one object per overload
            assert op.name() == f"aten::{name}" + ("" if overload == "default" else f".{overload}")
        assert set(overloads) <= set(packet.overloads())


def test_unbacked_overloads_refuse_calls_and_unknown_names_raise():
    aten = hookgrad.ops.aten
    with pytest.raises(NotImplementedError, match="not a hookgrad primitive"):
        aten._pin_memory.default(hookgrad.ones(2))
    with pytest.raises(AttributeError):
        aten.add.no_such_overload  # noqa: B018
    with pytest.raises(AttributeError):
        aten.no_such_op  # noqa: B018
    assert aten.add.Tensor(hookgrad.ones(2), hookgrad.ones(2)).tolist() == [2.0, 2.0]
