"""Scenarios of PyTorch's ``test/inductor/test_compiled_autograd.py``, oracle-style: each
generator runs eagerly on PyTorch and under hookgrad's compiled autograd (a compiler that
compiles the captured backward graph with ``fullgraph=True, dynamic=True``, counting
compiles as the PyTorch tests do); the yielded gradients and logs must match, and each
scenario captures and compiles the number of backward graphs PyTorch's test expects.
"""

from __future__ import annotations

from typing import Any

import pytest

import hookgrad
from hookgrad._dynamo import compiled_autograd
from hookgrad._dynamo.utils import counters


def _compiler_fn(gm: Any) -> Any:
    def inner(gm_: Any, example_inputs: list) -> Any:
        counters["compiled_autograd"]["compiles"] += 1
        return gm_.forward
    return hookgrad.compile(gm, backend=inner, fullgraph=True, dynamic=True)


def _hook1(grad: Any) -> Any:
    return grad * 2


def _hook2(grads: tuple) -> tuple:
    return (grads[0] + 1,)


def _hook3(grad_inputs: tuple, grad_outputs: tuple) -> tuple:
    return (grad_inputs[0].sin() + grad_outputs[0],)


def _mlp(lib: Any, last_relu: bool = True) -> Any:
    layers = [lib.nn.Linear(4, 4), lib.nn.ReLU(), lib.nn.Linear(4, 4)]
    if last_relu:
        layers.append(lib.nn.ReLU())
    model = lib.nn.Sequential(*layers)
    with lib.no_grad():  # the same values in both libraries (their RNGs differ)
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.linspace(-0.9, 0.7 + 0.1 * i, p.numel()).reshape(p.shape))
    return model


def _inputs(lib: Any, i: int, shape: tuple = (1, 4)) -> Any:
    n = 1
    for s in shape:
        n *= s
    return (lib.arange(float(n)).reshape(shape) - 1.5 + i) / 3


def node_and_tensor_hooks(lib: Any) -> Any:
    model = _mlp(lib)
    model[0].weight.register_hook(_hook1)
    for i in range(3):
        out = model(_inputs(lib, i))
        out.grad_fn.register_prehook(_hook2)
        out.grad_fn.register_hook(_hook3)
        out.sum().backward()
        yield model[0].weight.grad
        yield model[2].bias.grad
        model.zero_grad()


def intermediate_hooks_and_retain_grad(lib: Any) -> Any:
    model = _mlp(lib, last_relu=False)
    for i in range(3):
        h = model[0](_inputs(lib, i, (2, 4)))
        h.register_hook(lambda g: g * 0.5)
        h.retain_grad()
        out = model[2](model[1](h))
        out.sum().backward()
        yield h.grad
        yield model[0].weight.grad
        model.zero_grad()


def post_accumulate_grad_hooks(lib: Any) -> Any:
    model = _mlp(lib)
    seen: list = []
    for p in model.parameters():
        p.register_post_accumulate_grad_hook(lambda p: seen.append(tuple(p.grad.shape)))
    for i in range(2):
        model(_inputs(lib, i, (3, 4))).sum().backward()
        yield model[2].weight.grad
        yield lib.tensor(float(len(seen)))
        model.zero_grad()


def module_full_backward_hooks(lib: Any) -> Any:
    model = _mlp(lib)
    log: list = []
    model[2].register_full_backward_hook(lambda m, gi, go: log.append(go[0] * 1))
    model[0].register_full_backward_pre_hook(lambda m, go: (go[0] * 2,))
    for i in range(3):
        x = _inputs(lib, i, (2, 4)).requires_grad_()
        model(x).sum().backward()
        yield x.grad
        yield model[0].bias.grad
        yield log[-1]
        model.zero_grad()


def saved_tensors_hooks_around_forward(lib: Any) -> Any:
    model = _mlp(lib)
    for i in range(2):
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            out = model(_inputs(lib, i, (2, 4)))
        out.sum().backward()
        yield model[0].weight.grad
        model.zero_grad()


SCENARIOS = [(node_and_tensor_hooks, 1), (intermediate_hooks_and_retain_grad, 1),
             (post_accumulate_grad_hooks, 1), (module_full_backward_hooks, 1),
             (saved_tensors_hooks_around_forward, 1)]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("scenario,count", SCENARIOS, ids=[s.__name__ for s, _ in SCENARIOS])
def test_compiled_autograd_matches_torch_eager(scenario: Any, count: int, torch: Any) -> None:
    def values(ts: list) -> list:
        return [None if t is None else [round(v, 4) for v in t.reshape(-1).tolist()]
                for t in ts]
    want = values(list(scenario(torch)))
    assert values(list(scenario(hookgrad))) == want
    counters["compiled_autograd"].clear()
    with compiled_autograd._enable(_compiler_fn):
        got = values(list(scenario(hookgrad)))
    assert got == want
    assert counters["compiled_autograd"]["captures"] == count
    assert counters["compiled_autograd"]["compiles"] == count
