"""Rows 1-15 of spec compile.md §11: hooks registered on sourced tensors inside a compiled fn.

Each scenario runs on PyTorch (``torch.compile``) and on hookgrad and the observations
(gradients, frame/op counts, handle facts) must be equal.
"""

from __future__ import annotations

from typing import Any

import pytest

import hookgrad
from hookgrad.utils.hooks import RemovableHandle
from tests.compile._libs import both, dynamo, plain


def global_hook_0(grad: Any) -> Any:
    return grad * 4


def global_hook_1(grad: Any) -> Any:
    return grad / 2


def global_hook_2(grad: Any) -> Any:
    return grad * 3


h0 = None


def _seed(lib: Any) -> Any:
    return lib.tensor([1.0, 2.0, 3.0])


def _v(lib: Any) -> Any:
    return lib.tensor([0.0, 0.0, 0.0], requires_grad=True)


def _run_xyz(lib: Any, fn: Any, **opts: Any) -> dict:
    cnt = dynamo(lib).testing.CompileCounter()
    opt = lib.compile(fn, backend=cnt, **opts)
    v = _v(lib)
    out = opt(v, lib.randn(2, 2), lib.randn(2, 2))
    out[0].backward(_seed(lib))
    return {"grad": plain(v.grad), "fc": cnt.frame_count, "oc": cnt.op_count, "out": out}


def _obs(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "out"}


def test_row1_only_register_hook_lambda_empty_graph(torch):
    def scenario(lib: Any) -> dict:
        def fn(x: Any) -> Any:
            x.register_hook(lambda grad: grad * 2)
            return x
        cnt = dynamo(lib).testing.CompileCounter()
        opt = lib.compile(fn, backend=cnt)
        grads = []
        for _ in range(2):  # the second call runs the cached (empty-graph) entry
            v = _v(lib)
            r = opt(v)
            r.backward(_seed(lib))
            grads.append(plain(v.grad))
        return {"grads": grads, "fc": cnt.frame_count, "oc": cnt.op_count, "same": r is v}
    ref, got = both(torch, scenario)
    assert got == ref
    assert got == {"grads": [[2.0, 4.0, 6.0]] * 2, "fc": 0, "oc": 0, "same": True}


def test_row2_register_hook_lambda_with_ops(torch):
    def scenario(lib: Any) -> dict:
        def fn(x: Any, y: Any, z: Any) -> Any:
            x.register_hook(lambda grad: grad * 2)
            return x, y * y, z * z
        first = _obs(_run_xyz(lib, fn))
        return first
    ref, got = both(torch, scenario)
    assert got == ref == {"grad": [2.0, 4.0, 6.0], "fc": 1, "oc": 2}


def test_row2_cached_call_registers_again():
    def fn(x: Any, y: Any, z: Any) -> Any:
        x.register_hook(lambda grad: grad * 2)
        return x, y * y, z * z
    cnt = hookgrad._dynamo.testing.CompileCounter()
    opt = hookgrad.compile(fn, backend=cnt)
    v = _v(hookgrad)
    for _ in range(3):
        opt(v, hookgrad.randn(2, 2), hookgrad.randn(2, 2))
    v.backward(_seed(hookgrad))  # three registrations, as three eager calls make: x 8
    assert plain(v.grad) == [8.0, 16.0, 24.0]
    assert cnt.frame_count == 1


def _handle_lambda(x: Any, y: Any, z: Any) -> Any:
    handle = x.register_hook(lambda grad: grad * 2)
    z = z * z
    handle.remove()
    x.register_hook(lambda grad: grad * 3)
    return x, y * y, z


def test_row3_removed_handle_lambda(torch):
    ref, got = both(torch, lambda lib: _obs(_run_xyz(lib, _handle_lambda)))
    assert got == ref == {"grad": [3.0, 6.0, 9.0], "fc": 1, "oc": 2}
    entry = hookgrad.compile(_handle_lambda)._hookgrad_cache[0]
    hooks = [e for e in entry.effects if type(e).__name__ == "TensorHook"]
    assert len(hooks) == 1  # only the x3 registration survives in the side-effect log
    v = _v(hookgrad)  # and a cached call registers only that one
    hookgrad.compile(_handle_lambda, backend="eager")(v, hookgrad.ones(1), hookgrad.ones(1))
    v.backward(_seed(hookgrad))
    assert plain(v.grad) == [3.0, 6.0, 9.0]


def test_row4_multi_handle_return(torch):
    def fn(x: Any, y: Any, z: Any) -> Any:
        handle = x.register_hook(lambda grad: grad * 2)
        h2 = handle
        z = z * z
        return x, y * y, z, handle, h2

    def scenario(lib: Any) -> dict:
        res = _run_xyz(lib, fn)
        h, h2 = res["out"][3], res["out"][4]
        return {**_obs(res), "same": h is h2, "none": h is None}
    ref, got = both(torch, scenario)
    assert got == ref == {"grad": [2.0, 4.0, 6.0], "fc": 1, "oc": 2, "same": True, "none": False}
    v = _v(hookgrad)  # cached call: a real handle, the same object twice
    out = hookgrad.compile(fn, backend="eager")(v, hookgrad.ones(1), hookgrad.ones(1))
    assert isinstance(out[3], RemovableHandle) and out[3] is out[4]


def test_row5_repeated_handle_return(torch):
    def fn(x: Any, y: Any, z: Any) -> Any:
        handle = x.register_hook(lambda grad: grad * 2)
        h2 = handle  # noqa: F841
        z = z * z
        return x, y * y, z, handle, handle

    def scenario(lib: Any) -> dict:
        res = _run_xyz(lib, fn)
        return {**_obs(res), "same": res["out"][3] is res["out"][4]}
    ref, got = both(torch, scenario)
    assert got == ref == {"grad": [2.0, 4.0, 6.0], "fc": 1, "oc": 2, "same": True}


def test_row6_removed_handle_return_fullgraph(torch):
    def scenario(lib: Any) -> dict:
        def fn(x: Any, y: Any, z: Any) -> Any:
            handle = x.register_hook(lambda grad: grad * 2)
            z = z * z
            handle.remove()
            handle.remove()
            return x, y * y, z, handle, handle
        obs = []
        for _ in range(2):
            res = _run_xyz(lib, fn, fullgraph=True)
            h, h2 = res["out"][3], res["out"][4]
            h.remove()  # a no-op: the hook was never registered
            obs.append({**_obs(res), "same": h is h2, "kind": type(h).__name__})
        return obs[0]
    ref, got = both(torch, scenario)
    assert got == ref == {"grad": [1.0, 2.0, 3.0], "fc": 1, "oc": 2, "same": True,
                          "kind": "RemovableHandle"}


def test_row7_handle_stored_on_module(torch):
    def scenario(lib: Any) -> dict:
        def fn(x: Any, y: Any, z: Any, mod: Any) -> Any:
            mod.handle = x.register_hook(lambda grad: grad * 2)
            z = z * z
            return x, y * y, z
        cnt = dynamo(lib).testing.CompileCounter()
        opt = lib.compile(fn, backend=cnt, fullgraph=True)
        grads = []
        for _ in range(2):
            mod = lib.nn.Module()
            mod.handle = None
            v = _v(lib)
            opt(v, lib.randn(2, 2), lib.randn(2, 2), mod)
            v.backward(_seed(lib))
            mod.handle.remove()  # the real handle: the hook stops firing
            v.backward(_seed(lib))
            grads.append(plain(v.grad))
        return {"grads": grads, "fc": cnt.frame_count}
    ref, got = both(torch, scenario)
    assert got == ref == {"grads": [[3.0, 6.0, 9.0]] * 2, "fc": 1}


def test_row8_local_hook_only(torch):
    def scenario(lib: Any) -> dict:
        def local_hook(grad: Any) -> Any:
            return grad * 2

        def fn(x: Any) -> Any:
            x.register_hook(local_hook)
            return x
        cnt = dynamo(lib).testing.CompileCounter()
        opt = lib.compile(fn, backend=cnt)
        v = opt(_v(lib))
        v.backward(_seed(lib))
        return {"grad": plain(v.grad), "fc": cnt.frame_count}
    ref, got = both(torch, scenario)
    assert got == ref == {"grad": [2.0, 4.0, 6.0], "fc": 0}


def test_row9_local_inner_hook_on_input_and_intermediate(torch):
    def scenario(lib: Any) -> dict:
        def fn(x: Any) -> Any:
            def local_hook(grad: Any) -> Any:
                return grad * 2
            z = x * x
            x.register_hook(local_hook)
            z.register_hook(local_hook)
            return x, z
        cnt = dynamo(lib).testing.CompileCounter()
        opt = lib.compile(fn, backend=cnt)
        v = opt(_v(lib))
        v[0].backward(_seed(lib))
        return {"grad": plain(v[0].grad), "fc": cnt.frame_count, "oc": cnt.op_count}
    ref, got = both(torch, scenario)
    assert got == ref == {"grad": [2.0, 4.0, 6.0], "fc": 1, "oc": 2}


def test_row10_local_hook_with_ops(torch):
    def scenario(lib: Any) -> dict:
        def local_hook(grad: Any) -> Any:
            return grad * 2

        def fn(x: Any, y: Any, z: Any) -> Any:
            x.register_hook(local_hook)
            return x, y * y, z * z
        return _obs(_run_xyz(lib, fn))
    ref, got = both(torch, scenario)
    assert got == ref == {"grad": [2.0, 4.0, 6.0], "fc": 1, "oc": 2}


def test_row11_local_hooks_removed_and_kept(torch):
    def scenario(lib: Any) -> dict:
        def local_hook(grad: Any) -> Any:
            return grad * 2

        def local_hook2(grad: Any) -> Any:
            return grad * 3

        def fn(x: Any, y: Any, z: Any) -> Any:
            handle = x.register_hook(local_hook)
            z = z * z
            handle.remove()
            x.register_hook(local_hook2)
            return x, y * y, z
        return _obs(_run_xyz(lib, fn))
    ref, got = both(torch, scenario)
    assert got == ref and got["grad"] == [3.0, 6.0, 9.0] and got["fc"] == 1


def test_row12_global_function_hook(torch):
    def scenario(lib: Any) -> dict:
        def fn(x: Any) -> Any:
            x.register_hook(global_hook_0)
            return x, x * x
        cnt = dynamo(lib).testing.CompileCounter()
        v = lib.compile(fn, backend=cnt)(_v(lib))[0]
        v.backward(_seed(lib))
        return {"grad": plain(v.grad), "fc": cnt.frame_count, "oc": cnt.op_count}
    ref, got = both(torch, scenario)
    assert got == ref == {"grad": [4.0, 8.0, 12.0], "fc": 1, "oc": 1}


def test_row13_multiple_hooks_keep_order(torch):
    def scenario(lib: Any) -> dict:
        def fn(x: Any) -> Any:
            x.register_hook(global_hook_0)
            x.register_hook(global_hook_1)
            x.register_hook(global_hook_2)
            return x, x * x
        cnt = dynamo(lib).testing.CompileCounter()
        opt = lib.compile(fn, backend=cnt)
        grads = []
        for _ in range(2):
            v = opt(_v(lib))[0]
            v.backward(_seed(lib))
            grads.append(plain(v.grad))
        return {"grads": grads, "fc": cnt.frame_count}
    ref, got = both(torch, scenario)
    assert got == ref == {"grads": [[6.0, 12.0, 18.0]] * 2, "fc": 1}


def test_row14_handles_in_list_removed_after_call(torch):
    def scenario(lib: Any) -> dict:
        def fn(x: Any) -> Any:
            a = x.register_hook(global_hook_0)
            b = x.register_hook(global_hook_1)
            c = x.register_hook(global_hook_2)
            return x, x * x, a, b, c
        cnt = dynamo(lib).testing.CompileCounter()
        opt = lib.compile(fn, backend=cnt)
        grads = []
        for _ in range(2):
            v, _r, *handles = opt(_v(lib))
            v.backward(_seed(lib))
            grads.append(plain(v.grad))
            for h in handles:
                h.remove()
            v.backward(_seed(lib))
            grads.append(plain(v.grad))
        return {"grads": grads, "fc": cnt.frame_count}
    ref, got = both(torch, scenario)
    assert got == ref
    assert got["grads"][:2] == [[6.0, 12.0, 18.0], [7.0, 14.0, 21.0]] and got["fc"] == 1


def test_row15_handle_in_global_is_frame_skip(torch):
    def scenario(lib: Any) -> dict:
        def fn(x: Any) -> Any:
            global h0
            h0 = x.register_hook(global_hook_0)
            return x, x * x
        cnt = dynamo(lib).testing.CompileCounter()
        v, _r = lib.compile(fn, backend=cnt)(_v(lib))
        stored = h0 is not None
        v.backward(_seed(lib))
        g1 = plain(v.grad)
        h0.remove()
        v.backward(_seed(lib))
        return {"stored": stored, "grads": [g1, plain(v.grad)], "fc": cnt.frame_count}
    ref, got = both(torch, scenario)
    assert got == ref == {"stored": True, "grads": [[4.0, 8.0, 12.0], [5.0, 10.0, 15.0]],
                          "fc": 0}


def test_row15_fullgraph_raises_and_leaves_world_untouched():
    global h0
    h0 = None

    def fn(x: Any) -> Any:
        global h0
        h0 = x.register_hook(global_hook_0)
        return x, x * x
    v = _v(hookgrad)
    with pytest.raises(hookgrad._dynamo.exc.Unsupported, match="Storing Tensor hook handle"):
        hookgrad.compile(fn, backend="eager", fullgraph=True)(v)
    assert h0 is None
    (v * 1).sum().backward()  # no hook left behind by the failed trace
    assert plain(v.grad) == [1.0, 1.0, 1.0]
