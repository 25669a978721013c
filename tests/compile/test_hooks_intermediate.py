"""Rows 16-23 of spec compile.md §11: hooks on intermediates, compiled autograd off (§8.3)."""

from __future__ import annotations

from typing import Any

import pytest

import hookgrad
from tests.compile._libs import both, dynamo, plain


def _eager_vs_compiled(lib: Any, fn: Any, make_x: Any, **opts: Any) -> dict:
    x_eager = make_x(lib)
    fn(x_eager).backward()
    cnt = dynamo(lib).testing.CompileCounterWithBackend("eager")
    opt = lib.compile(fn, backend=cnt, fullgraph=True, **opts)
    grads = []
    for _ in range(2):  # first call traces, second runs the cached graph
        x = make_x(lib)
        opt(x).backward()
        grads.append(plain(x.grad))
    return {"eager": plain(x_eager.grad), "compiled": grads, "fc": cnt.frame_count,
            "oc": cnt.op_count}


def _randn4(lib: Any) -> Any:
    lib.manual_seed(0)
    return lib.tensor([0.5, -1.0, 2.0, 0.25], requires_grad=True)


def _ones(n: int) -> Any:
    return lambda lib: lib.ones(n, requires_grad=True)


def test_row16_hook_on_intermediate(torch):
    def fn(x: Any) -> Any:
        y = x * 2
        y.register_hook(lambda grad: grad + 1)
        return y.sum()
    ref, got = both(torch, lambda lib: _eager_vs_compiled(lib, fn, _randn4))
    assert got == ref
    assert got["compiled"] == [got["eager"]] * 2 and got["fc"] == 1 and got["oc"] == 3


def test_row17_intermediate_hook_with_container():
    glb_list: list = []
    glb_dict: dict = {}

    def fn(x: Any) -> Any:
        y = x * 2
        glb_list.append(y)
        glb_dict["tensor"] = y
        a = glb_list[0] * 3
        b = glb_dict["tensor"]
        y.register_hook(lambda grad: grad + 1)
        return (a + b).sum()
    x_eager = hookgrad.ones(4, requires_grad=True)
    fn(x_eager).backward()
    backend = hookgrad._dynamo.testing.EagerAndRecordGraphs()
    opt = hookgrad.compile(fn, backend=backend, fullgraph=True)
    for _ in range(2):
        glb_list.clear()
        glb_dict.clear()
        x = hookgrad.ones(4, requires_grad=True)
        opt(x).backward()
        assert plain(x.grad) == plain(x_eager.grad) == [10.0] * 4
        assert glb_list[0] is glb_dict["tensor"] and len(glb_list) == 1
    assert len(backend.graphs) == 1
    nodes = {n.name: n for n in backend.graphs[0].graph.nodes}
    hops = [n for n in nodes.values() if n.name.startswith("register_hook")]
    assert len(hops) == 1
    hop = hops[0]
    y = hop.args[0]
    users_of_y = [n for n in nodes.values() if n.op == "call_function" and y in n.args
                  and n is not hop]
    assert [n.args for n in users_of_y] == [(y, users_of_y[0].args[1])]  # a = y * 3 (pre-hook)
    add = next(n for n in nodes.values() if n.name == "add")
    assert hop in add.args  # the add consumes the hooked value
    assert hop in nodes["output"].args[0]  # the container element is the hooked value


def test_row18_used_before_and_after(torch):
    def fn(x: Any) -> Any:
        y = x * 2
        z = y + 1
        y.register_hook(lambda g: g * 2)
        w = y * 3
        return (z + w).sum()
    ref, got = both(torch, lambda lib: _eager_vs_compiled(lib, fn, _ones(2)))
    assert got["compiled"] == [got["eager"]] * 2 == [ref["eager"]] * 2 == [[16.0, 16.0]] * 2


def test_row19_hook_then_data_dependent_branch():
    # hookgrad has no `cond`: the spec's port uses a Python `if` on a tensor value without
    # fullgraph -> graph break -> the whole call runs eagerly with eager's gradients.
    def fn(x: Any) -> Any:
        y = x * 2
        y.register_hook(lambda g: g * 2)
        z = y + 1 if x.sum() > 0 else y - 1
        return z.sum()
    x_eager = hookgrad.ones(3, requires_grad=True)
    fn(x_eager).backward()
    cnt = hookgrad._dynamo.testing.CompileCounter()
    opt = hookgrad.compile(fn, backend=cnt)
    for _ in range(2):
        x = hookgrad.ones(3, requires_grad=True)
        opt(x).backward()
        assert plain(x.grad) == plain(x_eager.grad) == [4.0] * 3
    assert cnt.frame_count == 0
    with pytest.raises(hookgrad._dynamo.exc.Unsupported, match="Data-dependent"):
        hookgrad.compile(fn, backend="eager", fullgraph=True)(hookgrad.ones(3,
                                                                            requires_grad=True))


def test_row20_hook_returns_none(torch):
    def fn(x: Any) -> Any:
        y = x * 2
        y.register_hook(lambda g: None)
        return y.sum()
    ref, got = both(torch, lambda lib: _eager_vs_compiled(lib, fn, _ones(4)))
    assert got == ref and got["compiled"] == [[2.0] * 4] * 2


def test_row21_hook_has_side_effect_body(torch):
    def fn(x: Any) -> Any:
        y = x * 2
        z = y + 1
        y.register_hook(lambda g: g * 2)
        w = y * 3
        return (z + w).sum()
    ref, got = both(torch, lambda lib: _eager_vs_compiled(lib, fn, _ones(2)))
    assert got["compiled"] == [got["eager"]] * 2 and got["eager"] == ref["eager"]


def _appending_fn(store: list) -> Any:
    def fn(x: Any) -> Any:
        y = x * 2

        def _hook(grad: Any) -> Any:
            store.append(grad)
            return grad * 2
        y.register_hook(_hook)
        z = y + x
        return z.sum()
    return fn


def test_row22_unsafe_side_effect_fullgraph(torch):
    def scenario(lib: Any) -> str:
        store: list = []
        opt = lib.compile(_appending_fn(store), backend="eager", fullgraph=True)
        with pytest.raises(dynamo(lib).exc.Unsupported, match="Unsafe side effect") as info:
            opt(lib.ones(3, requires_grad=True))
        return type(info.value).__name__ + f":{len(store)}"
    ref, got = both(torch, scenario)
    assert got == ref == "Unsupported:0"


def test_row22_without_fullgraph_runs_eagerly():
    store: list = []
    fn = _appending_fn(store)
    x_eager = hookgrad.ones(3, requires_grad=True)
    fn(x_eager).backward()
    store.clear()
    cnt = hookgrad._dynamo.testing.CompileCounter()
    opt = hookgrad.compile(fn, backend=cnt)
    for i in range(2):
        x = hookgrad.ones(3, requires_grad=True)
        opt(x).backward()
        assert plain(x.grad) == plain(x_eager.grad)
        assert len(store) == i + 1  # the hook ran once per backward, for real
    assert cnt.frame_count == 0  # (D) PyTorch splits into frames; hookgrad runs eagerly


def test_row23_intermediary_hooks(torch):
    def scenario(lib: Any) -> dict:
        def simple_hook(g: Any) -> Any:
            return g * 2

        def f(x: Any) -> Any:
            y = x + 1
            y.register_hook(simple_hook)
            return y + 1
        cnt = dynamo(lib).testing.CompileCounter()
        opt = lib.compile(f, backend=cnt, fullgraph=True)
        out = lib.tensor([0.5], requires_grad=True)
        res = opt(out)
        res.backward()
        return {"res": plain(res), "eager": plain(f(out)), "grad": plain(out.grad),
                "fc": cnt.frame_count, "oc": cnt.op_count}
    ref, got = both(torch, scenario)
    assert got == ref
    assert got["grad"] == [2.0] and got["fc"] == 1 and got["res"] == got["eager"]


def test_intermediate_hook_code_change_recompiles_without_ca():
    # spec §8.3.5: the body is traced, so another hook code is another graph
    def make(k: float) -> Any:
        return lambda g: g * k
    hooks = {"h": make(2)}

    def fn(x: Any) -> Any:
        y = x * 2
        y.register_hook(hooks["h"])
        return y.sum()
    cnt = hookgrad._dynamo.testing.CompileCounter()
    opt = hookgrad.compile(fn, backend=cnt)
    x = hookgrad.ones(2, requires_grad=True)
    opt(x).backward()
    hooks["h"] = make(2)  # a new closure of the same code and constant: no recompile
    opt(x).backward()
    assert cnt.frame_count == 1
    hooks["h"] = make(5)  # the closure constant changed: recompile
    x = hookgrad.ones(2, requires_grad=True)
    opt(x).backward()
    assert cnt.frame_count == 2 and plain(x.grad) == [10.0, 10.0]
    hooks["h"] = lambda g: g + 1  # another code: recompile
    x = hookgrad.ones(2, requires_grad=True)
    opt(x).backward()
    assert cnt.frame_count == 3 and plain(x.grad) == [4.0, 4.0]
