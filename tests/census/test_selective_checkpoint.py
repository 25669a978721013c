"""Selective activation checkpointing: policy calls, values, gradients and errors as PyTorch's."""

from __future__ import annotations

import functools

import pytest

import hookgrad
from tests.census._both import error_of

pytestmark = pytest.mark.oracle


def _error(fn):
    return error_of(fn, lambda m: m[:70])




def _inputs(L):
    x = L.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = L.tensor([[0.5, -1.0], [2.0, 1.0]], requires_grad=True)
    return x, y


def test_policy_and_op_list_give_pytorchs_values_and_gradients(torch):
    def scenario(L):
        cp = L.utils.checkpoint
        calls = []

        def policy(ctx, op, *args, **kwargs):
            calls.append((str(op), ctx.is_recompute, ctx.op_output is not None))
            return (cp.CheckpointPolicy.MUST_SAVE if op is L.ops.aten.mm.default
                    else cp.CheckpointPolicy.PREFER_RECOMPUTE)

        def fn(x, y):
            return (L.sigmoid(L.mm(L.mm(x, y), y)) * y).sum()
        out = []
        for how in (policy, [L.ops.aten.mm.default], lambda ctx, op, *a, **k: True):
            x, y = _inputs(L)
            ctx = functools.partial(cp.create_selective_checkpoint_contexts, how)
            loss = cp.checkpoint(fn, x, y, use_reentrant=False, context_fn=ctx)
            loss.backward()
            out.append((round(loss.item(), 6), x.grad.tolist(), y.grad.tolist()))
        return sorted(set(calls)), out
    assert scenario(hookgrad) == scenario(torch)


def test_saved_outputs_are_checked_and_used_once(torch):
    def scenario(L):
        cp = L.utils.checkpoint
        save_mm = functools.partial(cp.create_selective_checkpoint_contexts,
                                    [L.ops.aten.mm.default])

        def mutating(x, y):
            z = L.mm(x, y)
            w = z.sin()
            z.mul_(2)
            return (w * z).sum()
        x, y = _inputs(L)
        loss = cp.checkpoint(mutating, x, y, use_reentrant=False, context_fn=save_mm)
        mutated = _error(loss.backward)
        x, y = _inputs(L)
        allowed = functools.partial(cp.create_selective_checkpoint_contexts,
                                    [L.ops.aten.mm.default], allow_cache_entry_mutation=True)
        loss = cp.checkpoint(lambda a, b: L.mm(a, b).sin().sum(), x, y, use_reentrant=False,
                             context_fn=allowed)
        loss.backward(retain_graph=True)
        twice = _error(loss.backward)
        return (mutated, twice, _error(lambda: cp.create_selective_checkpoint_contexts(
            [L.ops.aten.mm])), _error(lambda: cp.create_selective_checkpoint_contexts(3)),
            isinstance(cp.SAC_IGNORED_OPS, set))
    assert scenario(hookgrad) == scenario(torch)
