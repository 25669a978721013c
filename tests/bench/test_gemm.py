"""`python -m bench.gemm`: the recorded matrix products of a step (no timing asserted)."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from bench import gemm
from hookgrad._ops import _matmul


def _linear_step():
    lin = hookgrad.nn.Linear(4, 3)
    x = hookgrad.tensor(np.ones((5, 4), np.float32))

    def step():
        lin(x).sum().backward()

    return step


def test_records_every_product_of_a_step_and_restores_mm_arrays():
    seen = gemm._record(_linear_step())
    # forward x @ W.T, backward grad_input = g @ W (grad of x is not needed: x is a leaf
    # without grad) and grad_weight = g.T @ x: two or three 2-D products, all float32
    shapes = sorted((a, b) for (a, _sa, b, _sb, _dt) in seen)
    assert ((5, 4), (4, 3)) in shapes and ((3, 5), (5, 4)) in shapes
    assert all(dt == np.dtype(np.float32).str for (*_, dt) in seen)
    assert _matmul.mm_arrays.__name__ == "mm_arrays"
    from hookgrad._ops import _rule_ops
    assert _rule_ops.mm_arrays is _matmul.mm_arrays


def test_operand_keeps_the_recorded_layout():
    f = gemm._operand(np, (3, 5), (4, 12), "<f4")  # a transposed (Fortran-order) view
    c = gemm._operand(np, (3, 5), (20, 4), "<f4")
    assert f.shape == c.shape == (3, 5)
    assert f.strides == (4, 12) and c.strides == (20, 4)


def test_unknown_workload_is_refused():
    with pytest.raises(SystemExit):
        gemm.main(["no_such_workload"])
