"""``F.ctc_loss``, ``torch.ctc_loss`` and ``nn.CTCLoss`` against PyTorch: losses and gradients
for both target layouts, every reduction, ``zero_infinity`` with impossible alignments, float32,
blank other than 0, tensor lengths, the module's construction, and argument errors.
(The float64 gradchecks are the OpSpecs in ``hookgrad/testing/_opspec/nn_extra.py``.)"""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err
from tests.nn._compare import to_lib


def _case(lib, x, targets, il, tl, through_softmax, **kw):
    xt = to_lib(lib, x, True)
    lp = xt.log_softmax(-1) if through_softmax else xt
    if isinstance(il, np.ndarray):
        il, tl = to_lib(lib, il), to_lib(lib, tl)
    loss = lib.nn.functional.ctc_loss(lp, to_lib(lib, targets), il, tl, **kw)
    weights = np.linspace(0.5, 1.5, max(loss.numel(), 1)).reshape(tuple(loss.shape))
    loss.backward(to_lib(lib, weights.astype(x.dtype)))
    return loss.detach().numpy(), xt.grad.numpy(), loss.grad_fn.name()


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("layout", ["padded", "concatenated", "tensor_lengths"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matches_torch(torch, reduction, zero_infinity, layout, dtype):
    rng = np.random.default_rng(0)
    t_max, n, c = 12, 4, 6
    x = rng.standard_normal((t_max, n, c)).astype(dtype)
    il, tl = [12, 9, 3, 7], [4, 0, 3, 5]  # sequence 2 cannot align: loss inf
    targets = rng.integers(0, c - 1, (n, 6))
    targets[targets >= 2] += 1  # blank=2 below: labels avoid it
    targets[0, :3] = [1, 1, 3]  # repeated labels need a blank between them
    if layout == "concatenated":
        targets = np.concatenate([targets[i, :k] for i, k in enumerate(tl)])
    if layout == "tensor_lengths":
        il, tl = np.array(il), np.array(tl)
    kw = {"blank": 2, "reduction": reduction, "zero_infinity": zero_infinity}
    tol = 2e-5 if dtype == "float32" else 1e-10
    for softmax in (True, False):
        t = _case(torch, x, targets, il, tl, softmax, **kw)
        h = _case(hookgrad, x, targets, il, tl, softmax, **kw)
        assert h[2] == t[2]
        np.testing.assert_allclose(h[0], t[0], rtol=tol, atol=tol)
        assert h[0].dtype == t[0].dtype
        finite = np.isfinite(t[1])
        np.testing.assert_array_equal(finite, np.isfinite(h[1]))
        np.testing.assert_allclose(h[1][finite], t[1][finite], rtol=tol, atol=tol)


def test_unbatched_and_empty(torch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 4))
    for targets, il, tl in ((np.array([1, 2, 2]), [6], [3]), (np.array([[1, 3]]), [5], [2]),
                            (np.array([[1, 3]]), [0], [0]), (np.array([[1, 3]]), [0], [1])):
        for red in ("none", "sum"):
            t = _case(torch, x, targets, il, tl, True, reduction=red)
            h = _case(hookgrad, x, targets, il, tl, True, reduction=red)
            assert h[2] == t[2]
            np.testing.assert_allclose(h[0], t[0], atol=1e-12)
            assert np.signbit(h[0]).tolist() == np.signbit(t[0]).tolist()


def test_torch_ctc_loss_and_module(torch):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((5, 2, 4))
    targets = np.array([[1, 2], [3, 3]])
    out = []
    for lib in (torch, hookgrad):
        lp = to_lib(lib, x).log_softmax(2)
        a = lib.ctc_loss(lp, to_lib(lib, targets), [5, 5], [2, 2], 0, 0, False)
        m = lib.nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)
        b = m(lp, to_lib(lib, targets), [5, 5], [2, 1])
        out.append((a.numpy(), b.numpy(), repr(m), list(m.state_dict()), m.blank,
                    m.zero_infinity, m.reduction, lib.nn.CTCLoss.__constants__))
        assert lib.nn.modules.loss.CTCLoss is lib.nn.CTCLoss
    for t, h in zip(*out):
        if isinstance(t, np.ndarray):
            np.testing.assert_allclose(h, t, atol=1e-12)
        else:
            assert h == t


def _calls(lib):
    F = lib.nn.functional
    lp = lib.zeros(6, 2, 4)
    tg = lib.tensor([[1, 2, 2], [3, 1, 1]])
    return [
        lambda: F.ctc_loss(lp, tg, [7, 5], [3, 2]),
        lambda: F.ctc_loss(lp, tg, [-1, 5], [3, 2]),
        lambda: F.ctc_loss(lp, tg, [6, 5], [4, 2]),
        lambda: F.ctc_loss(lp, tg, [6, 5], [-1, 2]),
        lambda: F.ctc_loss(lp, tg, [6], [3, 2]),
        lambda: F.ctc_loss(lp, tg, [6, 5], [3]),
        lambda: F.ctc_loss(lp, tg, [6, 5], [3, 2], blank=4),
        lambda: F.ctc_loss(lp, tg, [6, 5], [3, 2], blank=-1),
        lambda: F.ctc_loss(lp, tg, [6, 5], [3, 2], reduction="foo"),
        lambda: F.ctc_loss(lp, tg.flatten()[:4], [6, 5], [3, 2]),
        lambda: F.ctc_loss(lp, tg[None], [6, 5], [3, 2]),
        lambda: F.ctc_loss(lp, tg, lib.tensor([6, 5.0]), lib.tensor([3, 2])),
        lambda: F.ctc_loss(lp.long(), tg, [6, 5], [3, 2]),
        lambda: F.ctc_loss(lp[:, 0], lib.tensor([1, 2, 2]), [6], [2]),
    ]


def test_errors_match_torch(torch):
    for h, t in zip(_calls(hookgrad), _calls(torch)):
        assert err(h) == err(t)
    with pytest.raises(TypeError):
        hookgrad.nn.functional.ctc_loss(hookgrad.zeros(6, 2, 4), hookgrad.tensor([[1], [2]]),
                                        hookgrad.tensor([6, 5]), [1, 1])
