"""``optim.Muon`` against PyTorch over several steps (its bfloat16 Newton-Schulz iteration is
emulated by rounding), Nesterov or not, both learning-rate adjustments, wide and tall matrices,
state and argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err
from tests.nn._compare import to_lib


@pytest.mark.parametrize("shape", [(4, 6), (7, 3), (5, 5)])
@pytest.mark.parametrize("kw", [{}, {"nesterov": False, "adjust_lr_fn": "match_rms_adamw",
                                     "lr": 0.01, "weight_decay": 0.0},
                                {"momentum": 0.5, "ns_steps": 3, "adjust_lr_fn": "original"}])
def test_matches_torch(torch, shape, kw):
    rng = np.random.default_rng(0)
    w = rng.standard_normal(shape).astype("float32")
    grads = [rng.standard_normal(shape).astype("float32") for _ in range(5)]
    out = []
    for lib in (torch, hookgrad):
        p = to_lib(lib, w, True)
        opt = lib.optim.Muon([p], **kw)
        for g in grads:
            p.grad = to_lib(lib, g)
            opt.step()
        out.append((p.detach().numpy(), opt.state[p]["momentum_buffer"].numpy(),
                    opt.state_dict()["param_groups"]))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-6, atol=1e-7)
    assert out[1][2] == out[0][2]


def test_errors_match_torch(torch):
    for args, kw in ((((2, 3),), {"lr": -1}), (((2, 3),), {"momentum": -1}),
                     (((2, 3),), {"weight_decay": -1}), (((2, 3),), {"adjust_lr_fn": "x"}),
                     (((3,),), {}), (((2, 3, 4),), {})):
        assert err(lambda: hookgrad.optim.Muon(
            [hookgrad.zeros(*args[0], requires_grad=True)], **kw)) == err(
            lambda: torch.optim.Muon([torch.zeros(*args[0], requires_grad=True)], **kw))
    for lib in (torch, hookgrad):
        p = lib.zeros(2, 3, requires_grad=True)
        p.grad = lib.ones(2, 3)
        with pytest.raises(ValueError, match="less than 100"):
            lib.optim.Muon([p], ns_steps=100).step()
