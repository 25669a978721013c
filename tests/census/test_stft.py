"""``torch.stft`` (real layout) and ``istft``: values, gradients, warnings and errors as PyTorch's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle
r = np.random.RandomState(0)
SIGNAL, WINDOW = r.randn(2, 50), r.rand(12)

CASES = {
    "window_shorter_than_n_fft": dict(n_fft=16, hop_length=4, win_length=12, window=True),
    "defaults": dict(n_fft=16),
    "two_sided_normalized_uncentered": dict(n_fft=16, center=False, onesided=False,
                                            normalized=True, window=True, win_length=12),
    "odd_n_fft_constant_pad": dict(n_fft=15, hop_length=3, pad_mode="constant"),
    "align_to_window": dict(n_fft=16, hop_length=5, win_length=12, window=True, center=False,
                            align_to_window=True),
    "replicate": dict(n_fft=8, pad_mode="replicate"),
    "circular_1d": dict(n_fft=8, pad_mode="circular", signal=SIGNAL[0]),
}


def _run(L, case, grad_out=None):
    kw = dict(case)
    x = L.tensor(kw.pop("signal", SIGNAL), requires_grad=True)
    w = L.tensor(WINDOW, requires_grad=True)
    if kw.pop("window", False):
        kw["window"] = w
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = L.stft(x, return_complex=False, **kw)
        y2 = x.stft(return_complex=False, **kw)
    g = np.random.RandomState(1).randn(*y.shape) if grad_out is None else grad_out
    (y * L.tensor(g)).sum().backward()
    wgrad = None if w.grad is None else np.array(w.grad.tolist())
    return (np.array(y.tolist()), np.array(y2.tolist()), np.array(x.grad.tolist()), wgrad,
            str(y.dtype))


@pytest.mark.parametrize("name", sorted(CASES))
def test_stft_values_and_gradients_equal_pytorch(torch, name):
    ours, theirs = _run(hookgrad, CASES[name]), _run(torch, CASES[name])
    assert ours[0].shape == theirs[0].shape
    for a, b in zip(ours[:4], theirs[:4]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)
    assert ours[4].replace("hookgrad", "torch") == theirs[4]


def test_stft_passes_gradcheck_and_gradgradcheck():
    x = hookgrad.tensor(r.randn(20), requires_grad=True)
    w = hookgrad.tensor(r.rand(6), requires_grad=True)

    def fn(x, w):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return hookgrad.stft(x, 8, 3, 6, w, return_complex=False)
    assert hookgrad.autograd.gradcheck(fn, (x, w))
    assert hookgrad.autograd.gradgradcheck(fn, (x, w))


def _outcome(L, fn):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            fn(L)
            err = None
        except Exception as e:  # noqa: BLE001 - the type is compared
            err = type(e).__name__
    return err, sorted({str(w.message)[:40] for w in seen})


@pytest.mark.parametrize("call", [
    lambda L: L.stft(L.ones(20), 8),
    lambda L: L.stft(L.ones(20), 8, return_complex=False),
    lambda L: L.stft(L.ones(20), 8, window=L.ones(8), return_complex=False),
    lambda L: L.stft(L.ones(20), 40, center=False, return_complex=False),
    lambda L: L.stft(L.ones(20), 8, hop_length=0, return_complex=False),
    lambda L: L.stft(L.ones(20), 8, win_length=9, return_complex=False),
    lambda L: L.stft(L.ones(20), 8, window=L.ones(7), return_complex=False),
    lambda L: L.stft(L.ones(2, 2, 20), 8, return_complex=False),
    lambda L: L.stft(L.ones(20, dtype=L.int64), 8, return_complex=False),
    lambda L: L.stft(L.ones(20), 8, align_to_window=True, return_complex=False),
    lambda L: L.istft(L.ones(5, 4, 2), 8),
])
def test_stft_errors_follow_pytorch(torch, call):
    assert _outcome(hookgrad, call)[0] == _outcome(torch, call)[0]


_WARNINGS = """
import warnings, sys
L = __import__(sys.argv[1])
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    for _ in range(2):
        L.stft(L.ones(20), 8, return_complex=False)
        L.stft(L.ones(20), 8, window=L.ones(8), return_complex=False)
print(sorted(str(w.message)[:60] for w in seen))
"""


def test_stft_warns_once_per_process_as_pytorch(torch):
    import subprocess
    import sys

    def run(name):
        return subprocess.run([sys.executable, "-c", _WARNINGS, name], capture_output=True,
                              text=True, check=True, timeout=120).stdout
    assert run("hookgrad") == run("torch")


def test_complex_output_is_the_real_layout_viewed_as_complex():
    x = hookgrad.arange(20.0).sin()
    pairs = hookgrad.stft(x, 8, window=hookgrad.ones(8), return_complex=False)
    spec = hookgrad.stft(x, 8, window=hookgrad.ones(8), return_complex=True)
    assert spec.dtype is hookgrad.complex64
    assert hookgrad.equal(hookgrad.view_as_real(spec), pairs)
