"""Convolution, pooling and normalization ops beyond the generic OpSpec checks: second and third
derivatives against the oracle, PyTorch's argument errors, saved values, and the array kernels'
independence from the ``create_graph`` path (both rule bodies give the same gradients)."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from hookgrad.testing._oracle import assert_same

RNG = np.random.default_rng(11)


def arr(*shape):
    return RNG.standard_normal(shape)


def _higher_order(lib, fn, arrays, order):
    """Gradients of order 1..`order` of ``sum(fn(*inputs) ** 2)`` (each step differentiates the
    sum of squares of the previous gradients, so every order is non-trivial)."""
    inputs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = (fn(lib, *inputs) ** 2).sum()
    results = []
    for _ in range(order):
        grads = lib.autograd.grad(out, inputs, create_graph=True, allow_unused=True)
        results.append([g for g in grads if g is not None])
        out = sum((g * g).sum() for g in grads if g is not None)
    return results


CASES = {
    "conv2d": (
        lambda lib, x, w: lib.nn.functional.conv2d(
            x, w, stride=2, padding=1, dilation=(1, 2), groups=2
        ),
        [(1, 4, 5, 6), (4, 2, 2, 3)],
    ),
    "conv1d": (
        lambda lib, x, w: lib.nn.functional.conv1d(x, w, padding="same"),
        [(2, 2, 5), (3, 2, 3)],
    ),
    "conv_transpose2d": (
        lambda lib, x, w: lib.nn.functional.conv_transpose2d(
            x, w, stride=2, padding=1, output_padding=1, groups=2
        ),
        [(1, 4, 3, 3), (4, 1, 3, 2)],
    ),
    "max_pool2d": (lambda lib, x: lib.nn.functional.max_pool2d(x, 3, 2, 1), [(1, 2, 5, 5)]),
    "avg_pool2d": (
        lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, 2, 1, True, False),
        [(1, 2, 5, 5)],
    ),
    "adaptive_avg_pool2d": (
        lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, (2, 3)),
        [(1, 2, 5, 7)],
    ),
    "batch_norm": (
        lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, training=True),
        [(4, 3, 2), (3,), (3,)],
    ),
    "layer_norm": (
        lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (4,), w, b),
        [(3, 4), (4,), (4,)],
    ),
    "group_norm": (
        lambda lib, x, w, b: lib.nn.functional.group_norm(x, 2, w, b),
        [(2, 4, 3), (4,), (4,)],
    ),
}


# PyTorch's third derivatives of these are wrong (its double-backward formulas hold the saved
# statistics constant; torch.autograd.gradcheck of its own second derivative fails), and its
# triple backward of a transposed convolution with output padding raises. hookgrad is compared
# up to second order there and checked numerically at third order.
TORCH_ORDER = {"batch_norm": 2, "layer_norm": 2, "conv_transpose2d": 2}


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(CASES))
def test_higher_derivatives_match_torch(torch, name):
    fn, shapes = CASES[name]
    arrays = [arr(*s) for s in shapes]
    order = TORCH_ORDER.get(name, 3)
    assert_same(lambda lib, log: _higher_order(lib, fn, arrays, order), torch, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", list(TORCH_ORDER))
def test_third_derivative_is_numerically_right(name):
    fn, shapes = CASES[name]
    inputs = tuple(hookgrad.tensor(arr(*s), requires_grad=True) for s in shapes)

    def second(*xs):
        return tuple(_grads_of(hookgrad, fn, xs, 2))

    assert hookgrad.autograd.gradcheck(second, inputs, atol=1e-5, rtol=1e-4)


def _grads_of(lib, fn, inputs, order):
    out = (fn(lib, *inputs) ** 2).sum()
    for _ in range(order):
        grads = lib.autograd.grad(out, inputs, create_graph=True)
        out = sum((g * g).sum() for g in grads)
    return grads


@pytest.mark.parametrize(
    "name",
    [
        "conv2d",
        "conv_transpose2d",
        "batch_norm",
        "group_norm",
        "layer_norm",
        "max_pool2d",
        "avg_pool2d",
    ],
)
def test_raw_and_graph_rule_bodies_agree(name):
    """A plain backward (array kernels) equals the first gradient built under create_graph."""
    fn, shapes = CASES[name]
    arrays = [arr(*s) for s in shapes]
    inputs = [hookgrad.tensor(a, requires_grad=True) for a in arrays]
    fn(hookgrad, *inputs).pow(3).sum().backward()
    raw = [t.grad.numpy() for t in inputs]
    inputs2 = [hookgrad.tensor(a, requires_grad=True) for a in arrays]
    grads = hookgrad.autograd.grad(fn(hookgrad, *inputs2).pow(3).sum(), inputs2, create_graph=True)
    assert all(g.grad_fn is not None for g in grads)  # the differentiable bodies ran
    for r, g in zip(raw, grads, strict=True):
        np.testing.assert_allclose(g.detach().numpy(), r, rtol=1e-10, atol=1e-12)


BAD_CALLS = {
    "channels": lambda lib: lib.nn.functional.conv2d(lib.ones(2, 5, 8, 8), lib.ones(4, 3, 3, 3)),
    "rank": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 2, 5, 8, 8), lib.ones(4, 3, 3, 3)),
    "same_strided": lambda lib: lib.nn.functional.conv2d(
        lib.ones(1, 3, 8, 8), lib.ones(4, 3, 3, 3), stride=2, padding="same"
    ),
    "bad_padding_string": lambda lib: lib.nn.functional.conv1d(
        lib.ones(1, 3, 8), lib.ones(4, 3, 3), padding="x"
    ),
    "kernel_too_big": lambda lib: lib.nn.functional.conv2d(
        lib.ones(1, 3, 2, 2), lib.ones(4, 3, 3, 3)
    ),
    "groups": lambda lib: lib.nn.functional.conv2d(
        lib.ones(1, 3, 8, 8), lib.ones(4, 3, 3, 3), groups=2
    ),
    "weight_rank": lambda lib: lib.nn.functional.conv1d(lib.ones(2, 3, 8), lib.ones(4, 3, 3, 3)),
    "dtype": lambda lib: lib.nn.functional.conv2d(
        lib.ones(1, 3, 5, 5, dtype=lib.float64), lib.ones(4, 3, 3, 3)
    ),
    "bias": lambda lib: lib.nn.functional.conv2d(
        lib.ones(1, 3, 5, 5), lib.ones(4, 3, 3, 3), lib.ones(5)
    ),
    "output_padding": lambda lib: lib.nn.functional.conv_transpose2d(
        lib.ones(1, 4, 3, 3), lib.ones(4, 3, 3, 3), output_padding=1
    ),
    "transposed_channels": lambda lib: lib.nn.functional.conv_transpose2d(
        lib.ones(1, 5, 3, 3), lib.ones(4, 3, 3, 3)
    ),
    "pool_padding": lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 2, 8, 8), 3, padding=2),
    "pool_rank": lambda lib: lib.nn.functional.max_pool2d(lib.ones(8, 8), 3),
    "pool_too_small": lambda lib: lib.nn.functional.avg_pool2d(lib.ones(1, 2, 2, 2), 3),
    "pool1d_stride": lambda lib: lib.nn.functional.max_pool1d(lib.ones(2, 8), 3, stride=0),
    "avg_divisor": lambda lib: lib.nn.functional.avg_pool2d(
        lib.ones(1, 2, 4, 4), 2, divisor_override=0
    ),
    "bn_single_value": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(1, 3), lib.zeros(3), lib.ones(3), training=True
    ),
    "bn_eval_without_stats": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(2, 3), None, None, training=False
    ),
    "gn_groups": lambda lib: lib.nn.functional.group_norm(lib.ones(2, 5, 3), 3),
    "ln_shape": lambda lib: lib.nn.functional.layer_norm(lib.ones(2, 5, 3), (7,)),
    "ln_int": lambda lib: lib.nn.functional.layer_norm(lib.ones(2, 5, 3), 3),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_errors_match_torch(torch, name):
    assert_same(lambda lib, log: BAD_CALLS[name](lib), torch)


@pytest.mark.oracle
def test_saved_values_match_torch(torch):
    def scenario(lib, log):
        x = lib.ones(1, 2, 5, 5, requires_grad=True)
        w = lib.ones(3, 2, 3, 3, requires_grad=True)
        node = lib.nn.functional.conv2d(x, w, stride=2, padding=1).grad_fn
        log.append(
            [
                node._saved_stride,
                node._saved_padding,
                node._saved_dilation,
                node._saved_transposed,
                node._saved_groups,
            ]
        )
        return [node._saved_input, node._saved_weight]

    assert_same(scenario, torch)


@pytest.mark.oracle
def test_max_pool_ties_take_first_maximum(torch):
    """Constant windows: every gradient goes to the window's first element, as in PyTorch."""

    def scenario(lib, log):
        x = lib.zeros(1, 1, 4, 6, requires_grad=True)
        out, idx = lib.nn.functional.max_pool2d(x, (2, 3), (1, 2), return_indices=True)
        out.sum().backward()
        return idx, x.grad

    assert_same(scenario, torch)


@pytest.mark.oracle
def test_max_pool_nan_propagates(torch):
    def scenario(lib, log):
        x = lib.tensor(
            [[[[1.0, float("nan"), 3.0, 0.0], [0.0, 2.0, 5.0, 1.0]]]], requires_grad=True
        )
        out = lib.nn.functional.max_pool2d(x, 2)
        out.sum().backward()
        return out, x.grad

    assert_same(scenario, torch)


@pytest.mark.oracle
def test_batch_norm_running_stats_update_in_place(torch):
    def scenario(lib, log):
        rm, rv = lib.zeros(3), lib.ones(3)
        x = lib.tensor(np.arange(24.0).reshape(4, 3, 2).tolist())
        lib.nn.functional.batch_norm(x, rm, rv, training=True, momentum=0.25)
        log.append(rm._version)
        return rm, rv

    assert_same(scenario, torch)
