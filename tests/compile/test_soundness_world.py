"""Soundness of compiled calls when the *world* around the region changes between calls
(issue 25, "fuzzer stays clean"; docs/compile.md, soundness rule 2): defaults and bound
arguments of called functions, closure cells holding None, enum settings, methods replaced on
a class, a module's submodules, parameters and buffers, modules and callable objects swapped inside
containers, ordered and default dicts, deques, sets, mapping proxies and list subclasses,
objects with ``__slots__`` or ``__getattr__`` or behind a weak reference, environment
variables, random-number-generator state saved and restored inside the region, global
settings read through getters, and returned named tuples. Each case was found by the
state-change probes of the compile fuzzer; every call is compared with eager under every
backend (`_state_harness`).
"""

from __future__ import annotations

import collections
import enum
import functools
import os
from typing import Any

import pytest

import hookgrad as torch
from tests.compile._state_harness import check_every_backend, nothing


def _ones(i: int) -> tuple:
    return (torch.ones(2, 3),)


def helper_default_changed() -> Any:
    def helper(x: Any, k: float = 1.0, *, j: float = 0.0) -> Any:
        return x * k + j

    def fn(x: Any) -> Any:
        return helper(x)

    def mutate(i: int) -> None:
        helper.__defaults__ = (float(i + 1),)
        helper.__kwdefaults__ = {"j": float(i)}
    return fn, mutate, _ones


def list_bound_by_a_partial() -> Any:
    ks = [1.0]
    p = functools.partial(lambda x, ks: x * ks[0], ks=ks)

    def fn(x: Any) -> Any:
        return p(x)

    def mutate(i: int) -> None:
        ks[0] = float(i + 1)
    return fn, mutate, _ones


def closure_cell_holding_none() -> Any:
    k = None

    def helper(x: Any) -> Any:
        return x * 2 if k is None else x * k

    def fn(x: Any) -> Any:
        return helper(x) + (1 if k is None else 0)

    def mutate(i: int) -> None:
        nonlocal k
        k = None if i % 2 == 0 else 5.0
    return fn, mutate, _ones


class Mode(enum.Enum):
    A = 1
    B = 2


def enum_setting_in_a_dict_and_an_attribute() -> Any:
    cfg = {"mode": Mode.A}
    obj = type("Cfg", (), {})()
    obj.mode = Mode.A

    def fn(x: Any) -> Any:
        return (x * 2 if cfg["mode"] is Mode.A else x * 3) + (1 if obj.mode == Mode.A else 0)

    def mutate(i: int) -> None:
        cfg["mode"] = Mode.B if i % 2 else Mode.A
        obj.mode = Mode.A if i == 2 else Mode.B
    return fn, mutate, _ones


def method_replaced_on_the_class() -> Any:
    class M(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            return self.act(x)

        def act(self, x: Any) -> Any:
            return x * 2
    m = M()

    def fn(x: Any) -> Any:
        return m(x)

    def mutate(i: int) -> None:
        if i == 2:
            M.act = lambda self, x: x * 5
    return fn, mutate, _ones


def submodules_replaced_and_appended() -> Any:
    seq = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())

    def fn(x: Any) -> Any:
        return seq(x) * len(list(seq.parameters()))

    def mutate(i: int) -> None:
        if i == 1:
            seq[1] = torch.nn.Tanh()
        if i == 2:
            seq.append(torch.nn.Linear(3, 3))
        if i == 3:
            seq[0] = torch.nn.Linear(3, 3)
    return fn, mutate, _ones


def submodule_attribute_replaced() -> Any:
    class M(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)
            self.act = torch.nn.ReLU()

        def forward(self, x: Any) -> Any:
            return self.act(self.lin(x))
    m = M()

    def fn(x: Any) -> Any:
        return m(x)

    def mutate(i: int) -> None:
        m.act = [torch.nn.ReLU(), torch.nn.Tanh(), torch.nn.Identity(), torch.nn.Sigmoid()][i]
    return fn, mutate, _ones


def module_containers_grow() -> Any:
    ml = torch.nn.ModuleList([torch.nn.Linear(3, 3)])
    md = torch.nn.ModuleDict({"a": torch.nn.Linear(3, 3)})
    pl = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(3))])

    def fn(x: Any) -> Any:
        for layer in ml:
            x = layer(x)
        for key in md:
            x = md[key](x)
        for p in pl:
            x = x * p
        return x

    def mutate(i: int) -> None:
        if i == 1:
            ml.append(torch.nn.Linear(3, 3))
        if i == 2:
            md["b"] = torch.nn.Linear(3, 3)
        if i == 3:
            pl.append(torch.nn.Parameter(torch.full((3,), 2.0)))
    return fn, mutate, _ones


def bias_set_to_none_and_back() -> Any:
    m = torch.nn.Linear(3, 3)

    def fn(x: Any) -> Any:
        return m(x)

    def mutate(i: int) -> None:
        if i == 1:
            m.bias = None
        if i == 2:
            m.bias = torch.nn.Parameter(torch.ones(3))
    return fn, mutate, _ones


def object_with_slots() -> Any:
    class Cfg:
        __slots__ = ("k",)

        def __init__(self) -> None:
            self.k = 1.0
    cfg = Cfg()

    def fn(x: Any) -> Any:
        return x * cfg.k

    def mutate(i: int) -> None:
        cfg.k = float(i + 1)
    return fn, mutate, _ones


def object_with_getattr() -> Any:
    class Cfg:
        def __init__(self) -> None:
            self.table = {"k": 1.0}

        def __getattr__(self, name: str) -> Any:
            return self.__dict__["table"][name]
    cfg = Cfg()

    def fn(x: Any) -> Any:
        return x * cfg.k

    def mutate(i: int) -> None:
        cfg.table["k"] = float(i + 1)
    return fn, mutate, _ones


def rng_state_saved_and_restored_inside() -> Any:
    def fn(x: Any) -> Any:
        state = torch.get_rng_state()
        y = x + torch.rand(2, 3)
        torch.set_rng_state(state)
        with torch.random.fork_rng():
            torch.manual_seed(5)
            y = y + torch.rand(2, 3)
        return y + torch.rand(2, 3)
    return fn, nothing, _ones


def global_settings_read_through_getters() -> Any:
    def fn(x: Any) -> Any:
        return x * torch.get_num_threads() + (1 if torch.is_anomaly_enabled() else 0)

    def mutate(i: int) -> None:
        torch.set_num_threads(1 + i % 2)
        torch.autograd.set_detect_anomaly(i == 2)
    return fn, mutate, _ones


def modules_and_callables_in_containers_swapped() -> Any:
    class Double:
        def __call__(self, t: Any) -> Any:
            return t * 2

    class Triple:
        def __call__(self, t: Any) -> Any:
            return t * 3
    layers = [torch.nn.ReLU()]
    box = {"f": Double()}

    def fn(x: Any) -> Any:
        return box["f"](layers[0](x - 0.5))

    def mutate(i: int) -> None:
        layers[0] = [torch.nn.ReLU(), torch.nn.Tanh(), torch.nn.Sigmoid(), torch.nn.ReLU()][i]
        box["f"] = Triple() if i % 2 else Double()
    return fn, mutate, _ones


def containers_of_other_kinds() -> Any:
    import types  # noqa: PLC0415
    ordered = collections.OrderedDict(k=1.0)
    counts = collections.defaultdict(float, k=1.0)
    queue = collections.deque([1.0])
    names = {"a"}
    table = {"k": 1.0}
    proxy = types.MappingProxyType(table)

    class Items(list):
        pass
    items = Items([1.0])

    def fn(x: Any) -> Any:
        return (x * ordered["k"] * counts["k"] * queue[0] * len(queue) * proxy["k"]
                * len(items) + (1 if "b" in names else 0))

    def mutate(i: int) -> None:
        ordered["k"] = counts["k"] = float(i + 1)
        queue.appendleft(float(i + 2))
        table["k"] = float(i) + 0.5
        items.append(1.0)
        if i == 2:
            names.add("b")
    return fn, mutate, _ones


def object_behind_a_weak_reference() -> Any:
    import weakref  # noqa: PLC0415
    cfg = type("Cfg", (), {})()
    cfg.k = 1.0
    ref = weakref.ref(cfg)

    def fn(x: Any) -> Any:
        return x * ref().k

    def mutate(i: int) -> None:
        cfg.k = float(i + 1)
    return fn, mutate, _ones


def environment_variable_read() -> Any:
    import os  # noqa: PLC0415

    def fn(x: Any) -> Any:
        return x * 2 if os.environ.get("HOOKGRAD_TEST_SOUNDNESS_FLAG") == "1" else x * 3

    def mutate(i: int) -> None:
        if i % 2:
            os.environ["HOOKGRAD_TEST_SOUNDNESS_FLAG"] = "1"
        else:
            os.environ.pop("HOOKGRAD_TEST_SOUNDNESS_FLAG", None)
    return fn, mutate, _ones


_Pair = collections.namedtuple("_Pair", "a b")


def named_tuple_returned() -> Any:
    def fn(x: Any) -> Any:
        return _Pair(x * 2, x.sum())
    return fn, nothing, _ones


SCENARIOS = {f.__name__: f for f in (
    helper_default_changed, list_bound_by_a_partial, closure_cell_holding_none,
    enum_setting_in_a_dict_and_an_attribute, method_replaced_on_the_class,
    submodules_replaced_and_appended, submodule_attribute_replaced, module_containers_grow,
    bias_set_to_none_and_back, object_with_slots, object_with_getattr,
    rng_state_saved_and_restored_inside, global_settings_read_through_getters,
    named_tuple_returned, modules_and_callables_in_containers_swapped,
    containers_of_other_kinds, object_behind_a_weak_reference, environment_variable_read)}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_compiled_calls_see_the_changed_world(name: str) -> None:
    threads = torch.get_num_threads()
    try:
        check_every_backend(SCENARIOS[name], 4)
    finally:
        torch.set_num_threads(threads)
        torch.autograd.set_detect_anomaly(False)
        os.environ.pop("HOOKGRAD_TEST_SOUNDNESS_FLAG", None)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_gradients_assigned_inside_the_region_are_assigned_on_every_call(backend: str) -> None:
    """``optimizer.zero_grad()`` compiled on its own sets ``.grad = None``: a per-call write
    the graph does not replay (it kept the gradient on the third call): a graph break."""
    def run(compiled: bool) -> list:
        torch.manual_seed(0)
        m = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        flag = {"none": True}

        def fn() -> None:
            opt.zero_grad(set_to_none=flag["none"])
        call = torch.compile(fn, backend=backend) if compiled else fn
        seen = []
        for i in range(4):
            m(torch.ones(2, 3)).sum().backward()
            flag["none"] = i % 2 == 0
            call()
            seen.append(None if m.weight.grad is None else m.weight.grad.tolist())
        return seen
    torch._dynamo.reset()
    assert run(True) == run(False)
