"""Generic test over the OpSpec table: vector-Jacobian products vs the oracle.

For every sample, a random cotangent (the same values for both libraries) is pulled back through
every differentiable output with ``autograd.grad``; the gradients of every input that requires
grad (``None`` for unused inputs) must match PyTorch's.
"""

from __future__ import annotations

import pytest

from hookgrad.testing._opspec import all_specs, make_arrays
from hookgrad.testing._oracle import (
    assert_same,
    build_inputs,
    call_spec,
    cotangents,
    diff_inputs,
    flat_tensors,
    spec_cases,
)

CASES, IDS = spec_cases(all_specs())


@pytest.mark.oracle
@pytest.mark.parametrize(("spec", "sample"), CASES, ids=IDS)
def test_vjp_vs_torch(torch, spec, sample):
    if spec.nondeterministic_grad:
        pytest.skip("spec.nondeterministic_grad: PyTorch's choice among ties may differ")
    arrays = make_arrays(sample)

    def scenario(lib, log):
        inputs = build_inputs(lib, sample, arrays)
        outs = [o for o in flat_tensors(call_spec(lib, spec, sample, inputs)) if o.requires_grad]
        wrt = diff_inputs(inputs)
        log.append((len(outs), len(wrt)))
        if not outs or not wrt:
            return None
        cots = [lib.tensor(c) for c in cotangents(outs)]
        return lib.autograd.grad(outs, wrt, cots, allow_unused=True)

    assert_same(scenario, torch, rtol=spec.rtol, atol=spec.atol)
