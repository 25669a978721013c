"""Node hooks see one slot per *differentiable* output, as PyTorch's nodes have."""

from __future__ import annotations

import pytest

import hookgrad


def _slots(lib):
    log = []

    def watch(t, tag):
        t.grad_fn.register_prehook(lambda go: log.append((tag, "pre", len(go))))
        t.grad_fn.register_hook(lambda gi, go: log.append((tag, "post", len(gi), len(go))))

    x = lib.ones(1, 1, 4, 4, requires_grad=True)
    y = lib.nn.functional.max_pool2d(x, 2)
    watch(y, "max_pool2d")
    y.sum().backward()
    for tag, mod, inp in (("batch_norm", lib.nn.BatchNorm1d(3), lib.ones(4, 3)),
                          ("layer_norm", lib.nn.LayerNorm(3), lib.ones(4, 3))):
        z = mod(inp.requires_grad_())
        watch(z, tag)
        z.sum().backward()
    m = lib.max(lib.tensor([[1.0, 3.0], [2.0, 0.0]], requires_grad=True), 0)
    watch(m.values, "max_dim")
    m.values.sum().backward()
    return log


@pytest.mark.oracle
def test_node_hook_tuple_lengths_match_torch_for_ops_with_index_outputs(torch):
    assert _slots(hookgrad) == _slots(torch)
