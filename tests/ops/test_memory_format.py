"""Memory formats against PyTorch: ``channels_last`` strides through conversions, factories,
the per-channel layers and their gradients, ``Module.to(memory_format=...)`` and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests._errors import err

X = np.random.default_rng(0).standard_normal((2, 4, 6, 6)).astype(np.float32)
W = np.random.default_rng(1).standard_normal((4, 4, 3, 3)).astype(np.float32)


def _x(lib, fmt="channels_last"):
    x = lib.tensor(X)
    if fmt:
        x = x.to(memory_format=getattr(lib, fmt))
    return x.requires_grad_()


# (lib, x) -> tensor; x is a channels_last NCHW leaf
LAYERS = {
    "conv2d": lambda lib, x: lib.nn.functional.conv2d(x, lib.tensor(W), padding=1),
    "conv_weight_only": lambda lib, x: lib.nn.functional.conv2d(
        x.detach().contiguous(), lib.tensor(W).to(memory_format=lib.channels_last)),
    "conv_transpose2d": lambda lib, x: lib.nn.functional.conv_transpose2d(x, lib.tensor(W)),
    "batch_norm": lambda lib, x: lib.nn.functional.batch_norm(x, None, None, training=True),
    "batch_norm_eval": lambda lib, x: lib.nn.functional.batch_norm(
        x, lib.zeros(4), lib.ones(4)),
    "max_pool2d": lambda lib, x: lib.nn.functional.max_pool2d(x, 2),
    "max_pool2d_indices": lambda lib, x: lib.nn.functional.max_pool2d(
        x, 2, return_indices=True)[1],
    "avg_pool2d": lambda lib, x: lib.nn.functional.avg_pool2d(x, 2),
    "adaptive_avg_pool2d": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, 3),
    "adaptive_max_pool2d": lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x, 3),
    "upsample_nearest": lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2),
    "upsample_bilinear": lambda lib, x: lib.nn.functional.interpolate(
        x, scale_factor=2, mode="bilinear"),
    "pixel_shuffle": lambda lib, x: lib.nn.functional.pixel_shuffle(x, 2),
    "pixel_unshuffle": lambda lib, x: lib.nn.functional.pixel_unshuffle(x, 2),
    "group_norm": lambda lib, x: lib.nn.functional.group_norm(x, 2),
    "instance_norm": lambda lib, x: lib.nn.functional.instance_norm(x),
    "layer_norm": lambda lib, x: lib.nn.functional.layer_norm(x, (6,)),
    "pad_constant": lambda lib, x: lib.nn.functional.pad(x, (1, 1, 1, 1)),
    "pad_reflect": lambda lib, x: lib.nn.functional.pad(x, (1, 1, 1, 1), mode="reflect"),
    "softmax": lambda lib, x: lib.nn.functional.softmax(x, 1),
    "sum_keepdim": lambda lib, x: x.sum(1, keepdim=True),
    "mean_keepdim": lambda lib, x: x.mean((2, 3), keepdim=True),
    "cat_channels": lambda lib, x: lib.cat([x, x], 1),
    "cat_batch": lambda lib, x: lib.cat([x, x], 0),
    "cat_mixed": lambda lib, x: lib.cat([x, lib.tensor(X)], 1),
    "prelu": lambda lib, x: lib.nn.functional.prelu(x, lib.ones(4)),
    "hardswish": lambda lib, x: lib.nn.functional.hardswish(x),
    "add_bias": lambda lib, x: x + lib.ones(4, 1, 1),
    "mul_contiguous": lambda lib, x: x * lib.tensor(X),
    "clone": lambda lib, x: x.clone(),
    "contiguous": lambda lib, x: x.contiguous(),
    "to_contiguous": lambda lib, x: x.to(memory_format=lib.contiguous_format),
    "double": lambda lib, x: x.double(),
    "zeros_like": lambda lib, x: lib.zeros_like(x),
    "zeros_like_contiguous": lambda lib, x: lib.zeros_like(
        x, memory_format=lib.contiguous_format),
    "randn_like": lambda lib, x: lib.randn_like(x),
    "empty_like": lambda lib, x: lib.empty_like(x),
    "conv_bn_relu": lambda lib, x: lib.relu(lib.nn.functional.batch_norm(
        lib.nn.functional.conv2d(x, lib.tensor(W), padding=1), None, None, training=True)),
}
# the input gradient of these follows the (channels_last) gradient arriving from above
GRAD_LAYOUT = ("conv2d", "conv_transpose2d", "batch_norm", "batch_norm_eval", "max_pool2d",
               "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d", "upsample_nearest",
               "upsample_bilinear", "softmax", "layer_norm", "instance_norm", "clone",
               "contiguous", "double", "hardswish", "conv_bn_relu")


def _run(lib, name):
    x = _x(lib)
    y = LAYERS[name](lib, x)
    if isinstance(y, tuple):
        y = y[0]
    out = [tuple(y.shape), y.stride(), str(y.dtype).split(".")[-1], y.is_contiguous(),
           y.is_contiguous(memory_format=lib.channels_last)]
    grad = None
    if name in GRAD_LAYOUT:
        grad = lib.autograd.grad((y.float() * y.float()).sum(), x)[0]
        out.append(grad.stride())
        grad = grad.detach().double().numpy()
    return out, grad


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_channels_last_layouts_match_torch(torch, name):
    (ours, our_grad), (theirs, their_grad) = _run(hookgrad, name), _run(torch, name)
    assert ours == theirs
    if our_grad is not None:
        np.testing.assert_allclose(our_grad, their_grad, rtol=1e-4, atol=1e-3)


def _shapes(lib):
    cl, cl3 = lib.channels_last, lib.channels_last_3d
    return [
        lib.empty(2, 3, 4, 5, memory_format=cl).stride(),
        lib.zeros(2, 3, 4, 5).contiguous(memory_format=cl).stride(),
        lib.zeros(2, 3, 4, 5).clone(memory_format=cl).stride(),
        lib.zeros(1, 2, 3, 4, 5).contiguous(memory_format=cl3).stride(),
        lib.zeros(3, 4).t().clone().stride(),
        lib.zeros_like(lib.zeros(3, 4).t()).stride(),
        lib.zeros(3, 1, 4).transpose(0, 2).clone().stride(),
        lib.ones(2, 1, 3, 3).to(memory_format=cl).stride(),
        lib.ones(2, 3, 1, 1).to(memory_format=cl).stride(),
        lib.ones(2, 3, 1, 1).is_contiguous(memory_format=cl),
        lib.zeros(3, 4).t().to(memory_format=lib.contiguous_format).stride(),
        lib.zeros(2, 3, 4, 5).is_contiguous(memory_format=lib.preserve_format),
        lib.zeros(2, 3, 4, 5).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
        .is_contiguous(memory_format=cl),
        lib.zeros(2, 3, 4, 5).is_contiguous(memory_format=cl),
        lib.zeros(2, 1, 3, 3).sum(1, keepdim=True).stride(),
    ]


@pytest.mark.oracle
def test_conversions_and_factories_match_torch(torch):
    assert _shapes(hookgrad) == _shapes(torch)


def _aliasing(lib):
    x = lib.zeros(2, 3, 4, 5).to(memory_format=lib.channels_last)
    return [x.to(memory_format=lib.channels_last) is x,
            x.contiguous(memory_format=lib.channels_last) is x,
            x.contiguous() is x, x.to(memory_format=lib.contiguous_format) is x,
            x.to(lib.float64, memory_format=lib.preserve_format).stride(),
            type(x.to(memory_format=lib.contiguous_format).requires_grad_()
                 .to(memory_format=lib.channels_last).grad_fn).__name__]


@pytest.mark.oracle
def test_to_aliases_as_torch(torch):
    assert _aliasing(hookgrad) == _aliasing(torch)


@pytest.mark.oracle
def test_errors_match_torch(torch):
    def cases(lib):
        cl = lib.channels_last
        return [err(lambda: lib.zeros(2, 3).to(memory_format=cl)),
                err(lambda: lib.zeros(2, 3).contiguous(memory_format=cl)),
                err(lambda: lib.zeros(2, 3).clone(memory_format=cl)),
                err(lambda: lib.zeros_like(lib.zeros(2, 3), memory_format=cl)),
                err(lambda: lib.empty(2, 3, 4, memory_format=cl)),
                err(lambda: lib.empty(2, 3, 4, 5, memory_format=lib.preserve_format)),
                err(lambda: lib.zeros(3, 4).t().contiguous(memory_format=lib.preserve_format)),
                err(lambda: lib.nn.Conv3d(2, 2, 1).to(memory_format=cl))]
    assert cases(hookgrad) == cases(torch)


def _module(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Conv2d(4, 3, 3), lib.nn.BatchNorm2d(3))
    with lib.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(lib.linspace(-1, 1, p.numel()).reshape(p.shape) * (i + 1))
    m = m.to(memory_format=lib.channels_last)
    out = m(lib.tensor(X).to(memory_format=lib.channels_last))
    (out * out).sum().backward()
    return ([p.stride() for p in m.parameters()], [p.grad.stride() for p in m.parameters()],
            out.stride()), [p.grad.numpy() for p in m.parameters()]


@pytest.mark.oracle
def test_module_to_channels_last_matches_torch(torch):
    (ours, our_grads), (theirs, their_grads) = _module(hookgrad), _module(torch)
    assert ours == theirs
    for a, b in zip(our_grads, their_grads, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-3)
