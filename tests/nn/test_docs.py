"""Docstring conventions of hookgrad.nn (architecture.md §8)."""

from __future__ import annotations

import inspect

import hookgrad.nn as nn
import hookgrad.nn.functional as F
import hookgrad.nn.init as init
import hookgrad.nn.modules.module as module_mod
import hookgrad.nn.utils as utils


def _public(ns):
    for name in getattr(ns, "__all__", dir(ns)):
        obj = getattr(ns, name, None)
        if name.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        if getattr(obj, "__module__", "").startswith("hookgrad.nn"):
            yield f"{ns.__name__}.{name}", obj


def test_public_nn_objects_have_mirrors_line():
    missing = [name for ns in (nn, F, init, utils, module_mod) for name, obj in _public(ns)
               if "Mirrors:" not in (obj.__doc__ or "")]
    assert not missing, missing


def test_register_methods_spell_out_hook_signature():
    regs = [n for n in dir(nn.Module) if "register_" in n and "hook" in n]
    bad = [n for n in regs if "hook(" not in (getattr(nn.Module, n).__doc__ or "")]
    globals_ = [n for n in module_mod.__all__ if n.startswith("register_")]
    bad += [n for n in globals_ if "hook(" not in (getattr(module_mod, n).__doc__ or "")]
    assert not bad, bad
