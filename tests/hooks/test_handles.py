"""`RemovableHandle` (spec §2, scenarios 1-6): shared ids, removal, context manager, extra dicts."""

from __future__ import annotations

import gc
import pickle
from collections import OrderedDict

import pytest

import hookgrad
from hookgrad.utils.hooks import HookRegistry, RemovableHandle
from tests.hooks._scenario import check, has

pytestmark = pytest.mark.oracle


def s_ids_global_and_monotonic(lib, log):
    a = lib.ones(2, requires_grad=True)
    b = a * 2
    handles = [
        a.register_hook(lambda g: None),
        b.grad_fn.register_hook(lambda gi, go: None),
        b.grad_fn.register_prehook(lambda go: None),
        a.register_post_accumulate_grad_hook(lambda p: None),
        b.register_hook(lambda g: None),
    ]
    if has(hookgrad, "nn.Module"):
        m = lib.nn.Module()
        handles.append(m.register_forward_hook(lambda *a: None))
        handles.append(m.register_forward_pre_hook(lambda *a: None))
    if has(hookgrad, "optim.SGD"):
        opt = lib.optim.SGD([a], lr=0.1)
        handles.append(opt.register_step_pre_hook(lambda *a: None))
        handles.append(opt.register_step_post_hook(lambda *a: None))
    handles.append(lib.utils.hooks.RemovableHandle(OrderedDict()))
    first = handles[0].id
    return [h.id - first for h in handles], lib.utils.hooks.RemovableHandle.next_id - first


def test_handle_ids_are_global_and_monotonic(torch):
    out = check(s_ids_global_and_monotonic, torch)
    ids, nxt = out["result"]
    assert ids == list(range(len(ids))) and nxt == len(ids)


def s_remove_idempotent(lib, log):
    a = lib.ones(2, requires_grad=True)
    h = a.register_hook(lambda g: log.append("hook"))
    h.remove()
    h.remove()
    (a * 2).sum().backward()
    b = lib.ones(2, requires_grad=True)
    y = b * 2
    h_tensor = b.register_hook(lambda g: None)
    h_node = y.grad_fn.register_hook(lambda gi, go: None)
    h_pre = y.grad_fn.register_prehook(lambda go: None)
    del b, y
    gc.collect()
    for h in (h_tensor, h_node, h_pre, h_tensor):
        h.remove()
    log.append("done")
    return a._backward_hooks is not None and len(a._backward_hooks)


def test_handle_remove_is_idempotent(torch):
    check(s_remove_idempotent, torch, log=["done"])


def s_context_manager(lib, log):
    a = lib.ones(2, requires_grad=True)
    with a.register_hook(lambda g: log.append("inside")) as h:
        log.append(type(h).__name__)
        (a * 2).sum().backward()
    log.append("|")
    (a * 2).sum().backward()
    return a.grad


def test_handle_context_manager_removes_on_exit(torch):
    check(s_context_manager, torch, log=["RemovableHandle", "inside", "|"])


def s_same_function_twice(lib, log):
    a = lib.ones(2, requires_grad=True)

    def hook(g):
        log.append("hook")

    h1 = a.register_hook(hook)
    h2 = a.register_hook(hook)
    (a * 2).sum().backward()
    log.append("|")
    h1.remove()
    (a * 2).sum().backward()
    return h2.id - h1.id


def test_same_function_registered_twice_runs_twice(torch):
    check(s_same_function_twice, torch, log=["hook", "hook", "|", "hook"])


def s_remove_later_hook_during_backward(lib, log):
    a = lib.ones(2, requires_grad=True)
    hs = {}

    def first(g):
        log.append("first")
        hs["second"].remove()

    a.register_hook(first)
    hs["second"] = a.register_hook(lambda g: log.append("second"))
    (a * 1).sum().backward()
    log.append("|")
    (a * 1).sum().backward()


def test_remove_later_hook_during_backward_still_runs_this_pass(torch):
    check(s_remove_later_hook_during_backward, torch, log=["first", "second", "|", "first"])


def s_extra_dict_cleanup(lib, log):
    hooks, side1, side2 = OrderedDict(), OrderedDict(), OrderedDict()
    h = lib.utils.hooks.RemovableHandle(hooks, extra_dict=[side1, side2])
    hooks[h.id] = "fn"
    side1[h.id] = True
    side2[h.id] = True
    single = OrderedDict()
    h2 = lib.utils.hooks.RemovableHandle(hooks, extra_dict=single)
    hooks[h2.id] = "fn2"
    single[h2.id] = True
    h.remove()
    h2.remove()
    out = [len(hooks), len(side1), len(side2), len(single)]
    if has(hookgrad, "nn.Module"):
        m = lib.nn.Module()
        hm = m.register_forward_hook(lambda *a: None, with_kwargs=True, always_call=True)
        out.append((len(m._forward_hooks_with_kwargs), len(m._forward_hooks_always_called)))
        hm.remove()
        out.append((len(m._forward_hooks), len(m._forward_hooks_with_kwargs),
                    len(m._forward_hooks_always_called)))
    return out


def test_extra_dict_cleanup_on_module_forward_hook(torch):
    check(s_extra_dict_cleanup, torch)


def s_plain_dict_rejected(lib, log):
    return lib.utils.hooks.RemovableHandle({})


def test_removable_handle_over_plain_dict_raises_e44(torch):
    check(s_plain_dict_rejected, torch, exc="TypeError")


def test_handle_pickle_roundtrip_bumps_counter():
    reg = HookRegistry()
    h = reg.add(print)
    RemovableHandle.next_id = h.id  # pretend the id was never issued
    h2 = pickle.loads(pickle.dumps(h))
    assert h2.id == h.id and RemovableHandle.next_id == h.id + 1


def test_handle_holds_registry_weakly():
    reg = HookRegistry()
    h = reg.add(print)
    del reg
    gc.collect()
    assert h.hooks_dict_ref() is None
    h.remove()  # silent


def test_registry_prepend_and_flags():
    reg = HookRegistry()
    h1 = reg.add("a")
    h2 = reg.add("b", prepend=True, with_kwargs=True, always_call=True)
    assert list(reg.values()) == ["b", "a"]
    assert list(reg.ids_with("always_call")) == [h2.id]
    h2.remove()
    assert list(reg) == [h1.id] and not reg.flags
