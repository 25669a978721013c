"""Every sample of the OpSpec table, run on meta copies of its inputs, gives the metadata
(shape, dtype, strides) the ``cpu`` backend gives, or, for the ops listed below, raises
PyTorch's error types for meta tensors. (The oracle tests already compare the ``cpu`` results
with PyTorch.)"""

from __future__ import annotations

import warnings

import pytest

import hookgrad
from hookgrad.testing._opspec import all_specs, make_arrays
from hookgrad.testing._oracle import build_inputs, call_spec, flat_tensors, spec_cases

CASES, IDS = spec_cases(all_specs())

# (op names, or op-sample ids) data-dependent by nature (boolean masks, masked_select: PyTorch raises too), or whose hookgrad
# implementation reads values outside the op table (index checks on the host, LAPACK wrappers
# that build a CPU array, host-only samplers, the packed-sequence sort): they raise here
RAISES = {
    "getitem_bool_mask", "getitem_bool_mask_1d", "masked_select", "setitem_mask_row",
    "setitem_mask_scalar",
    "_standard_gamma", "index_put", "index_put_", "linalg_cholesky", "linalg_det", "linalg_inv",
    "linalg_slogdet", "linalg_solve", "matrix_exp", "mkldnn_rnn_layer", "pack_padded_sequence-batch_first_unsorted",
    "solve_triangular_lower", "solve_triangular_unit", "solve_triangular_upper_right", "take-neg_and_dup",
    # data-dependent output size, as in PyTorch
    "unique_consecutive", "unique", "unique_dim",
    # the samples' index tensors are on the cpu: PyTorch's meta kernels refuse the mix too
    "index_copy", "index_fill", "index_fill_tensor",
    # the sample builds its pivots on the cpu: hookgrad refuses the mixed devices (PyTorch's
    # meta kernels of these two do not check); their meta rules are checked with meta pivots
    # in test_meta_host_kernels.py
    "lu_unpack-identity_pivots", "linalg.lu_solve-identity_pivots",
}


def _meta(x):
    if isinstance(x, hookgrad.Tensor):
        return x.detach().to("meta").requires_grad_(x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(_meta(i) for i in x)
    return x


def _metadata(out):
    return [(tuple(t.shape), t.dtype, t.stride(), t.device.type) for t in flat_tensors(out)]


@pytest.mark.parametrize(("spec", "sample"), CASES, ids=IDS)
def test_meta_metadata_matches_cpu(spec, sample):
    arrays = make_arrays(sample)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            cpu = _metadata(call_spec(hookgrad, spec, sample,
                                      build_inputs(hookgrad, sample, arrays)))
        except Exception:  # noqa: BLE001 - an error sample: the oracle tests cover it
            pytest.skip("the sample raises on cpu")
        inputs = _meta(build_inputs(hookgrad, sample, arrays))
        if spec.name in RAISES or f"{spec.name}-{sample.name}" in RAISES:
            with pytest.raises((NotImplementedError, RuntimeError)):
                call_spec(hookgrad, spec, sample, inputs)
            return
        meta = _metadata(call_spec(hookgrad, spec, sample, inputs))
    assert meta == [(shape, dtype, stride, "meta") for shape, dtype, stride, _ in cpu]
