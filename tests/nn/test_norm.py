"""Normalization layers against the oracle: outputs and gradients in train and eval mode,
running statistics (momentum, cumulative average), ``num_batches_tracked``, reprs and state
dicts (including ones saved before ``num_batches_tracked`` existed)."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import hookgrad
from tests.nn._compare import compare_module, copy_state, to_lib

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(5)


def randn(*shape):
    return RNG.standard_normal(shape).astype("float32")


def _run_steps(lib, module, batches, train):
    module.train(train)
    outs = []
    for b in batches:
        x = to_lib(lib, b, requires_grad=True)
        y = module(x)
        (y * y).sum().backward()
        outs.append((y.detach().numpy(), x.grad.numpy()))
    return outs


BN = [
    ("BatchNorm1d", (4,), {}, (6, 4)),
    ("BatchNorm1d", (4,), {"momentum": None}, (5, 4, 3)),
    ("BatchNorm2d", (3,), {"momentum": 0.3, "eps": 1e-3}, (4, 3, 2, 5)),
    ("BatchNorm2d", (3,), {"affine": False}, (2, 3, 4, 4)),
    ("BatchNorm2d", (3,), {"bias": False}, (2, 3, 4, 4)),
    ("BatchNorm1d", (4,), {"track_running_stats": False}, (6, 4)),
]


@pytest.mark.parametrize(
    ("cls", "args", "kw", "shape"), BN, ids=[f"{c}-{kw}" for c, _, kw, _ in BN]
)
def test_batch_norm_train_then_eval(torch, cls, args, kw, shape):
    tm, hm = getattr(torch.nn, cls)(*args, **kw), getattr(hookgrad.nn, cls)(*args, **kw)
    if tm.weight is not None:  # non-trivial affine parameters
        with torch.no_grad():
            tm.weight.uniform_(0.5, 1.5)
            if tm.bias is not None:
                tm.bias.uniform_(-0.5, 0.5)
    copy_state(tm, hm, hookgrad)
    batches = [randn(*shape) * 2 + 1 for _ in range(3)]
    for train in (True, False):
        got, want = _run_steps(hookgrad, hm, batches, train), _run_steps(torch, tm, batches, train)
        for (gy, gx), (ty, tx) in zip(got, want, strict=True):
            np.testing.assert_allclose(gy, ty, rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(gx, tx, rtol=1e-4, atol=1e-4)
        for (name, tv), hv in zip(tm.state_dict().items(), hm.state_dict().values(), strict=True):
            np.testing.assert_allclose(hv.numpy(), tv.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
        for (name, tp), hp in zip(tm.named_parameters(), hm.parameters(), strict=True):
            np.testing.assert_allclose(
                hp.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-4, err_msg=name
            )


def test_batch_norm_compare_module(torch):
    compare_module(torch, lambda lib: lib.nn.BatchNorm2d(3), [(randn(2, 3, 4, 4), True)])
    compare_module(torch, lambda lib: lib.nn.BatchNorm1d(3), [(randn(5, 3), True)])


def test_batch_norm_buffers_and_versions(torch):
    for lib in (torch, hookgrad):
        bn = lib.nn.BatchNorm1d(3)
        assert [n for n, _ in bn.named_buffers()] == [
            "running_mean",
            "running_var",
            "num_batches_tracked",
        ]
        assert bn.num_batches_tracked.dtype == lib.int64
        bn(lib.ones(4, 3))
        bn(lib.ones(4, 3))
        assert int(bn.num_batches_tracked) == 2
        bn.eval()
        bn(lib.ones(4, 3))
        assert int(bn.num_batches_tracked) == 2
        bn.reset_running_stats()
        assert int(bn.num_batches_tracked) == 0 and float(bn.running_var.sum()) == 3.0


def test_batch_norm_rank_errors(torch):
    for lib in (torch, hookgrad):
        with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
            lib.nn.BatchNorm2d(3)(lib.ones(2, 3, 4))
        with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
            lib.nn.BatchNorm1d(3)(lib.ones(2, 3, 4, 4))


def test_batch_norm_loads_state_dict_without_num_batches_tracked(torch):
    bn = hookgrad.nn.BatchNorm1d(3)
    sd = OrderedDict((k, v) for k, v in bn.state_dict().items() if k != "num_batches_tracked")
    sd._metadata = OrderedDict({"": {"version": 1}})  # saved before version 2
    bn.load_state_dict(sd)
    assert int(bn.num_batches_tracked) == 0


def test_state_dicts_load_both_ways(torch):
    for make in (
        lambda lib: lib.nn.BatchNorm2d(3),
        lambda lib: lib.nn.LayerNorm((2, 3)),
        lambda lib: lib.nn.GroupNorm(2, 4),
    ):
        tm, hm = make(torch), make(hookgrad)
        assert list(tm.state_dict()) == list(hm.state_dict())
        copy_state(tm, hm, hookgrad)
        copy_state(hm, make(torch), torch)


@pytest.mark.parametrize(
    "kw",
    [
        dict(normalized_shape=5),
        dict(normalized_shape=(3, 5)),
        dict(normalized_shape=5, elementwise_affine=False),
        dict(normalized_shape=5, bias=False, eps=1e-3),
    ],
)
def test_layer_norm(torch, kw):
    def make(lib):
        m = lib.nn.LayerNorm(**kw)
        if m.weight is not None:
            with lib.no_grad():
                m.weight.copy_(
                    lib.tensor(
                        np.linspace(0.5, 1.5, m.weight.numel(), dtype="float32").reshape(
                            tuple(m.weight.shape)
                        )
                    )
                )
        return m

    compare_module(torch, make, [(randn(2, 3, 5), True)])


@pytest.mark.parametrize(
    "kw",
    [
        dict(num_groups=2, num_channels=4),
        dict(num_groups=4, num_channels=4, affine=False),
        dict(num_groups=1, num_channels=4, eps=1e-3),
    ],
)
def test_group_norm(torch, kw):
    compare_module(torch, lambda lib: lib.nn.GroupNorm(**kw), [(randn(3, 4, 5, 2), True)])
    compare_module(torch, lambda lib: lib.nn.GroupNorm(**kw), [(randn(3, 4), True)])


def test_reprs_and_constructor_errors(torch):
    for cls, args, kw in [
        ("BatchNorm1d", (3,), {}),
        ("BatchNorm2d", (3,), {"momentum": None}),
        ("BatchNorm2d", (3,), {"affine": False, "track_running_stats": False}),
        ("LayerNorm", ((2, 3),), {"bias": False}),
        ("LayerNorm", (4,), {}),
        ("GroupNorm", (2, 4), {"affine": False}),
    ]:
        assert repr(getattr(hookgrad.nn, cls)(*args, **kw)) == repr(
            getattr(torch.nn, cls)(*args, **kw)
        )
    for lib in (torch, hookgrad):
        with pytest.raises(ValueError, match=r"num_channels \(5\) must be divisible"):
            lib.nn.GroupNorm(2, 5)
