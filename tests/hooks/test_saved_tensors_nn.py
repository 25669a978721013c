"""Saved-tensor hooks on nn ops see what PyTorch saves, in PyTorch's pack order."""

from __future__ import annotations

import pytest

import hookgrad


def _packs(lib, fn):
    log = []

    def pack(t):
        log.append((tuple(t.shape), str(t.dtype).replace("torch.", "")))
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = fn(lib)
    saved = y.grad_fn._saved_result1.tolist()
    y.sum().backward()
    return log, saved


@pytest.mark.oracle
def test_max_pool_saves_input_then_indices_like_torch(torch):
    def fn(lib):
        x = lib.arange(32.0).reshape(1, 2, 4, 4).requires_grad_()
        return lib.nn.functional.max_pool2d(x, 2)

    assert _packs(hookgrad, fn) == _packs(torch, fn)


def _pack_shapes(lib, fn):
    log = []

    def pack(t):
        log.append((tuple(t.shape), str(t.dtype).replace("torch.", "")))
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = fn(lib)
    y.sum().backward()
    return log


NORMS = {
    "batch_norm_train": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(4, 3, requires_grad=True), lib.zeros(3), lib.ones(3),
        lib.ones(3, requires_grad=True), lib.zeros(3, requires_grad=True), training=True),
    "batch_norm_eval": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(4, 3, requires_grad=True), lib.zeros(3), lib.ones(3),
        lib.ones(3, requires_grad=True), lib.zeros(3, requires_grad=True), training=False),
    "batch_norm_no_affine_no_stats": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(4, 3, requires_grad=True), None, None, training=True),
    "layer_norm": lambda lib: lib.nn.functional.layer_norm(
        lib.ones(4, 3, requires_grad=True), (3,), lib.ones(3, requires_grad=True),
        lib.zeros(3, requires_grad=True)),
    "layer_norm_no_affine": lambda lib: lib.nn.functional.layer_norm(
        lib.ones(4, 3, requires_grad=True), (3,)),
    "group_norm": lambda lib: lib.nn.functional.group_norm(lib.ones(2, 4, 3, requires_grad=True), 2),
    "group_norm_affine": lambda lib: lib.nn.functional.group_norm(
        lib.ones(2, 4, 3, requires_grad=True), 2, lib.ones(4, requires_grad=True),
        lib.zeros(4, requires_grad=True)),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(NORMS))
def test_norms_pack_what_torch_saves_in_its_order(torch, name):
    assert _pack_shapes(hookgrad, NORMS[name]) == _pack_shapes(torch, NORMS[name])
