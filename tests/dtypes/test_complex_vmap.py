"""vmap over the complex primitives and transforms (batching rules, no per-sample loop) and
vmap of their gradients, against torch.func."""

from __future__ import annotations

import warnings

import numpy as np

from tests.dtypes._compare import same

X = np.random.default_rng(0).standard_normal((3, 4, 6)).astype(np.float32)


def _sample(lib, v):
    z = lib.view_as_complex(v.reshape(4, 3, 2))
    w = lib.polar(v[:, :3].abs() + 0.1, v[:, 3:])
    spec = lib.fft.fft(z * w.conj() * z.sgn(), dim=0)
    return (lib.view_as_real(spec).sum(-1) + lib.fft.irfft(lib.fft.rfft(v), n=6)[:, :3]
            + z.angle() + lib.complex(v[:, :3], v[:, 3:]).abs())


def test_vmap_matches_torch_without_the_fallback(torch):
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the per-sample fallback would warn
            return lib.func.vmap(lambda v: _sample(lib, v))(lib.tensor(X))

    same(torch, run)


def test_vmap_of_grad_matches_torch(torch):
    def run(lib):
        return lib.func.vmap(lib.func.grad(lambda v: _sample(lib, v).sum()))(lib.tensor(X))

    same(torch, run)
