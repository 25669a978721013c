"""``nn.AdaptiveLogSoftmaxWithLoss`` against PyTorch with copied weights: output, loss and every
gradient, ``log_prob``, ``predict``, 0-d targets, construction (repr, parameter names, state_dict
keys) and errors."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err
from tests.nn._compare import copy_state, to_lib


def _pair(torch, *args, **kw):
    kw.setdefault("dtype", torch.float64)
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(*args, **kw)
    kw["dtype"] = hookgrad.float64
    hm = hookgrad.nn.AdaptiveLogSoftmaxWithLoss(*args, **kw)
    copy_state(tm, hm, hookgrad)
    return tm, hm


@pytest.mark.parametrize("cutoffs,head_bias", [([3, 6], False), ([2], True), ([1, 4, 8], False)])
def test_forward_backward(torch, cutoffs, head_bias):
    rng = np.random.default_rng(0)
    tm, hm = _pair(torch, 16, 10, cutoffs, div_value=2.0, head_bias=head_bias)
    x = rng.standard_normal((7, 16))
    target = np.array([0, 9, 3, 5, 2, 7, 1])
    res = []
    for lib, m in ((torch, tm), (hookgrad, hm)):
        xt = to_lib(lib, x, True)
        out, loss = m(xt, to_lib(lib, target))
        (out.sum() * 0.3 + loss).backward()
        res.append([out.detach().numpy(), loss.detach().numpy(), xt.grad.numpy(),
                    *[p.grad.numpy() for p in m.parameters()],
                    m.log_prob(to_lib(lib, x)).detach().numpy(),
                    m.predict(to_lib(lib, x)).numpy(), m.predict(to_lib(lib, x * 0)).numpy()])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def test_unbatched_and_structure(torch):
    tm, hm = _pair(torch, 8, 6, [2, 4], div_value=1.5)
    x = np.random.default_rng(1).standard_normal(8)
    outs = [m(to_lib(lib, x), lib.tensor(5)) for lib, m in ((torch, tm), (hookgrad, hm))]
    for a, b in zip(*outs):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), atol=1e-12)
    assert type(outs[1]).__name__ == "_ASMoutput" and outs[1]._fields == ("output", "loss")
    assert repr(hm) == repr(tm)
    assert list(hm.state_dict()) == list(tm.state_dict())
    for attr in ("cutoffs", "shortlist_size", "n_clusters", "head_size", "div_value"):
        assert getattr(hm, attr) == getattr(tm, attr)
    assert hookgrad.nn.modules.adaptive.AdaptiveLogSoftmaxWithLoss is (
        hookgrad.nn.AdaptiveLogSoftmaxWithLoss)


def _calls(lib):
    m = lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 4], div_value=1.0)
    return [
        lambda: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, []),
        lambda: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [4, 2]),
        lambda: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 6]),
        lambda: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 2]),
        lambda: m(lib.zeros(3, 4), lib.tensor([0, 1])),
        lambda: m(lib.zeros(3, 4, 1), lib.tensor([0, 1, 2])),
        lambda: m(lib.zeros(3, 4), lib.tensor(1)),
        lambda: m(lib.zeros(3, 4), lib.tensor([[1]])),
        lambda: m(lib.zeros(3, 4), lib.tensor([0, 1, 6])),
    ]


def test_errors_match_torch(torch):
    for h, t in zip(_calls(hookgrad), _calls(torch)):
        assert err(h) == err(t)
