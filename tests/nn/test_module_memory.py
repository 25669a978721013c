"""Module hooks never keep a model alive by themselves (issue: hooks and memory)."""

from __future__ import annotations

import gc
import weakref

import hookgrad


def _hooked_model():
    m = hookgrad.nn.Sequential(hookgrad.nn.Linear(3, 3), hookgrad.nn.ReLU(),
                               hookgrad.nn.Linear(3, 1))
    for layer in m:
        layer.register_forward_pre_hook(lambda mod, args: None)
        layer.register_forward_hook(lambda mod, args, out: None)
        layer.register_full_backward_pre_hook(lambda mod, go: None)
        layer.register_full_backward_hook(lambda mod, gi, go: None)
        for p in layer.parameters():
            p.register_hook(lambda g: None)
            p.register_post_accumulate_grad_hook(lambda p: None)
    return m


def test_dropping_model_and_graph_frees_modules_and_parameters_with_hooks():
    m = _hooked_model()
    x = hookgrad.ones(2, 3, requires_grad=True)
    out = m(x).sum()
    out.backward()
    refs = [weakref.ref(m), weakref.ref(m[0]), weakref.ref(m[0].weight)]
    del m, out
    gc.collect()
    assert all(r() is None for r in refs)


def test_global_hooks_do_not_keep_models_alive():
    from hookgrad.nn.modules.module import register_module_forward_hook

    handle = register_module_forward_hook(lambda mod, args, out: None)
    try:
        m = _hooked_model()
        m(hookgrad.ones(1, 3, requires_grad=True)).sum().backward()
        ref = weakref.ref(m)
        del m
        gc.collect()
        assert ref() is None
    finally:
        handle.remove()
