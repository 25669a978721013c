"""Every OpSpec sample, forward and VJP, on the strict backend equals the ``cpu`` result.

The strict backend's arrays are not NumPy arrays (NOTE [Strict backend]), so an op that makes
an array behind the backend seam (``np.zeros``, ``np.asarray`` of a result...) fails here, and
its outputs and gradients must stay on the strict device.
"""

from __future__ import annotations

import pytest

import hookgrad
from hookgrad.testing._opspec import all_specs, make_arrays
from hookgrad.testing._oracle import build_inputs, call_spec, cotangents, diff_inputs, spec_cases
from tests.backend._lib import OnDevice, assert_same_values, host

CASES, IDS = spec_cases(all_specs())


def _run(lib, spec, sample, arrays):
    inputs = build_inputs(lib, sample, arrays)
    out = call_spec(lib, spec, sample, inputs)
    flat = out if isinstance(out, (tuple, list)) else [out]
    tensors = [o for o in flat if isinstance(o, hookgrad.Tensor)]
    diff = [o for o in tensors if o.requires_grad]
    wrt = diff_inputs(inputs)
    grads = []
    if diff and wrt:
        cots = [lib.tensor(c) for c in cotangents(diff)]
        grads = hookgrad.autograd.grad(diff, wrt, cots, allow_unused=True)
    return tensors, list(grads)


def _outcome(lib, spec, sample, arrays):
    try:
        return _run(lib, spec, sample, arrays), None
    except (RuntimeError, NotImplementedError, ValueError, IndexError) as e:
        return None, type(e)  # the cpu run raises too: the same type is expected


@pytest.mark.parametrize(("spec", "sample"), CASES, ids=IDS)
def test_op_forward_and_vjp_on_strict_backend_match_cpu(strict, spec, sample):
    if spec.nondeterministic_grad:
        pytest.skip("spec.nondeterministic_grad: ties may be broken differently")
    arrays = make_arrays(sample)
    expected, error = _outcome(hookgrad, spec, sample, arrays)
    if error is not None:
        with pytest.raises(error):
            _run(OnDevice(strict), spec, sample, arrays)
        return
    cpu_outs, cpu_grads = expected
    outs, grads = _run(OnDevice(strict), spec, sample, arrays)
    for t in outs + [g for g in grads if g is not None]:
        assert t.device.type == strict, f"{t.device} tensor from an op on {strict} tensors"
    assert_same_values(host(cpu_outs), host(outs))
    assert_same_values(host(cpu_grads), host(grads))
