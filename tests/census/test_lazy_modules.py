"""Lazy modules: shape inference on the first call, class change, hooks, state dicts vs PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle

CASES = [
    ("LazyLinear", (3,), (2, 5)),
    ("LazyLinear", (3, False), (4, 2, 6)),
    ("LazyConv1d", (4, 3), (2, 3, 8)),
    ("LazyConv2d", (4, 3), (1, 2, 6, 6)),
    ("LazyConv2d", (4, 3, 1, 1, 1, 2), (2, 6, 5)),
    ("LazyConv3d", (2, 2), (1, 2, 4, 4, 4)),
    ("LazyConvTranspose1d", (3, 2), (2, 4, 5)),
    ("LazyConvTranspose2d", (3, 2, 2), (1, 4, 3, 3)),
    ("LazyConvTranspose3d", (2, 2), (1, 3, 3, 3, 3)),
    ("LazyBatchNorm1d", (), (4, 3)),
    ("LazyBatchNorm2d", (), (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (), (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), (2, 3, 5)),
    ("LazyInstanceNorm2d", (1e-5, 0.1, True, True), (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), (1, 2, 3, 3, 3)),
]


def _run(lib, name, args, shape):
    m = getattr(lib.nn, name)(*args)
    before = (type(m).__name__, repr(m), m.has_uninitialized_params(),
              sorted(k for k, _ in m.named_parameters()))
    x = lib.tensor(np.random.RandomState(0).randn(*shape), dtype=lib.float32)
    log = []
    m.register_forward_pre_hook(lambda mod, a: log.append(("pre", type(mod).__name__)))
    m(x)
    after = (type(m).__name__, repr(m),
             {k: tuple(v.shape) for k, v in m.state_dict().items()}, log,
             hasattr(m, "_initialize_hook"))
    return before, after


@pytest.mark.parametrize("name,args,shape", CASES)
def test_first_call_materialises(torch, name, args, shape):
    assert _run(hookgrad, name, args, shape) == _run(torch, name, args, shape)


def test_values_after_copying_weights(torch):
    def build(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.LazyConv2d(3, 3), lib.nn.ReLU(), lib.nn.Flatten(),
                                 lib.nn.LazyLinear(2))
    x = np.random.RandomState(1).randn(2, 2, 5, 5)
    hm, tm = build(hookgrad), build(torch)
    hx, tx = hookgrad.tensor(x, dtype=hookgrad.float32), torch.tensor(x, dtype=torch.float32)
    hm(hx), tm(tx)
    hm.load_state_dict({k: hookgrad.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    hx.requires_grad_(), tx.requires_grad_()
    hy, ty = hm(hx), tm(tx)
    hy.sum().backward(), ty.sum().backward()
    np.testing.assert_allclose(hy.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_load_state_dict_materialises(torch):
    def run(lib):
        src = lib.nn.Linear(4, 2)
        with lib.no_grad():
            src.weight.copy_(lib.arange(8.0).reshape(2, 4))
            src.bias.fill_(1.0)
        lazy = lib.nn.LazyLinear(2)
        lazy.load_state_dict(src.state_dict())
        out = lazy(lib.ones(1, 4))
        return type(lazy).__name__, lazy.in_features, out.tolist()
    assert run(hookgrad) == run(torch)


def test_errors_match(torch):
    def run(lib):
        out = []
        for build, x in ((lambda: lib.nn.LazyConv2d(4, 3), lib.ones(2, 3)),
                         (lambda: lib.nn.LazyConv2d(4, 3, groups=2), lib.ones(1, 3, 5, 5))):
            try:
                build()(x)
            except Exception as e:  # noqa: BLE001 - the type is compared
                out.append((type(e).__name__, str(e).split(" but")[0]))
        lazy = lib.nn.LazyLinear(2)
        try:
            lazy.weight + 1
        except Exception as e:  # noqa: BLE001
            out.append(type(e).__name__)
        return out
    h, t = run(hookgrad), run(torch)
    assert h[:2] == t[:2]


def test_mixin_and_placeholders(torch):
    def run(lib):
        m = lib.nn.LazyLinear(2)
        Mixin = lib.nn.modules.lazy.LazyModuleMixin
        return (isinstance(m, Mixin), isinstance(m.weight, lib.nn.UninitializedParameter),
                lib.nn.parameter.is_lazy(m.weight), m.cls_to_become.__name__,
                isinstance(lib.nn.LazyBatchNorm1d().running_mean, lib.nn.UninitializedBuffer),
                lib.nn.modules.linear.LazyLinear is lib.nn.LazyLinear,
                lib.nn.modules.conv.LazyConv3d is lib.nn.LazyConv3d,
                lib.nn.modules.batchnorm.LazyBatchNorm3d.__module__.split(".", 1)[1],
                lib.nn.modules.instancenorm.LazyInstanceNorm2d is lib.nn.LazyInstanceNorm2d)
    assert run(hookgrad) == run(torch)


def test_deprecated_clip_grad_norm(torch):
    import warnings

    def run(lib):
        p = lib.nn.Parameter(lib.tensor([3.0, 4.0]))
        p.grad = lib.tensor([3.0, 4.0])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            total = lib.nn.utils.clip_grad.clip_grad_norm([p], 1.0)
        return total.item(), [round(g, 5) for g in p.grad.tolist()], [x.category.__name__ for x in w]
    assert run(hookgrad) == run(torch)


def test_module_conversions(torch):
    def run(lib):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        out = []
        try:
            m.cuda()
        except Exception as e:  # noqa: BLE001 - the type is compared
            out.append((type(e).__name__, str(e)))
        out.append(type(lib.nn.Module().cuda()).__name__)
        w = m[0].weight
        m.to_empty(device="cpu")
        out.append((m[0].weight is w, tuple(m[0].weight.shape), m[0].weight.requires_grad,
                    str(m[1].num_batches_tracked.dtype)))
        out.append(m.share_memory() is m)
        out.append(lib.nn.Module.T_destination.__name__)
        out.append(str(lib.nn.Linear(1, 1).double().bfloat16().weight.dtype) != "torch.float64")
        return out
    assert run(hookgrad) == run(torch)
