"""Generic test over the OpSpec table: numerical gradient check (float64; runs without torch).

Float arguments are cast to float64; arguments marked ``requires_grad`` are the checked inputs,
everything else is held constant.
"""

from __future__ import annotations

import pytest

from hookgrad.autograd.gradcheck import gradcheck
from hookgrad.testing._opspec import all_specs
from hookgrad.testing._oracle import gradcheck_function, spec_cases

CASES, IDS = spec_cases(all_specs())


@pytest.mark.parametrize(("spec", "sample"), CASES, ids=IDS)
def test_gradcheck(spec, sample):
    if not spec.gradcheck:
        pytest.skip("spec.gradcheck=False")
    f, inputs = gradcheck_function(spec, sample)
    if not inputs:
        return  # nothing in this sample requires grad
    assert gradcheck(f, inputs)
