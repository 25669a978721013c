"""Saved-tensor hooks see PyTorch's pack calls, op by op (every OpSpec sample).

Activation offloading, checkpointing and memory tools rely on *which* tensors a node saves:
the pack hook is called once per saved tensor when the op runs. For every sample of the OpSpec
table this compares the pack calls (shape, dtype, requires_grad; as a multiset, the order is
checked by the hook tests) with PyTorch's. ``KNOWN`` lists the samples that still differ, each
xfailed strictly so a fix shows up.
"""

from __future__ import annotations

import pytest

from hookgrad.testing._opspec import all_specs, make_arrays
from hookgrad.testing._oracle import build_inputs, call_spec, spec_cases

pytestmark = pytest.mark.oracle

CASES, IDS = spec_cases(all_specs())

# Composite ops whose intermediate nodes save other tensors than PyTorch's fused kernels
# (losses, padding, RNN kernels, linalg helpers) and ops PyTorch computes with saved
# integer workspaces hookgrad does not have.
KNOWN = {
    "F.logsigmoid", "argsort",
    "nll_loss", "nll_loss2d", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "cross_entropy", "mkldnn_rnn_layer", "lstm_fused",
    "pack_padded_sequence", "linalg_solve", "householder_product",
    # PyTorch's det/slogdet kernels save their LU factors and pivots; hookgrad's save the input
    # and the result (an LU-based forward would give the same pack calls)
    "linalg_det", "linalg_slogdet",
}


def _packs(lib, spec, sample, arrays):
    log = []

    def pack(t):
        log.append((tuple(t.shape), str(t.dtype).split(".")[-1], t.requires_grad))
        return t

    inputs = build_inputs(lib, sample, arrays)
    try:
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            call_spec(lib, spec, sample, inputs)
    except Exception as e:  # the exception type is compared too
        return ("raises", type(e).__name__)
    return sorted(log)


@pytest.mark.parametrize(("spec", "sample"), CASES, ids=IDS)
def test_pack_calls_match_torch(torch, spec, sample):
    import hookgrad

    arrays = make_arrays(sample)
    torch.manual_seed(0)
    theirs = _packs(torch, spec, sample, arrays)
    hookgrad.manual_seed(0)
    mine = _packs(hookgrad, spec, sample, arrays)
    if mine != theirs and spec.name in KNOWN:
        pytest.xfail(f"{spec.name}: known different saved values")
    assert mine == theirs
