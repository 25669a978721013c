"""Optimizers on complex parameters: PyTorch updates their real and imaginary parts as
independent real parameters (``view_as_real``); the values after a few steps equal torch's."""

from __future__ import annotations

import pytest

from tests.dtypes._compare import same

OPTIMIZERS = [("SGD", {"lr": 0.1, "momentum": 0.9}), ("SGD", {"lr": 0.1, "nesterov": True,
                                                              "momentum": 0.5}),
              ("Adam", {"lr": 0.1}), ("Adam", {"lr": 0.1, "amsgrad": True}),
              ("AdamW", {"lr": 0.1}), ("RMSprop", {"lr": 0.01}), ("Adagrad", {"lr": 0.1})]


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("which", range(len(OPTIMIZERS)))
def test_complex_parameters_train_as_torch(torch, which, foreach):
    name, kw = OPTIMIZERS[which]

    def run(lib):
        p = lib.nn.Parameter(lib.tensor([[1 + 2j, -0.5 + 0.3j]]))
        q = lib.nn.Parameter(lib.tensor([0.5, -1.0]))
        opt = getattr(lib.optim, name)([p, q], foreach=foreach, **kw)
        for _ in range(3):
            opt.zero_grad()
            loss = (p * p.conj()).real.sum() + (p.real * q).sum() + (p.imag * q * q).sum()
            loss.backward()
            opt.step()
        return p, q

    same(torch, run)
