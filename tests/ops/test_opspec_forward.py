"""Generic test over the OpSpec table (architecture.md §7.1): forward values vs the oracle.

Each sample runs through ``spec.fn`` on PyTorch and on hookgrad with the same input values;
outputs (values, dtypes, ``requires_grad``), exceptions and warnings must agree.
"""

from __future__ import annotations

import pytest

from hookgrad.testing._opspec import all_specs, make_arrays
from hookgrad.testing._oracle import assert_same, build_inputs, call_spec, spec_cases

CASES, IDS = spec_cases(all_specs())


@pytest.mark.oracle
@pytest.mark.parametrize(("spec", "sample"), CASES, ids=IDS)
def test_forward_vs_torch(torch, spec, sample):
    arrays = make_arrays(sample)

    def scenario(lib, log):
        return call_spec(lib, spec, sample, build_inputs(lib, sample, arrays))

    assert_same(scenario, torch, rtol=spec.rtol, atol=spec.atol)
