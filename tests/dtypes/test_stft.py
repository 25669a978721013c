"""stft(return_complex=True) and istft against PyTorch: values and gradients."""

from __future__ import annotations

import numpy as np
import pytest

from tests.dtypes._compare import same

SIGNAL = np.random.default_rng(11).standard_normal((2, 40))


def _roundtrip(lib, kw, ikw):
    x = lib.tensor(SIGNAL, requires_grad=True)
    spec = lib.stft(x, 16, return_complex=True, **kw)
    back = lib.istft(spec * (1 + 0.5j), 16, **ikw)
    loss = spec.abs().sum() + (back * back).sum()
    loss.backward()
    return spec, back, x.grad


CASES = [
    ({"hop_length": 4, "window": "hann"}, {"hop_length": 4, "window": "hann"}),
    ({"hop_length": 5, "window": "hann", "normalized": True},
     {"hop_length": 5, "window": "hann", "normalized": True, "length": 41}),
    ({"hop_length": 4, "window": "hann8", "win_length": 8, "center": False},
     {"hop_length": 4, "window": "hann8", "win_length": 8, "center": False}),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_stft_istft_match_torch(torch, case):
    def run(lib):
        kw, ikw = ({k: (lib.hann_window(16 if v == "hann" else 8, dtype=lib.float64)
                        if k == "window" else v) for k, v in d.items()} for d in CASES[case])
        return _roundtrip(lib, kw, ikw)

    same(torch, run)


def test_istft_of_a_real_tensor_raises_as_torch(torch):
    same(torch, lambda lib: lib.istft(lib.ones(9, 3), 16))
