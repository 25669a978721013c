"""Forward-mode AD API against PyTorch's ``torch.autograd.forward_ad`` (issue: forward AD)."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from hookgrad.autograd import forward_ad as fwad


def _fw(lib):
    if lib is hookgrad:
        return fwad
    import torch.autograd.forward_ad as tfw

    return tfw


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type is what we compare
        return type(e).__name__, str(e)
    return None


def _api_errors(lib):
    fw = _fw(lib)
    x = lib.tensor([1.0, 2.0])
    out = [_error(lambda: fw.make_dual(x, lib.ones(2)))]
    with fw.dual_level():
        out.append(_error(lambda: fw.enter_dual_level()))
        out.append(_error(lambda: fw.make_dual(x, lib.ones(3))))
        out.append(fw.unpack_dual(x).tangent)
    out.append(_error(lambda: fw.exit_dual_level(level=0)))
    lvl = fw.enter_dual_level()
    out.append(lvl)
    out.append(_error(lambda: fw.exit_dual_level(level=5)))
    fw.exit_dual_level()
    out.append(_error(lambda: fw.make_dual(x, lib.ones(2), level=0)))
    return out


@pytest.mark.oracle
def test_level_api_errors_match_torch(torch):
    assert _api_errors(hookgrad) == _api_errors(torch)


def _tangent_flow(lib):
    fw = _fw(lib)
    x = lib.tensor([0.5, 1.5, -1.0])
    with fw.dual_level():
        d = fw.make_dual(x, lib.tensor([1.0, -2.0, 0.5]))
        y = (d.exp() * d - d / 3.0).sum()
        v = d.view(3, 1) * 2
        p, t = fw.unpack_dual(y)
        res = [p.tolist(), t.tolist(), fw.unpack_dual(v).tangent.tolist(),
               type(fw.unpack_dual(y)).__name__, fw.unpack_dual(y)._fields]
    res.append(fw.unpack_dual(d).tangent)  # tangents are gone after the level exits
    return res


@pytest.mark.oracle
def test_tangents_through_ops_and_views_match_torch(torch):
    got, want = _tangent_flow(hookgrad), _tangent_flow(torch)
    assert got[3:] == want[3:]
    for g, w in zip(got[:3], want[:3]):
        np.testing.assert_allclose(g, w, rtol=1e-5)


def _inplace_tangent(lib):
    fw = _fw(lib)
    with fw.dual_level():
        base = lib.tensor([1.0, 2.0, 3.0]).clone()
        d = fw.make_dual(base, lib.tensor([1.0, 1.0, 1.0]))
        y = d.clone()
        y.mul_(lib.tensor([2.0, 3.0, 4.0]))
        return fw.unpack_dual(y).tangent.tolist()


@pytest.mark.oracle
def test_inplace_tangent_matches_torch(torch):
    assert _inplace_tangent(hookgrad) == _inplace_tangent(torch)


def _forward_over_reverse(lib):
    fw = _fw(lib)
    x = lib.tensor([0.3, -0.7], requires_grad=True)
    v = lib.tensor([1.0, 0.5])
    with fw.dual_level():
        d = fw.make_dual(x, v)
        y = (d * d * d).sum()
        (g,) = lib.autograd.grad(y, d, create_graph=True)
        return fw.unpack_dual(g).tangent.tolist()  # Hessian-vector product 6 x v


@pytest.mark.oracle
def test_forward_over_reverse_hvp_matches_torch(torch):
    assert _forward_over_reverse(hookgrad) == pytest.approx(_forward_over_reverse(torch))


def test_dual_outside_level_has_no_tangent():
    x = hookgrad.tensor([1.0])
    assert fwad.unpack_dual(x).tangent is None
