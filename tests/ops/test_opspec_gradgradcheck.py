"""Generic test over the OpSpec table: second-order gradient check (float64; runs without torch).

The full (slow-mode) check: the samples are small, and projected checks (``fast_mode=True``)
can miss a wrong entry of the second-order Jacobian.
"""

from __future__ import annotations

import pytest

from hookgrad.autograd.gradcheck import gradgradcheck
from hookgrad.testing._opspec import all_specs
from hookgrad.testing._oracle import gradcheck_function, spec_cases

CASES, IDS = spec_cases(all_specs())


@pytest.mark.parametrize(("spec", "sample"), CASES, ids=IDS)
def test_gradgradcheck(spec, sample):
    if not (spec.gradcheck and spec.gradgradcheck):
        pytest.skip(f"spec.gradcheck={spec.gradcheck}, spec.gradgradcheck={spec.gradgradcheck}")
    f, inputs = gradcheck_function(spec, sample)
    if not inputs:
        return  # nothing in this sample requires grad
    assert gradgradcheck(f, inputs)
