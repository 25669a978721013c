"""The torch.func bench workloads (`bench.func_workloads`): same gradients as PyTorch's torch.func.

The harness compares only the first value; here every per-sample gradient of hookgrad's vmap
and loop variants is compared with torch.func's, so a speed change cannot go unnoticed if it
changes a value.
"""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from bench import bounds
from bench import func_workloads as F
from bench import workloads as W


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(F.TABLE))
def test_registered_with_the_harness_and_same_first_value(torch, name):
    assert W.TABLE[name] is F.TABLE[name]
    step, first = F.TABLE[name][0](hookgrad)
    _, torch_first = F.TABLE[name][0](torch)
    assert abs(first - torch_first) <= 1e-4 * max(1.0, abs(torch_first))


def _arrays(out):
    if isinstance(out, dict):
        return {k: np.asarray(v.detach().numpy()) for k, v in out.items()}
    return {"": np.asarray(out.detach().numpy())}


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["psg_mlp", "psg_cnn", "jacrev64"])
def test_step_values_match_torch_func(torch, name):
    hg_step, _ = F.TABLE[name][0](hookgrad)
    th_step, _ = F.TABLE[name][0](torch)
    hg, th = _arrays(hg_step()), _arrays(th_step())
    assert hg.keys() == th.keys()
    for k in th:
        assert hg[k].shape == th[k].shape and hg[k].dtype == th[k].dtype, k
        np.testing.assert_allclose(hg[k], th[k], rtol=1e-4, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_loop_and_vmap_give_the_same_per_sample_grads(model):
    vstep, _ = F.per_sample_grads(hookgrad, model)
    lstep, _ = F.per_sample_grads(hookgrad, model, loop=True)
    batched, per = vstep(), lstep()
    for k, v in batched.items():
        stacked = np.stack([p[k].numpy() for p in per])
        np.testing.assert_allclose(v.numpy(), stacked, rtol=1e-4, atol=1e-6, err_msg=k)


def test_bounds_profiles_every_func_workload():
    assert set(F.TABLE) <= set(bounds.EAGER)
