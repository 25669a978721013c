"""Hooks on AccumulateGrad nodes and their weak caching (spec §1.1, §4.4; scenario 31)."""

from __future__ import annotations

import gc

import pytest

from tests.hooks._scenario import L, check

pytestmark = pytest.mark.oracle


def s_acc_order(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 3
    acc = b.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: log.append(("acc-pre", L(go))))
    acc.register_hook(lambda gi, go: log.append(("acc-post", L(gi), L(go))))
    a.register_post_accumulate_grad_hook(lambda p: log.append("post-acc"))
    a.register_hook(lambda g: log.append("tensor"))
    b.sum().backward()
    return acc.name(), a.grad


def test_accumulategrad_node_hooks_order(torch):
    check(s_acc_order, torch, log=["tensor", ("acc-pre", [[3.0, 3.0]]), "post-acc",
                                   ("acc-post", [], [[3.0, 3.0]])])


def s_acc_prehook_replaces(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    edge = lib.autograd.graph.get_gradient_edge(a)
    edge.node.register_prehook(lambda go: (go[0] * 10,))
    edge.node.register_hook(lambda gi, go: log.append(("post", L(go))))
    a.register_hook(lambda g: g + 1)
    (a * 3).sum().backward()
    return a.grad, edge.output_nr, edge.node is (a * 1).grad_fn.next_functions[0][0]


def test_accumulategrad_prehook_replacement_and_gradient_edge(torch):
    check(s_acc_prehook_replaces, torch, log=[("post", [[40.0, 40.0]])])


def s_weak_cache(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    # Hook on an accumulator that nothing keeps alive: lost with the graph.
    (a * 1).grad_fn.next_functions[0][0].register_prehook(lambda go: log.append("lost"))
    gc.collect()
    (a * 2).sum().backward()
    log.append("|")
    # Holding the node keeps it (and its hooks) in use.
    acc = (a * 1).grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: log.append("kept"))
    gc.collect()
    (a * 2).sum().backward()
    log.append("|")
    # Hooks registered through the tensor survive any accumulator turnover.
    del acc
    gc.collect()
    a.register_hook(lambda g: log.append("tensor"))
    (a * 2).sum().backward()
    return a.grad


def test_accumulategrad_weak_caching(torch):
    check(s_weak_cache, torch, log=["|", "kept", "|", "tensor"])


def s_graph_keeps_acc(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (a * 2).sum()
    y.grad_fn.next_functions[0][0].next_functions[0][0].register_prehook(
        lambda go: log.append("via-graph"))
    gc.collect()
    y.backward()


def test_accumulategrad_kept_alive_by_graph(torch):
    check(s_graph_keeps_acc, torch, log=["via-graph"])


def s_leaf_root(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    a.register_hook(lambda g: log.append(("hook", g.tolist())))
    a.register_post_accumulate_grad_hook(lambda p: log.append(("post", p.grad.tolist())))
    a.backward(lib.tensor([5.0, 6.0]))
    return a.grad


def test_leaf_as_root_runs_hooks_and_accumulates(torch):
    check(s_leaf_root, torch, log=[("hook", [5.0, 6.0]), ("post", [5.0, 6.0])])
