"""Every primitive's backward through compiled autograd equals the eager engine, bit for bit.

For each sample of the OpSpec table: ``backward()`` of the op's outputs with random cotangents,
once with the eager engine and twice under compiled autograd (a capture, then a cache hit on
fresh tensors), with a tensor hook on every output so the graph's ``call_hook`` path runs too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hookgrad
from hookgrad.testing._opspec import all_specs, make_arrays
from hookgrad.testing._oracle import (
    build_inputs,
    call_spec,
    cotangents,
    diff_inputs,
    flat_tensors,
    spec_cases,
)

CASES, IDS = spec_cases(all_specs())


def _leaf_grads(spec: Any, sample: Any, arrays: list, hooked: list) -> list:
    inputs = build_inputs(hookgrad, sample, arrays)
    outs = [o for o in flat_tensors(call_spec(hookgrad, spec, sample, inputs)) if o.requires_grad]
    wrt = diff_inputs(inputs)
    if not outs or not wrt:
        return []
    for o in outs:
        if o.grad_fn is not None:
            o.register_hook(lambda g: hooked.append(None if g is None else g.detach().numpy()))
    cots = [hookgrad.tensor(c) for c in cotangents(outs)]
    try:
        hookgrad.autograd.backward(outs, cots)
    except (RuntimeError, NotImplementedError) as e:  # no derivative: the same either way
        return [type(e)]
    return [None if t.grad is None else t.grad.numpy() for t in wrt]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("spec", "sample"), CASES, ids=IDS)
def test_compiled_autograd_equals_eager(spec, sample):
    arrays = make_arrays(sample)
    eager_hooked: list = []
    eager = _leaf_grads(spec, sample, arrays, eager_hooked)
    graphs: list = []
    with hookgrad._dynamo.compiled_autograd._enable(lambda gm: graphs.append(gm) or gm):
        for _ in range(2):
            hooked: list = []
            got = _leaf_grads(spec, sample, arrays, hooked)
            assert len(got) == len(eager)
            for a, b in zip(eager, got, strict=True):
                if a is None or isinstance(a, type):
                    assert a is b
                else:
                    assert a.dtype == b.dtype and a.shape == b.shape
                    np.testing.assert_array_equal(a, b)
            assert len(hooked) == len(eager_hooked)
            for a, b in zip(eager_hooked, hooked, strict=True):
                np.testing.assert_array_equal(a, b)
    assert len(graphs) <= 1  # the second pass hit the first capture
    assert not hookgrad._dynamo.utils.counters["compiled_autograd_fallback"]
