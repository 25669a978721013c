"""A finished training step leaves no reference cycle behind (issue 16).

Everything a step creates (tensors, nodes, saved values, hook handles, buffers) must be freed by
reference counting alone when the step's last reference goes, as PyTorch's C++ graph is: then the
cyclic garbage collector never has anything of the step to find. Each scenario runs a few warm-up
steps (lazy caches are filled once and are not garbage), then one step with the collector off,
and asserts that ``gc.collect()`` finds nothing.
"""

from __future__ import annotations

import gc
from collections.abc import Callable

import numpy as np
import pytest

import hookgrad as hg


def _noop_grad_hook(g):
    return None


def _chain_with_tensor_hooks() -> Callable[[], None]:
    x = hg.tensor(np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4), requires_grad=True)

    def step():
        y = x
        for _ in range(20):
            y = hg.tanh(y * 1.01)
            y.register_hook(_noop_grad_hook)
        y.retain_grad()
        y.sum().backward()
        x.grad = None

    return step


def _mlp_training_step(optimizer: str, module_hooks: bool) -> Callable[[], None]:
    hg.manual_seed(0)
    model = hg.nn.Sequential(hg.nn.Linear(8, 16), hg.nn.ReLU(), hg.nn.Linear(16, 3))
    if module_hooks:
        for layer in model:
            layer.register_forward_pre_hook(lambda mod, args: None)
            layer.register_forward_hook(lambda mod, args, out: None)
            layer.register_full_backward_pre_hook(lambda mod, go: None)
            layer.register_full_backward_hook(lambda mod, gi, go: None)
        for p in model.parameters():
            p.register_post_accumulate_grad_hook(lambda p: None)
    opt = (hg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if optimizer == "sgd"
           else hg.optim.Adam(model.parameters(), lr=1e-3))
    x = hg.randn(5, 8, requires_grad=module_hooks)
    y = hg.tensor([0, 1, 2, 1, 0])

    def step():
        opt.zero_grad()
        hg.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

    return step


def _cnn_step() -> Callable[[], None]:
    hg.manual_seed(0)
    model = hg.nn.Sequential(hg.nn.Conv2d(2, 4, 3, padding=1), hg.nn.BatchNorm2d(4),
                             hg.nn.ReLU(), hg.nn.MaxPool2d(2), hg.nn.Flatten(),
                             hg.nn.Linear(4 * 2 * 2, 3))
    opt = hg.optim.SGD(model.parameters(), lr=0.01)
    x = hg.randn(3, 2, 4, 4)

    def step():
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()

    return step


def _lstm_step() -> Callable[[], None]:
    hg.manual_seed(0)
    model = hg.nn.LSTM(4, 6, batch_first=True)
    opt = hg.optim.SGD(model.parameters(), lr=0.01)
    x = hg.randn(2, 5, 4)

    def step():
        opt.zero_grad()
        model(x)[0].pow(2).mean().backward()
        opt.step()

    return step


def _hessian_vector_step() -> Callable[[], None]:
    hg.manual_seed(0)
    w = hg.randn(4, 3, requires_grad=True)
    x, v = hg.randn(5, 4), hg.randn(4, 3)

    def step():
        (g,) = hg.autograd.grad(hg.tanh(x @ w).pow(2).mean(), (w,), create_graph=True)
        hg.autograd.grad((g * v).sum(), (w,))

    return step


def _saved_tensor_hooks_step() -> Callable[[], None]:
    w = hg.randn(3, 3, requires_grad=True)

    def step():
        with hg.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            loss = hg.exp(w @ w).sum()
        loss.backward()
        w.grad = None

    return step


SCENARIOS = {
    "chain_with_tensor_hooks": _chain_with_tensor_hooks,
    "mlp_sgd_momentum": lambda: _mlp_training_step("sgd", False),
    "mlp_adam_with_module_hooks": lambda: _mlp_training_step("adam", True),
    "cnn": _cnn_step,
    "lstm": _lstm_step,
    "hessian_vector_product": _hessian_vector_step,
    "saved_tensor_hooks": _saved_tensor_hooks_step,
}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_a_finished_step_leaves_nothing_for_the_cyclic_collector(name, recwarn):
    step = SCENARIOS[name]()
    for _ in range(3):
        step()
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # keep what a collection finds, to name it on failure
    try:
        step()
        found = gc.collect()
        kinds = sorted({type(o).__name__ for o in gc.garbage})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()
    assert found == 0, f"{name}: the step left {found} objects in cycles ({kinds})"


def test_the_check_sees_a_cycle_when_there_is_one():
    # The same measurement on a step that does leave a cycle (a hook closing over its own
    # tensor's graph through a list) must report it: the test above can fail.
    def leaky_step():
        x = hg.ones(2, requires_grad=True)
        box: list = []
        y = x * 2
        box.append(y)
        y.register_hook(lambda g, box=box: None)
        box.append(box)
        y.sum().backward()

    leaky_step()
    gc.collect()
    gc.disable()
    try:
        leaky_step()
        assert gc.collect() > 0
    finally:
        gc.enable()
