"""The private names of ``torch.nn.modules.module`` that libraries read (transformers'
weight loading reads ``_EXTRA_STATE_KEY_SUFFIX``; hook tools read the global registries and
``_has_any_global_hook``): each exists in hookgrad and answers as PyTorch's."""

from __future__ import annotations

import importlib

import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def test_every_private_name_of_torchs_module_file_exists(torch):
    theirs = importlib.import_module("torch.nn.modules.module")
    ours = importlib.import_module("hookgrad.nn.modules.module")
    names = [n for n in vars(theirs) if n.startswith("_") and not n.startswith("__")]
    assert names and [n for n in names if not hasattr(ours, n)] == []


def _answers(lib):
    mod = importlib.import_module(f"{lib.__name__}.nn.modules.module")
    before = bool(mod._has_any_global_hook())  # PyTorch returns one of the (live) registries
    handle = lib.nn.modules.module.register_module_forward_hook(lambda m, i, o: None)
    during = bool(mod._has_any_global_hook())
    handle.remove()
    return [mod._EXTRA_STATE_KEY_SUFFIX, before, during, bool(mod._has_any_global_hook())]


def test_answers_match_torch(torch):
    assert _answers(hookgrad) == _answers(torch)
