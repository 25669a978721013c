"""Oracle comparisons for the ops the census added: values and gradients equal PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.census._both import run_both

pytestmark = pytest.mark.oracle
r = np.random.RandomState(1)
A, B, v, w, X3 = r.randn(2, 3), r.randn(3, 4), r.randn(3), r.randn(4), r.randn(2, 3, 4)
M45 = r.randn(4, 5)

CASES = {
    "column_stack": (lambda L, t: L.column_stack([t[0], t[1]]), v, v),
    "row_stack": (lambda L, t: L.row_stack([t[0], t[1]]), v, v),
    "dstack": (lambda L, t: L.dstack([t[0], t[1]]), A, A),
    "hsplit": (lambda L, t: L.hsplit(t[0], 3), A),
    "vsplit": (lambda L, t: L.vsplit(t[0], [1]), A),
    "dsplit": (lambda L, t: L.dsplit(t[0], 2), X3),
    "atleast_3d": (lambda L, t: L.atleast_3d(t[0]), v),
    "diag_embed": (lambda L, t: L.diag_embed(t[0]), A),
    "diag_embed_offset": (lambda L, t: L.diag_embed(t[0], 1, 0, 2), A),
    "diag_embed_negative": (lambda L, t: L.diag_embed(t[0], -2, -1, 0), X3),
    "diagflat": (lambda L, t: L.diagflat(t[0], 1), A),
    "block_diag": (lambda L, t: L.block_diag(t[0], t[1], t[2]), A, v, B),
    "kron": (lambda L, t: L.kron(t[0], t[1]), A, B),
    "kron_ranks": (lambda L, t: L.kron(t[0], t[1]), v, A),
    "cross": (lambda L, t: L.cross(t[0], t[1], dim=1), A, A[::-1].copy()),
    "linalg_cross": (lambda L, t: L.linalg.cross(t[0], t[1]), A, A[::-1].copy()),
    "tensordot": (lambda L, t: L.tensordot(t[0], t[1], dims=([1], [0])), A, B),
    "tensordot_int": (lambda L, t: L.tensordot(t[0], t[1], dims=1), A, B),
    "cartesian_prod": (lambda L, t: L.cartesian_prod(t[0], t[1]), v, w),
    "combinations": (lambda L, t: L.combinations(t[0], 3, with_replacement=True), v),
    "rot90": (lambda L, t: L.rot90(t[0], -1, [1, 2]), X3),
    "trapezoid": (lambda L, t: L.trapezoid(t[0], t[1]), A, np.sort(v)),
    "trapz_dx": (lambda L, t: L.trapz(t[0], dx=0.5, dim=0), A),
    "cumulative_trapezoid": (lambda L, t: L.cumulative_trapezoid(t[0], t[1]), A, np.sort(v)),
    "tril_indices": (lambda L, t: L.tril_indices(3, 4, 1),),
    "broadcast_tensors": (lambda L, t: L.broadcast_tensors(t[0], t[1]), v, A),
    "addmv": (lambda L, t: L.addmv(t[0], t[1], t[2], beta=0.5, alpha=2), np.ones(2), A, v),
    "addbmm": (lambda L, t: L.addbmm(t[0], t[1], t[2]), A, r.randn(5, 2, 4), r.randn(5, 4, 3)),
    "matrix_power": (lambda L, t: L.matrix_power(t[0], 3), r.randn(3, 3)),
    "vander": (lambda L, t: L.vander(t[0].detach(), 4), v),  # torch cannot backprop it
    "kthvalue": (lambda L, t: L.kthvalue(t[0], 2, 1), M45),
    "median": (lambda L, t: L.median(t[0]), M45),
    "median_dim": (lambda L, t: L.median(t[0], 0, True), M45),
    "quantile": (lambda L, t: L.quantile(t[0], 0.3, dim=1, keepdim=True), M45),
    "cummax": (lambda L, t: L.cummax(t[0], 1), M45),
    "logcumsumexp": (lambda L, t: L.logcumsumexp(t[0], 1), M45),
    "cdist": (lambda L, t: L.cdist(t[0], t[1]), M45, r.randn(3, 5)),
    "pdist": (lambda L, t: L.pdist(t[0]), M45),
    "cov": (lambda L, t: L.cov(t[0]), M45),
    "corrcoef": (lambda L, t: L.corrcoef(t[0]), M45),
    "hypot": (lambda L, t: L.hypot(t[0], t[1]), v, v[::-1].copy()),
    "logaddexp": (lambda L, t: L.logaddexp(t[0], t[1]), v, v[::-1].copy()),
    "xlogy": (lambda L, t: L.xlogy(t[0], t[1]), np.array([0.0, 1.0, 2.0]), np.array([0.5, 0.0, 3])),
    "sinc": (lambda L, t: L.sinc(t[0]), np.array([-1.5, 0.0, 0.25])),
    "special_entr": (lambda L, t: L.special.entr(t[0]), np.array([0.1, 0.5, 2.0])),
    "special_ndtr": (lambda L, t: L.special.ndtr(t[0]), v),
    "linalg_multi_dot": (lambda L, t: L.linalg.multi_dot([t[0], t[1], t[2]]), A, B, w),
    "one_hot": (lambda L, t: L.nn.functional.one_hot(L.tensor([0, 2, 1]), 4),),
    "unfold": (lambda L, t: L.nn.functional.unfold(t[0], (2, 3), dilation=(1, 2), padding=1,
                                                   stride=(2, 1)), r.randn(2, 3, 5, 6)),
    "fold": (lambda L, t: L.nn.functional.fold(t[0], (4, 5), (2, 2), padding=1, stride=2),
             r.randn(2, 12, 9)),
    "rms_norm": (lambda L, t: L.nn.functional.rms_norm(t[0], (4,), t[1]), X3, w),
    "local_response_norm": (lambda L, t: L.nn.functional.local_response_norm(t[0], 2),
                            r.randn(2, 3, 4, 4)),
    "lp_pool2d": (lambda L, t: L.nn.functional.lp_pool2d(t[0], 2, (2, 3), stride=1),
                  r.randn(2, 3, 4, 5)),
    "channel_shuffle": (lambda L, t: L.nn.functional.channel_shuffle(t[0], 3), r.randn(2, 6, 3)),
    "torch_conv1d": (lambda L, t: L.conv1d(t[0], t[1], None, 1, 1), r.randn(1, 2, 5),
                     r.randn(3, 2, 3)),
    "torch_batch_norm": (lambda L, t: L.batch_norm(t[0], t[1], t[2], None, None, True, 0.1,
                                                   1e-5, False), r.randn(4, 3), r.rand(3),
                         r.randn(3)),
    "torch_embedding": (lambda L, t: L.embedding(t[0], L.tensor([[0, 2]])), r.randn(4, 3)),
    "torch_kl_div": (lambda L, t: L.kl_div(t[0], t[1], 2), r.randn(4), r.rand(4)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_matches_pytorch(torch, name):
    fn, *arrays = CASES[name]
    run_both(torch, fn, *arrays)


_T = np.array([1.0, -1, 1, -1, 1])
LOSSES = {
    "margin_ranking": (lambda F, L, t: F.margin_ranking_loss(t[0], t[1], L.tensor(_T), 0.3),
                       r.randn(5), r.randn(5)),
    "hinge_embedding": (lambda F, L, t: F.hinge_embedding_loss(t[0], L.tensor(_T), 0.5,
                                                               reduction="sum"), r.randn(5)),
    "cosine_embedding": (lambda F, L, t: F.cosine_embedding_loss(t[0], t[1], L.tensor(_T), 0.1),
                         r.randn(5, 3), r.randn(5, 3)),
    "soft_margin": (lambda F, L, t: F.soft_margin_loss(t[0], L.tensor(_T), reduction="none"),
                    r.randn(5)),
    "multilabel_soft_margin": (lambda F, L, t: F.multilabel_soft_margin_loss(
        t[0], L.tensor([[1.0, 0, 1], [0, 0, 1]])), r.randn(2, 3)),
    "multi_margin": (lambda F, L, t: F.multi_margin_loss(t[0], L.tensor([0, 2, 1, 1]), p=2,
                                                        margin=0.7), r.randn(4, 3)),
    "multilabel_margin": (lambda F, L, t: F.multilabel_margin_loss(
        t[0], L.tensor([[3, 0, -1, 1], [0, 1, 2, 3], [1, -1, 0, 0]])), r.randn(3, 4)),
    "triplet_margin": (lambda F, L, t: F.triplet_margin_loss(t[0], t[1], t[2], swap=True),
                       r.randn(4, 3), r.randn(4, 3), r.randn(4, 3)),
    "poisson_nll": (lambda F, L, t: F.poisson_nll_loss(t[0], L.tensor([0.0, 2, 5]), full=True),
                    r.randn(3)),
    "gaussian_nll": (lambda F, L, t: F.gaussian_nll_loss(t[0], t[1], t[2], full=True),
                     r.randn(4, 2), r.randn(4, 2), r.rand(4, 1)),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_matches_pytorch(torch, name):
    fn, *arrays = LOSSES[name]
    run_both(torch, lambda L, t: fn(L.nn.functional, L, t), *arrays)


@pytest.mark.parametrize("name", ["MarginRankingLoss", "TripletMarginLoss", "RMSNorm", "Fold",
                                  "LPPool2d", "Softmax2d", "Dropout2d", "ChannelShuffle"])
def test_module_paths_and_reprs(torch, name):
    tmod = getattr(torch.nn, name)
    hmod = getattr(hookgrad.nn, name)
    assert hmod.__module__.replace("hookgrad", "torch") == tmod.__module__
    args = {"RMSNorm": (4,), "Fold": ((4, 5), 2), "LPPool2d": (2, 3),
            "ChannelShuffle": (2,)}.get(name, ())
    assert repr(hmod(*args)) == repr(tmod(*args))
    assert hookgrad.nn.modules.linear.NonDynamicallyQuantizableLinear.__name__ == (
        torch.nn.modules.linear.NonDynamicallyQuantizableLinear.__name__)


def test_in_place_variants_follow_pytorch(torch):
    def scenario(L):
        x = L.tensor([1.0, 2.0, 4.0])
        x.eq_(L.tensor([1.0, 3.0, 4.0]))
        y = L.tensor([[1.0, 2.0], [3.0, 4.0]])
        y.tril_()
        z = L.tensor([30.0, 90.0])
        z.deg2rad_()
        try:
            L.tensor([1, 2]).deg2rad_()
        except RuntimeError as e:
            err = str(e)
        return x.tolist(), y.tolist(), [round(v, 6) for v in z.tolist()], err
    assert scenario(hookgrad) == scenario(torch)


def test_as_subclass_and_legacy_new(torch):
    def scenario(L):
        class Sub(L.Tensor):
            pass
        a = L.ones(2, requires_grad=True)
        b = a.as_subclass(Sub)
        b.sum().backward()
        n = a.new(2, 3)
        return (type(b).__name__, type(b.grad_fn).__name__, b.is_leaf, a.grad.tolist(),
                tuple(n.shape), str(n.dtype), a.new([1, 2]).dtype == a.dtype)
    assert scenario(hookgrad) == scenario(torch)


@pytest.mark.parametrize("name", ["ConstantLR", "LinearLR", "MultiplicativeLR", "PolynomialLR",
                                  "CosineAnnealingWarmRestarts", "SequentialLR",
                                  "ChainedScheduler"])
def test_lr_schedules_equal_pytorch(torch, name):
    def make(L, opt):
        S = L.optim.lr_scheduler
        return {"ConstantLR": lambda: S.ConstantLR(opt, 0.5, 3),
                "LinearLR": lambda: S.LinearLR(opt, 0.2, 0.9, 4),
                "MultiplicativeLR": lambda: S.MultiplicativeLR(opt, lambda e: 0.9),
                "PolynomialLR": lambda: S.PolynomialLR(opt, 6, 2.0),
                "CosineAnnealingWarmRestarts": lambda: S.CosineAnnealingWarmRestarts(
                    opt, 3, 2, 0.01),
                "SequentialLR": lambda: S.SequentialLR(opt, [S.LinearLR(opt, 0.1, 1.0, 3),
                                                             S.ExponentialLR(opt, 0.9)], [3]),
                "ChainedScheduler": lambda: S.ChainedScheduler([S.ConstantLR(opt, 0.5, 2),
                                                                S.ExponentialLR(opt, 0.9)]),
                }[name]()

    def run(L):
        p = L.nn.Parameter(L.zeros(1))
        opt = L.optim.SGD([p], lr=0.1)
        sched, out = make(L, opt), []
        for _ in range(12):
            opt.step()
            sched.step()
            out.append(opt.param_groups[0]["lr"])
        return out
    assert run(hookgrad) == pytest.approx(run(torch), rel=1e-12)
