"""The real-model workloads (`bench.models`): same first loss as PyTorch, and a step that trains."""

from __future__ import annotations

import pytest

import hookgrad
from bench import bounds, models
from bench import workloads as W


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(models.TABLE))
def test_same_first_loss_as_torch_and_step_runs(torch, name):
    make = W.TABLE[name][0]
    step, first = make(hookgrad)
    _, torch_first = make(torch)
    assert abs(first - torch_first) <= 1e-4 * max(1.0, abs(torch_first))
    step()  # one training step runs (optimizer, clipping, dropout in training mode)


def test_bounds_profiles_every_model_workload():
    assert set(models.TABLE) <= set(bounds.EAGER)
