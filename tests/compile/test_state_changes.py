"""State that changes between calls is seen, never a stale result (soundness rule 2, issue 24).

Each scenario builds a fresh world, changes it before every call (globals, closure cells,
module attributes and parameters, tensor metadata, hooks added and removed, grad mode) and
calls the function eagerly and compiled; every call's output, dtype and ``requires_grad`` must
match. Run under every built-in backend and under a custom backend that runs the
``hookgrad.fx.GraphModule`` it receives.
"""

from __future__ import annotations

from typing import Any

import pytest

import hookgrad as torch
from tests.compile.fuzz_programs import fx_backend

BACKENDS = ["eager", "aot_eager", "inductor", fx_backend]

G = {"k": 1.0}
GV = [2.0]
SCALE = 1.0
GT = torch.ones(2)


def _obs(r: Any) -> Any:
    if isinstance(r, torch.Tensor):
        return (tuple(r.shape), r.dtype, r.requires_grad,
                [round(float(v), 4) for v in r.detach().reshape(-1).tolist()])
    return r


def _run(make: Any, backend: Any, calls: int) -> list:
    torch.manual_seed(0)
    fn, mutate, args = make()
    run = fn if backend is None else torch.compile(fn, backend=backend)
    out = []
    for i in range(calls):
        mutate(i)
        try:
            out.append(_obs(run(*args(i))))
        except Exception as e:  # noqa: BLE001 - the exception type is observed
            out.append(("raised", type(e).__name__))
    return out


def _nothing(i: int) -> None:
    return None


def _ones(i: int) -> tuple:
    return (torch.ones(2),)


def globals_dict_and_list() -> Any:
    def fn(x: Any) -> Any:
        return x * G["k"] + GV[0]

    def mut(i: int) -> None:
        G["k"], GV[0] = float(i), float(i) * 3
    return fn, mut, _ones


def global_name_rebound() -> Any:
    def fn(x: Any) -> Any:
        return x * SCALE

    def mut(i: int) -> None:
        global SCALE
        SCALE = float(i + 1)
    return fn, mut, _ones


def global_tensor_rebound() -> Any:
    def fn(x: Any) -> Any:
        return x + GT

    def mut(i: int) -> None:
        global GT
        GT = torch.full((2,), float(i))
    return fn, mut, _ones


def closure_tensor_written_in_place() -> Any:
    t = torch.ones(2)

    def fn(x: Any) -> Any:
        return x + t.sum()

    def mut(i: int) -> None:
        t.fill_(float(i))
    return fn, mut, _ones


def closure_cell_rebound() -> Any:
    k = 1.0

    def fn(x: Any) -> Any:
        return x * k

    def mut(i: int) -> None:
        nonlocal k
        k = float(i + 2)
    return fn, mut, _ones


def module_attribute_and_parameters() -> Any:
    m = torch.nn.Linear(2, 2)
    m.alpha = 1.0

    def fn(x: Any) -> Any:
        return m(x) * m.alpha + m.weight.sum()

    def mut(i: int) -> None:
        m.alpha = float(i + 1)
        if i == 2:
            with torch.no_grad():
                m.weight.mul_(2)
        if i == 3:
            m.weight = torch.nn.Parameter(torch.ones(2, 2))
    return fn, mut, _ones


def module_training_flag() -> Any:
    m = torch.nn.Dropout(0.5)

    def fn(x: Any) -> Any:
        return m(x) if m.training else x * 3

    def mut(i: int) -> None:
        m.train(i % 2 == 0)
    return fn, mut, lambda i: (torch.ones(4),)


def tensor_metadata() -> Any:
    def fn(x: Any) -> Any:
        return (x * 2).sum(0)

    def args(i: int) -> tuple:
        return ([torch.ones(2, 3), torch.ones(2, 3, requires_grad=True),
                 torch.ones(2, 3, dtype=torch.float64), torch.ones(3, 2).t(), torch.ones(4, 3),
                 torch.ones(2, 3)][i],)
    return fn, _nothing, args


def stride_decides_view() -> Any:
    def fn(x: Any) -> Any:
        return x.view(-1)

    def args(i: int) -> tuple:
        base = torch.arange(6.0)
        return (base.reshape(2, 3) if i % 2 == 0 else base.reshape(3, 2).t(),)
    return fn, _nothing, args


def input_hook_added_and_removed() -> Any:
    x = torch.ones(2, requires_grad=True)
    handles: list = []

    def fn(x: Any) -> Any:
        (x * 2).sum().backward()
        g = x.grad.clone()
        x.grad = None
        return g

    def mut(i: int) -> None:
        if i == 1:
            handles.append(x.register_hook(lambda g: g * 10))
        if i == 2:
            handles.pop().remove()
    return fn, mut, lambda i: (x,)


def module_hook_added_and_removed() -> Any:
    m = torch.nn.Linear(2, 2)
    handles: list = []

    def fn(x: Any) -> Any:
        return m(x)

    def mut(i: int) -> None:
        if i == 1:
            handles.append(m.register_forward_hook(lambda mod, a, o: o * 0))
        if i == 2:
            handles.pop().remove()
    return fn, mut, _ones


def object_attribute_and_length() -> Any:
    cfg = type("Cfg", (), {})()
    cfg.scale, cfg.items = 1.0, [1]

    def fn(x: Any) -> Any:
        return x * cfg.scale + len(cfg.items)

    def mut(i: int) -> None:
        cfg.scale = float(i)
        cfg.items.append(i)
    return fn, mut, _ones


def function_in_a_dict_replaced() -> Any:
    box = {"h": lambda t: t * 2}

    def fn(x: Any) -> Any:
        return box["h"](x)

    def mut(i: int) -> None:
        if i == 1:
            box["h"] = lambda t: t * 7
    return fn, mut, _ones


def parameter_requires_grad_flipped() -> Any:
    m = torch.nn.Linear(2, 2)

    def fn(x: Any) -> Any:
        return m(x)

    def mut(i: int) -> None:
        m.weight.requires_grad_(i != 1)
        m.bias.requires_grad_(i != 1)
    return fn, mut, _ones


def module_converted_to_double() -> Any:
    m = torch.nn.Linear(2, 2)

    def fn(x: Any) -> Any:
        return m(x)

    def mut(i: int) -> None:
        if i == 1:
            m.double()
    return fn, mut, lambda i: (torch.ones(2, dtype=torch.float64 if i else torch.float32),)


def in_place_on_a_view_and_setitem() -> Any:
    def fn(x: Any) -> Any:
        y = x.clone()
        y[0].mul_(5)
        y[1] = 7
        return y + 1
    return fn, _nothing, lambda i: (torch.full((2,), float(i)),)


def multi_output_ops() -> Any:
    def fn(x: Any) -> Any:
        a, b = x.chunk(2)
        v, idx = torch.max(x.view(2, -1), 1)
        return a * b + v.sum() + idx.sum()
    return fn, _nothing, lambda i: (torch.arange(4.0) * (i + 1),)


def factories_of_changing_inputs() -> Any:
    def fn(x: Any) -> Any:
        return torch.zeros_like(x) + x.new_ones(x.shape[-1]) + torch.ones(3)
    return fn, _nothing, lambda i: (torch.full((2, 3), float(i),
                                              dtype=torch.float64 if i == 2 else torch.float32),)


SCENARIOS = {f.__name__: (f, n) for f, n in (
    (globals_dict_and_list, 3), (global_name_rebound, 3), (global_tensor_rebound, 3),
    (closure_tensor_written_in_place, 3), (closure_cell_rebound, 3),
    (module_attribute_and_parameters, 5), (module_training_flag, 3), (tensor_metadata, 6),
    (stride_decides_view, 3), (input_hook_added_and_removed, 3),
    (module_hook_added_and_removed, 3), (object_attribute_and_length, 3),
    (function_in_a_dict_replaced, 3), (parameter_requires_grad_flipped, 3),
    (module_converted_to_double, 3), (in_place_on_a_view_and_setitem, 3),
    (multi_output_ops, 3), (factories_of_changing_inputs, 3))}


class TestStateChangedBetweenCalls:
    @pytest.mark.parametrize("name", sorted(SCENARIOS))
    def test_every_backend_sees_the_new_state(self, name: str) -> None:
        make, calls = SCENARIOS[name]
        want = _run(make, None, calls)
        for backend in BACKENDS:
            torch._dynamo.reset()
            got = _run(make, backend, calls)
            assert got == want, (getattr(backend, "__name__", backend), got, want)
