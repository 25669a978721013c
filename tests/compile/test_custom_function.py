"""A custom ``autograd.Function`` inside a compiled region is one graph node that runs ``apply``
as eager does (PyTorch compiles it too; it used to be a graph break here), and symbolic numbers
that outlive a dynamic trace still compute."""

from __future__ import annotations

from typing import Any

import pytest

import hookgrad
from tests.compile._libs import both, dynamo, plain

pytestmark = pytest.mark.filterwarnings("ignore:The .grad attribute:UserWarning:torch.*")


def _square_fn(lib: Any) -> Any:
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, k: float) -> Any:
            ctx.save_for_backward(x)
            ctx.k = k
            return x * x * k

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return g * 2 * x * ctx.k, None
    return Square


def test_custom_function_compiles_with_eager_gradients(torch):
    def scenario(lib: Any) -> dict:
        square = _square_fn(lib)
        cnt = dynamo(lib).testing.CompileCounter()
        opt = lib.compile(lambda x, k: square.apply(x + 1, k).sum(), backend=cnt)
        out = []
        for k in (2.0, 2.0, 3.0, 4.0):  # the float becomes dynamic: it reaches ctx.k
            x = lib.ones(3, requires_grad=True)
            y = opt(x, k)
            y.backward()
            out.append((plain(y), plain(x.grad)))
        return {"out": out, "fc": cnt.frame_count}
    ref, got = both(torch, scenario)
    assert got == ref and got["fc"] == 2


def test_custom_function_output_hooks_and_two_outputs(torch):
    def scenario(lib: Any) -> dict:
        class Split(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                return x * 2, x * 3

            @staticmethod
            def backward(ctx: Any, ga: Any, gb: Any) -> Any:
                return ga * 2 + gb * 3
        log: list = []
        cnt = dynamo(lib).testing.CompileCounter()

        def fn(x: Any) -> Any:
            a, b = Split.apply(x)
            return a.sum() + (b * b).sum()
        opt = lib.compile(fn, backend=cnt)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: log.append(plain(g)))
        opt(x).backward()
        return {"grad": plain(x.grad), "log": log, "fc": cnt.frame_count}
    ref, got = both(torch, scenario)
    assert got == ref and got["fc"] == 1


def test_symbolic_number_outliving_a_broken_dynamic_trace():
    class Holder:
        pass

    def fn(x: Any, k: float) -> Any:
        holder = Holder()
        holder.k = k
        if x.sum() > 0:  # data-dependent: the call runs eagerly from here
            return x * k, holder
        return x, holder
    opt = hookgrad.compile(fn, backend="eager", dynamic=True)
    out, holder = opt(hookgrad.ones(2), 3.0)
    assert plain(out) == [3.0, 3.0]
    assert plain(hookgrad.ones(2) * holder.k) == [3.0, 3.0]  # used after the trace
    assert plain(holder.k * hookgrad.ones(1)) == [3.0]


def test_function_with_python_side_effects_runs_them_once_per_call(torch):
    """A Function whose forward appends to a list: the node would re-run the append, and the
    side-effect log would replay it too, so hookgrad keeps such a call eager (graph break)."""
    def scenario(lib: Any) -> dict:
        calls: list = []

        class Logged(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any) -> Any:
                calls.append(1)
                return x * 2

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                return g * 2
        def fn(x: Any) -> Any:
            assert isinstance(calls, list)  # `calls` is reachable from the region
            return Logged.apply(x).sum()
        opt = lib.compile(fn, backend="eager")
        outs = [plain(opt(lib.ones(2))) for _ in range(3)]
        return {"outs": outs, "calls": len(calls)}
    ref, got = both(torch, scenario)
    assert got == ref == {"outs": [4.0, 4.0, 4.0], "calls": 3}
