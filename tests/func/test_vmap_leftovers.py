"""vmap cases left from the last round: the CTC loss with per-sample length tensors,
index_copy with per-sample negative or out-of-range indices, in-place as_strided_ (where
torch.func's result is not PyTorch's per-sample one)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad

RNG = np.random.default_rng(0)
B, T, N, C, S = 3, 6, 2, 4, 3
LP = np.log(RNG.dirichlet(np.ones(C), size=(B, T, N)))
TG = RNG.integers(1, C, size=(B, N, S))
IL = np.array([[6, 5], [4, 6], [5, 3]])
TL = np.array([[3, 2], [1, 3], [2, 2]])


@pytest.mark.oracle
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_loss_with_per_sample_lengths(torch, reduction):
    outs = []
    for lib in (torch, hookgrad):
        def f(lp, tg, il, tl, lib=lib):
            return lib.nn.functional.ctc_loss(lp, tg, il, tl, reduction=reduction)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            out = lib.func.vmap(f)(lib.tensor(LP), lib.tensor(TG), lib.tensor(IL), lib.tensor(TL))
        # both run a per-sample loop with PyTorch's performance warning
        assert any("performance drop" in str(w.message) for w in seen)
        outs.append(np.asarray(out.numpy()))
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-10)


@pytest.mark.oracle
def test_ctc_loss_grad_with_per_sample_lengths_concatenated_targets(torch):
    """vmap(grad) (torch.func cannot differentiate _ctc_loss): PyTorch's loop of autograd.grad;
    concatenated 1-d targets, lengths unbatched for the inputs and per sample for targets."""
    flat = np.concatenate([TG[:, 0, :2], TG[:, 1, :2]], axis=1)  # (B, 4): 2 + 2 labels
    tl = np.array([[2, 2], [1, 3], [3, 1]])

    il = lambda lib: lib.tensor([6, 5])  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the per-sample loop's performance warning
        got = hookgrad.func.vmap(hookgrad.func.grad(
            lambda lp, tg, t: hookgrad.nn.functional.ctc_loss(lp, tg, il(hookgrad), t,
                                                              reduction="sum")))(
            hookgrad.tensor(LP), hookgrad.tensor(flat), hookgrad.tensor(tl))
    want = []
    for b in range(B):
        lp = torch.tensor(LP[b], requires_grad=True)
        out = torch.nn.functional.ctc_loss(lp, torch.tensor(flat[b]), il(torch),
                                           torch.tensor(tl[b]), reduction="sum")
        want.append(torch.autograd.grad(out, lp)[0].numpy())
    np.testing.assert_allclose(np.asarray(got.numpy()), np.stack(want), rtol=1e-8, atol=1e-10)


X = np.arange(12.0).reshape(2, 2, 3)
SRC = -np.ones((2, 2, 3))


@pytest.mark.oracle
@pytest.mark.parametrize("idx", [[[1, 0], [0, 1]], [[0, -1], [1, 0]], [[-2, 1], [0, 1]],
                                 [[0, 5], [1, 0]]])
def test_index_copy_per_sample_indices(torch, idx):
    """Valid indices: torch.func's values; negative or past the end in any sample: PyTorch's
    RuntimeError (setitem would have wrapped a negative index)."""
    outs = []
    for lib in (torch, hookgrad):
        try:
            out = lib.func.vmap(lambda a, i, s: a.index_copy(0, i, s))(
                lib.tensor(X), lib.tensor(idx), lib.tensor(SRC))
            outs.append(np.asarray(out.numpy()))
        except Exception as exc:  # noqa: BLE001 - the type is compared
            outs.append(type(exc))
    if isinstance(outs[0], type):
        assert outs[1] is outs[0] is RuntimeError
    else:
        np.testing.assert_array_equal(outs[1], outs[0])


@pytest.mark.oracle
def test_index_copy_negative_index_eager_raises_as_torch(torch):
    for lib in (torch, hookgrad):
        with pytest.raises(IndexError, match="out of bounds"):
            lib.zeros(2, 3).index_copy(0, lib.tensor([-1, 0]), lib.ones(2, 3))


@pytest.mark.oracle
@pytest.mark.parametrize("size,stride,offset", [((2, 2), (1, 2), 0), ((3,), (2,), 1)])
def test_inplace_as_strided_is_per_sample(torch, size, stride, offset):
    """In-place as_strided_ under vmap equals PyTorch's per-sample loop. torch.func differs:
    its fallback loop keeps the logical shape (2, 3, 4) and reads sample 0's storage (a
    torch.func bug, checked here so that a fix in PyTorch shows)."""
    def f(t):
        y = t.clone()
        y.as_strided_(size, stride, offset)
        return y * 1

    loop = np.stack([np.asarray(f(torch.tensor(X[i].reshape(2, 3).copy())).numpy())
                     for i in range(2)])
    base = X.reshape(2, 2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the per-sample loop's performance warning
        got = hookgrad.func.vmap(f)(hookgrad.tensor(base))
    np.testing.assert_array_equal(np.asarray(got.numpy()), loop)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's fallback warning
        theirs = torch.func.vmap(f)(torch.tensor(base))
    assert tuple(theirs.shape) == (2, 2, 3) != loop.shape
