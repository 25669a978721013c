"""hookgrad classes pickle under PyTorch's paths, and PyTorch's paths resolve to them."""

from __future__ import annotations

import inspect

import pytest

import hookgrad
from hookgrad._serialization import _class_paths
from hookgrad._serialization._full_unpickler import resolve

pytestmark = pytest.mark.oracle


def _pairs(torch):
    for hns, tns in ((hookgrad.nn, torch.nn), (hookgrad.optim, torch.optim),
                     (hookgrad.optim.lr_scheduler, torch.optim.lr_scheduler)):
        for name in dir(hns):
            ours, theirs = getattr(hns, name), getattr(tns, name, None)
            if inspect.isclass(ours) and inspect.isclass(theirs) and \
                    ours.__module__.startswith("hookgrad"):
                yield ours, theirs


def test_every_public_class_maps_to_torchs_path_and_back(torch):
    pairs = list(_pairs(torch))
    assert len(pairs) > 100
    for ours, theirs in pairs:
        path = _class_paths.torch_path(ours.__module__, ours.__qualname__)
        assert path == (theirs.__module__, theirs.__qualname__), ours
        assert resolve(*path) is ours


def test_unknown_torch_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no counterpart"):
        resolve("torch.nn.modules.linear", "NoSuchLayer")
