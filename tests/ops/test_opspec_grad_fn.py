"""Generic test over the OpSpec table: ``grad_fn`` names and graph shape vs the oracle.

Besides the output's ``grad_fn.name()``, the whole graph below it (node names in BFS order and
their ``next_functions`` edges) must match: a composite where PyTorch has one primitive node
would break node hooks and ``next_functions``.
"""

from __future__ import annotations

import pytest

from hookgrad.testing._opspec import all_specs, make_arrays
from hookgrad.testing._oracle import (
    assert_same,
    build_inputs,
    call_spec,
    flat_tensors,
    graph_signature,
    spec_cases,
)

CASES, IDS = spec_cases(all_specs())


@pytest.mark.oracle
@pytest.mark.parametrize(("spec", "sample"), CASES, ids=IDS)
def test_grad_fn_name_vs_torch(torch, spec, sample):
    if not spec.grad_fn:
        pytest.skip("spec.grad_fn=False")
    arrays = make_arrays(sample)

    def scenario(lib, log):
        out = call_spec(lib, spec, sample, build_inputs(lib, sample, arrays))
        names = [None if o.grad_fn is None else o.grad_fn.name() for o in flat_tensors(out)]
        log.append(names)
        return [graph_signature(o.grad_fn) for o in flat_tensors(out)]

    assert_same(scenario, torch)
