"""Oracle tests of the ``*_copy`` view variants, the signal windows and ``logspace``."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.census._both import run_both, same

pytestmark = pytest.mark.oracle
r = np.random.RandomState(3)
X, X3 = r.randn(3, 4), r.randn(2, 3, 4)

COPIES = {
    "alias_copy": (lambda L, t: L.alias_copy(t[0]), X),
    "diagonal_copy": (lambda L, t: L.diagonal_copy(t[0], 1, 1, 2), X3),
    "expand_copy": (lambda L, t: L.expand_copy(t[0][:1], (2, 4)), X),
    "permute_copy": (lambda L, t: L.permute_copy(t[0], (2, 0, 1)), X3),
    "select_copy": (lambda L, t: L.select_copy(t[0], 1, -1), X3),
    "slice_copy": (lambda L, t: L.slice_copy(t[0], 1, 1, 4, 2), X),
    "slice_copy_neg": (lambda L, t: L.slice_copy(t[0], -1, -3), X3),
    "squeeze_copy": (lambda L, t: L.squeeze_copy(t[0][:, :1]), X3),
    "t_copy": (lambda L, t: L.t_copy(t[0]), X),
    "transpose_copy": (lambda L, t: L.transpose_copy(t[0], 0, 2), X3),
    "unfold_copy": (lambda L, t: L.unfold_copy(t[0], 1, 2, 1), X),
    "unfold_copy_step": (lambda L, t: L.unfold_copy(t[0].mT, 0, 3, 2), X3[0].T.copy()),
    "unsqueeze_copy": (lambda L, t: L.unsqueeze_copy(t[0], 1), X),
    "view_copy": (lambda L, t: L.view_copy(t[0], (4, 3)), X),
    "narrow_copy": (lambda L, t: L.narrow_copy(t[0], 1, 1, 2), X),
    "split_copy": (lambda L, t: L.split_copy(t[0], 2, 1), X),
    "split_with_sizes_copy": (lambda L, t: L.split_with_sizes_copy(t[0], [1, 3], 1), X),
    "unbind_copy": (lambda L, t: L.unbind_copy(t[0], 1), X),
}


@pytest.mark.parametrize("name", sorted(COPIES))
def test_copy_variant_matches_pytorch(torch, name):
    fn, *arrays = COPIES[name]
    run_both(torch, fn, *arrays)
    h = fn(hookgrad, [hookgrad.tensor(a) for a in arrays])
    t = fn(torch, [torch.tensor(a) for a in arrays])
    for a, b in (zip(h, t) if isinstance(t, tuple) else [(h, t)]):
        assert a.stride() == b.stride() and a.is_contiguous()


def test_copies_do_not_share_memory():
    x = hookgrad.zeros(2, 3)
    y = hookgrad.unsqueeze_copy(x, 0)
    y.add_(1)
    assert x.sum().item() == 0


WINDOWS = [("hann_window", (5,)), ("hann_window", (6, False)), ("hamming_window", (7,)),
           ("hamming_window", (5, True, 0.5, 0.3)), ("blackman_window", (8,)),
           ("bartlett_window", (6,)), ("bartlett_window", (5, False)),
           ("kaiser_window", (6,)), ("kaiser_window", (5, False, 4.0)),
           ("hann_window", (1,)), ("hann_window", (0,))]


@pytest.mark.parametrize("name,args", WINDOWS)
def test_window_matches_pytorch(torch, name, args):
    h, t = getattr(hookgrad, name)(*args), getattr(torch, name)(*args)
    assert same(h, t) and str(h.dtype) == str(t.dtype)
    h64 = getattr(hookgrad, name)(*args, dtype=hookgrad.float64)
    t64 = getattr(torch, name)(*args, dtype=torch.float64)
    assert same(h64, t64, 1e-12) and str(h64.dtype) == str(t64.dtype)


@pytest.mark.parametrize("args,kw", [((0, 2, 3), {}), ((-1, 1, 5), {"base": 2}),
                                     ((1, 0, 4), {"dtype": "float64"}), ((0, 1, 0), {})])
def test_logspace_matches_pytorch(torch, args, kw):
    def run(L):
        k = dict(kw)
        if "dtype" in k:
            k["dtype"] = getattr(L, k["dtype"])
        return L.logspace(*args, **k)
    h, t = run(hookgrad), run(torch)
    assert same(h, t) and str(h.dtype) == str(t.dtype)


def test_window_errors(torch):
    for lib in (hookgrad, torch):
        with pytest.raises(RuntimeError):
            lib.hann_window(-1)
