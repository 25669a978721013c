"""What real libraries (opacus, Lightning, backpack, ...) rely on at import and right after.

Each test is an oracle test of the hookgrad behaviour a library needed, run without the library
itself (tests/ecosystem/test_libs.py runs the libraries when they are installed).
"""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _w(L, shape=(7, 3), seed=0):
    rng = np.random.default_rng(seed)
    return L.tensor(rng.standard_normal(shape)).requires_grad_()


_BAGS = [
    dict(input=[[1, 2, 3], [4, 0, 6]], mode="sum"),
    dict(input=[[1, 2, 3], [4, 0, 6]], mode="mean", padding_idx=0),
    dict(input=[[1, 2, 3], [4, 0, 0]], mode="max", padding_idx=0),
    dict(input=[1, 2, 4, 5, 6, 1], offsets=[0, 2, 2], mode="mean"),
    dict(input=[1, 2, 4, 5, 6, 1], offsets=[0, 3, 6], mode="sum", include_last_offset=True),
    dict(input=[1, 2, 4, 5, 6, 1], offsets=[0, 1, 4], mode="max"),
    dict(input=[1, 2, 4, 5], offsets=[0, 2], mode="sum", per_sample_weights=[.5, 2., -1., 3.]),
    dict(input=[3, 3, 0, 0], offsets=[0, 2], mode="mean", padding_idx=-7),
]


@pytest.mark.parametrize("case", range(len(_BAGS)))
def test_embedding_bag_values_and_grads(torch, case):
    def scenario(L):
        spec = dict(_BAGS[case])
        w = _w(L)
        kw = {k: v for k, v in spec.items() if k not in ("input", "offsets", "per_sample_weights")}
        offsets = L.tensor(spec["offsets"]) if "offsets" in spec else None
        psw = spec.get("per_sample_weights")
        psw = L.tensor(psw, dtype=L.float64).requires_grad_() if psw is not None else None
        out = L.nn.functional.embedding_bag(L.tensor(spec["input"]), w, offsets,
                                            per_sample_weights=psw, **kw)
        (out * L.arange(out.numel(), dtype=L.float64).reshape(out.shape)).sum().backward()
        return out.detach().numpy(), w.grad.numpy(), None if psw is None else psw.grad.numpy()

    ref, got = scenario(torch), scenario(hookgrad)
    for r, g in zip(ref, got):
        if r is None:
            assert g is None
        else:
            np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bad", [
    dict(input=[1, 2], offsets=None),
    dict(input=[[1, 2]], offsets=[0]),
    dict(input=[1, 2], offsets=[0], mode="mean", per_sample_weights=[1.0, 1.0]),
    dict(input=[1, 2], offsets=[0], mode="median"),
])
def test_embedding_bag_errors(torch, bad):
    def scenario(L):
        offsets = None if bad["offsets"] is None else L.tensor(bad["offsets"])
        psw = bad.get("per_sample_weights")
        try:
            L.nn.functional.embedding_bag(
                L.tensor(bad["input"]), _w(L), offsets, mode=bad.get("mode", "mean"),
                per_sample_weights=None if psw is None else L.tensor(psw, dtype=L.float64))
        except Exception as e:  # noqa: BLE001 - the type and message are compared
            return type(e).__name__, str(e).split(" of type ")[0]
        return None

    assert scenario(hookgrad) == scenario(torch) != None  # noqa: E711


def test_embedding_bag_module(torch):
    def scenario(L):
        L.manual_seed(0)
        bag = L.nn.EmbeddingBag(10, 3, mode="max", padding_idx=-1)
        pre = L.nn.EmbeddingBag.from_pretrained(L.ones(4, 2), mode="sum")
        return (repr(bag), repr(pre), bag.weight[9].tolist(), pre.weight.requires_grad,
                L.nn.modules.sparse.EmbeddingBag is L.nn.EmbeddingBag,
                L.nn.EmbeddingBag.__module__.split(".", 1)[1],
                pre(L.tensor([[0, 1], [2, 3]])).tolist())

    assert scenario(hookgrad) == scenario(torch)
