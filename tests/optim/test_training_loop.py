"""A whole training loop (module, autograd, DataLoader, optimizer, scheduler) against torch."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad


def _train(lib, opt_name, kwargs, x, y, init):
    model = lib.nn.Linear(4, 3)
    with lib.no_grad():
        model.weight.copy_(lib.from_numpy(init[0].copy()))
        model.bias.copy_(lib.from_numpy(init[1].copy()))
    opt = getattr(lib.optim, opt_name)(model.parameters(), **kwargs)
    sched = lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    data = lib.utils.data.TensorDataset(lib.from_numpy(x), lib.from_numpy(y))
    losses = []
    for _ in range(4):
        for xb, yb in lib.utils.data.DataLoader(data, batch_size=8):
            def closure(xb=xb, yb=yb):
                opt.zero_grad()
                loss = ((model(xb) - yb) ** 2).mean()
                loss.backward()
                return loss

            losses.append(opt.step(closure).item())
        sched.step()
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


@pytest.mark.oracle
@pytest.mark.parametrize(
    ("opt_name", "kwargs"),
    [("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}), ("Adam", {"lr": 0.05}),
     ("AdamW", {"lr": 0.05, "weight_decay": 0.1}), ("RMSprop", {"lr": 0.01, "centered": True}),
     ("Adagrad", {"lr": 0.1})],
)
def test_training_loop_matches_torch(torch, opt_name, kwargs):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((20, 4)).astype(np.float32)
    y = rng.standard_normal((20, 3)).astype(np.float32)
    init = [rng.standard_normal((3, 4)).astype(np.float32) * 0.5,
            rng.standard_normal(3).astype(np.float32) * 0.5]
    mine = _train(hookgrad, opt_name, kwargs, x, y, init)
    theirs = _train(torch, opt_name, kwargs, x, y, init)
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-5, atol=1e-6)
    for a, b in zip(mine[1], theirs[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
