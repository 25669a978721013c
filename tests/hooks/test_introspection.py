"""hookgrad extension: `hookgrad.utils.hooks_info` / `remove_all_hooks` (no PyTorch equivalent)."""

from __future__ import annotations

import hookgrad
from hookgrad.utils import hooks_info, remove_all_hooks


def _kinds(obj):
    return [(i.kind, i.id) for i in hooks_info(obj)]


def test_hooks_info_lists_tensor_hooks_with_handle_ids():
    a = hookgrad.ones(2, requires_grad=True)
    assert hooks_info(a) == []
    h1 = a.register_hook(lambda g: None)
    h2 = a.register_post_accumulate_grad_hook(lambda p: None)
    h3 = a.register_hook(lambda g: None)
    assert _kinds(a) == [("backward_hooks", h1.id), ("backward_hooks", h3.id),
                         ("post_accumulate_grad_hooks", h2.id)]
    h1.remove()
    assert _kinds(a) == [("backward_hooks", h3.id), ("post_accumulate_grad_hooks", h2.id)]


def test_hooks_info_on_nodes_includes_hooks_that_fire_there():
    a = hookgrad.ones(2, requires_grad=True)
    b = a * 2
    hb = b.register_hook(lambda g: None)
    pre = b.grad_fn.register_prehook(lambda go: None)
    post = b.grad_fn.register_hook(lambda gi, go: None)
    assert _kinds(b.grad_fn) == [("pre_hooks", pre.id), ("post_hooks", post.id),
                                 ("tensor_hooks[0]", hb.id)]
    acc = b.grad_fn.next_functions[0][0]
    ha = a.register_hook(lambda g: None)
    hp = a.register_post_accumulate_grad_hook(lambda p: None)
    assert _kinds(acc) == [("tensor_hooks[0]", ha.id), ("post_accumulate_grad_hooks", hp.id)]


def test_remove_all_hooks_silences_everything_and_handles_stay_valid():
    log = []
    a = hookgrad.ones(2, requires_grad=True)
    b = a * 2
    h = b.register_hook(lambda g: log.append("b"))
    b.grad_fn.register_prehook(lambda go: log.append("pre"))
    a.register_hook(lambda g: log.append("a"))
    assert remove_all_hooks(b.grad_fn) == 2
    assert remove_all_hooks(a) == 1
    assert remove_all_hooks(a) == 0
    h.remove()
    b.sum().backward()
    assert log == [] and a.grad.tolist() == [2.0, 2.0]
    assert hooks_info(b) == [] and hooks_info(b.grad_fn) == []


def test_hooks_info_reports_flags_of_module_style_registries():
    from hookgrad.utils.hooks import HookRegistry

    class Owner:
        def __init__(self):
            self._forward_hooks = HookRegistry()

    o = Owner()
    h = o._forward_hooks.add(print, with_kwargs=True, always_call=True)
    (info,) = hooks_info(o)
    assert (info.kind, info.id, info.fn, info.with_kwargs, info.always_call) == (
        "forward_hooks", h.id, print, True, True)
    assert remove_all_hooks(o) == 1 and not o._forward_hooks.flags
