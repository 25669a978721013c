"""`python -m bench.layers`: every layer case runs forward and backward (no timing asserted)."""

from __future__ import annotations

import pytest

import hookgrad
from bench import layers


def test_every_named_layer_has_a_case_and_runs_once():
    cases = layers._cases(hookgrad)
    assert sorted(cases) == sorted(layers.NAMES)
    for name in layers.NAMES:
        cases[name]()  # forward and backward (or one optimizer / clip call): no error


def test_unknown_layer_is_a_usage_error(capsys):
    with pytest.raises(SystemExit):
        layers.main(["no_such_layer"])
    assert "unknown layers" in capsys.readouterr().err
