"""The named tuples of ``hookgrad.return_types`` behave like ``torch.return_types``."""

from __future__ import annotations

import pickle

import pytest

import hookgrad


def _results(lib):
    x = lib.tensor([[1.0, 3.0, 2.0], [4.0, 0.0, 5.0]])
    return {
        "max": x.max(1), "min": lib.min(x, dim=0, keepdim=True), "sort": x.sort(),
        "topk": lib.topk(x, 2),
    }


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["max", "min", "sort", "topk"])
def test_named_tuple_behaviour_matches_torch(torch, name):
    rt, rh = _results(torch)[name], _results(hookgrad)[name]
    assert type(rh).__name__ == type(rt).__name__ == name
    assert isinstance(rh, tuple) and len(rh) == len(rt) == 2
    assert type(rh).n_fields == type(rt).n_fields
    values, indices = rh
    assert values is rh.values is rh[0] and indices is rh.indices is rh[1]
    assert rh.values.tolist() == rt.values.tolist()
    assert rh.indices.tolist() == rt.indices.tolist()
    assert repr(rh) == repr(rt)


@pytest.mark.oracle
def test_constructed_from_a_sequence_like_torch(torch):
    for lib in (torch, hookgrad):
        r = lib.return_types.max((lib.tensor(1.0), lib.tensor(2)))
        assert r.values.item() == 1.0 and r.indices.item() == 2
        with pytest.raises(TypeError):
            lib.return_types.sort((lib.tensor(1.0),))


def test_pickles_and_compares_as_tuple():
    r = hookgrad.tensor([3.0, 1.0]).sort()
    back = pickle.loads(pickle.dumps(r))
    assert type(back) is type(r) and back.indices.tolist() == [1, 0]
    assert r == (r.values, r.indices)
    assert hookgrad.return_types.topk.__module__ == "hookgrad.return_types"
