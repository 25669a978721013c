"""Hooks never keep graphs or tensors alive by themselves (architecture §9 "Hooks that keep objects
alive"): weakref + gc checks, and a 10,000-iteration tracemalloc check."""

from __future__ import annotations

import gc
import tracemalloc
import weakref

import hookgrad
from hookgrad.autograd.graph import register_multi_grad_hook, saved_tensors_hooks


def _graph_with_every_hook(log):
    a = hookgrad.ones(2, requires_grad=True)
    b = a * 2
    c = b.exp()
    d = c.sum()
    # Hooks that close over the tensors they are registered on (cycles) and plain ones.
    a.register_hook(lambda g: log.append(a.shape))
    a.register_post_accumulate_grad_hook(lambda p: log.append("post-acc"))
    b.register_hook(lambda g: log.append(b.shape))
    b.retain_grad()
    c.grad_fn.register_prehook(lambda go: log.append(c.grad_fn.name()))
    c.grad_fn.register_hook(lambda gi, go: None)
    acc = b.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: None)
    register_multi_grad_hook((b, c), lambda gs: log.append(len(gs)))
    register_multi_grad_hook((a, c), lambda g: None, mode="any")
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        e = (b * c).sum()
    return a, b, c, d, e, acc


def _refs(objs):
    return [weakref.ref(o) for o in objs]


def test_dropping_last_reference_frees_graph_and_tensors_with_hooks():
    log = []
    objs = _graph_with_every_hook(log)
    a, b, c, d, e, acc = objs
    refs = _refs(list(objs) + [b.grad_fn, c.grad_fn, d.grad_fn, e.grad_fn])
    (d + e).backward(retain_graph=True)
    assert log  # the hooks did run
    del a, b, c, d, e, acc, objs
    gc.collect()
    assert [r() for r in refs] == [None] * len(refs)


def test_handles_do_not_keep_tensors_or_nodes_alive():
    a = hookgrad.ones(2, requires_grad=True)
    b = a * 2
    handles = [a.register_hook(lambda g: None), b.register_hook(lambda g: None),
               b.grad_fn.register_hook(lambda gi, go: None),
               register_multi_grad_hook((a, b), lambda gs: None)]
    refs = _refs([a, b, b.grad_fn])
    del a, b
    gc.collect()
    assert [r() for r in refs] == [None, None, None]
    for h in handles:
        h.remove()  # silent after the owners died


def test_graph_without_cycles_is_freed_without_gc():
    gc.disable()
    try:
        a = hookgrad.ones(2, requires_grad=True)
        y = (a * 2).exp()
        y.register_hook(lambda g: None)
        y.grad_fn.register_prehook(lambda go: None)
        refs = _refs([y, y.grad_fn])
        y.sum().backward()
        del y
        assert [r() for r in refs] == [None, None]
    finally:
        gc.enable()


def _iteration(w, log, i):
    x = w * 2
    x.register_hook(lambda g: None)
    x.grad_fn.register_prehook(lambda go: None)
    if i % 10 == 0:  # the heavier surfaces every 10th iteration keeps the test fast
        with register_multi_grad_hook((x, w), lambda gs: log.append(1)), saved_tensors_hooks(
                lambda t: t, lambda t: t):
            y = x.exp()
    else:
        y = x.exp()
    y.sum().backward()


def test_ten_thousand_iterations_with_hooks_do_not_grow_memory():
    log = []
    w = hookgrad.ones(1, requires_grad=True)
    w.register_hook(lambda g: None)
    w.register_post_accumulate_grad_hook(lambda p: setattr(p, "grad", None))
    for i in range(200):  # warm caches (node classes, interned names)
        _iteration(w, log, i)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(10_000):
            _iteration(w, log, i)
        log.clear()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"memory grew by {grown} bytes over 10,000 iterations"


def test_multi_grad_hook_does_not_keep_other_tensors_graph_alive():
    # hookgrad extension: PyTorch's closure keeps y's graph alive as long as `a` lives.
    log = []
    a = hookgrad.ones(2, requires_grad=True)
    b = hookgrad.ones(2, requires_grad=True)
    y = b * 2
    register_multi_grad_hook((a, y), lambda gs: log.append([g is None for g in gs]))
    refs = _refs([y, y.grad_fn, b])
    (a * 3).sum().backward()
    del y, b
    gc.collect()
    assert [r() for r in refs] == [None, None, None]
    (a * 3).sum().backward()
    assert log == [[False, True], [False, True]]
