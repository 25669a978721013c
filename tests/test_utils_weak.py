"""``torch.utils.weak``: identity-keyed weak containers behave as PyTorch's (oracle)."""

from __future__ import annotations

import copy
import gc

import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _scenario(L):
    from importlib import import_module

    weak = import_module(L.__name__ + ".utils.weak")
    d = weak.WeakIdKeyDictionary()
    a, b, c = L.ones(2), L.ones(2), L.zeros(3)  # a == b elementwise: identity must decide
    d[a], d[b] = "a", "b"
    out = [len(d), d[a], d[b], a in d, c in d, d.get(c, "none"), sorted(d.values())]
    d.setdefault(c, "c")
    out.append(len(d))
    del a
    gc.collect()
    out += [len(d), sorted(v for _, v in d.items()), d.pop(b), len(d)]
    e = copy.copy(d)
    out += [len(e), e[c], isinstance(d, weak.WeakTensorKeyDictionary)]
    r, ref = weak.TensorWeakRef(c), weak.WeakIdRef(c)
    out += [r() is c, hash(ref) == id(c), ref == weak.WeakIdRef(c)]
    del c, e
    gc.collect()
    out += [len(d), r() is None]
    try:
        d[L.ones(1)]
    except KeyError:
        out.append("KeyError")
    return out


def test_weak_id_key_dictionary_matches_pytorch(torch):
    assert _scenario(hookgrad) == _scenario(torch)


def test_all_matches(torch):
    import hookgrad.utils.weak as ours
    import torch.utils.weak as theirs

    assert sorted(ours.__all__) == sorted(theirs.__all__)
