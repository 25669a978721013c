"""Rows 38-41 of spec compile.md §11 and §12: compiled modules, module hooks, global hooks."""

from __future__ import annotations

from typing import Any

import pytest

import hookgrad
from tests.compile._libs import both, dynamo, plain

# PyTorch's compiled module path reads .grad of non-leaves while faking tensors (its warning)
pytestmark = pytest.mark.filterwarnings("ignore:The .grad attribute:UserWarning:torch.*")


def _ten_layers(lib: Any, hooks: list) -> dict:
    cnt = dynamo(lib).testing.CompileCounter()

    class Mod(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = lib.nn.ModuleList()
            for i in range(10):
                layer = lib.nn.Linear(16, 16)
                layer.register_forward_pre_hook(hooks[i % len(hooks)])
                self.layers.append(lib.compile(layer, backend=cnt))

        def forward(self, x: Any) -> Any:
            for layer in self.layers:
                x = layer(x)
            return x
    lib.manual_seed(0)
    mod = Mod()
    x = lib.ones(16, 16, requires_grad=True)
    out = mod(x)
    out.sum().backward()
    return {"fc": cnt.frame_count, "oc": cnt.op_count, "shape": list(out.shape)}


def test_row38_no_recompile_on_same_hook(torch):
    def scenario(lib: Any) -> dict:
        def fw_hook(inp: Any) -> Any:
            return (inp[0] + 1,)
        hooks = [(lambda _, inp: fw_hook(inp)) for _ in range(10)]  # ten closures, one code
        return _ten_layers(lib, hooks)
    ref, got = both(torch, scenario)
    assert got == ref == {"fc": 1, "oc": 2, "shape": [16, 16]}


def test_row38_two_hook_codes_two_frames(torch):
    def scenario(lib: Any) -> dict:
        return _ten_layers(lib, [lambda _, inp: (inp[0] + 1,), lambda _, inp: (inp[0] * 2,)])
    ref, got = both(torch, scenario)
    assert got == ref and got["fc"] == 2


def _hook_guard_scenario(lib: Any, skip: bool) -> dict:
    with dynamo(lib).config.patch(skip_nnmodule_hook_guards=skip):
        class Mod(lib.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.linear = lib.nn.Linear(16, 16)

            def forward(self, x: Any) -> Any:
                return self.linear(x)
        cnts = dynamo(lib).testing.CompileCounter()
        lib.manual_seed(0)
        mod = Mod()

        def fn(x: Any) -> Any:
            return mod(x)
        opt = lib.compile(fn, backend=cnts)
        x = lib.ones(16, 16)
        opt(x)
        mod.register_forward_hook(lambda m, i, out: out * 2)
        ref = fn(x)
        res = opt(x)
        return {"equal": bool((ref == res).all()), "fc": cnts.frame_count}


def test_row39_nnmodule_hook_guards(torch):
    ref, got = both(torch, lambda lib: _hook_guard_scenario(lib, False))
    assert got == ref == {"equal": True, "fc": 2}


def test_row39_default_config_is_not_stale():
    assert hookgrad._dynamo.config.skip_nnmodule_hook_guards is False  # (D) spec §6.5
    with hookgrad._dynamo.config.patch(skip_nnmodule_hook_guards=False):
        pass
    got = _hook_guard_scenario(hookgrad, hookgrad._dynamo.config.skip_nnmodule_hook_guards)
    assert got == {"equal": True, "fc": 2}


def test_row39_skip_switch_reproduces_pytorch_staleness(torch):
    ref, got = both(torch, lambda lib: _hook_guard_scenario(lib, True))
    assert got == ref == {"equal": False, "fc": 1}


def test_row40_wrap_top_frame_with_hooks(torch):
    def scenario(lib: Any) -> list:
        with dynamo(lib).config.patch(wrap_top_frame=True):
            class ToyModel(lib.nn.Module):
                def __init__(self) -> None:
                    super().__init__()
                    self.net1 = lib.nn.Linear(18, 18, bias=False)

                def forward(self, x: Any) -> Any:
                    return self.net1(x)
            lib.manual_seed(0)
            mod = ToyModel()
            mod.register_forward_pre_hook(lambda mod, input: input[0] + 1)
            obs = []
            cnts = dynamo(lib).testing.CompileCounter()
            compiled = lib.compile(mod, backend=cnts)
            x = lib.rand(18, 18)
            ref = mod(x)
            for _ in range(2):
                obs.append((plain(compiled(x)) == plain(ref), cnts.frame_count, cnts.op_count))
            cnts = dynamo(lib).testing.CompileCounter()
            mod.compile(backend=cnts)
            for _ in range(2):
                obs.append((plain(mod(x)) == plain(ref), cnts.frame_count, cnts.op_count))
            return obs
    ref, got = both(torch, scenario)
    assert got == ref == [(True, 1, 2)] * 4


def test_row40_without_wrap_top_frame_is_one_frame():
    mod = hookgrad.nn.Linear(4, 4)
    mod.register_forward_pre_hook(lambda m, inp: inp[0] + 1)
    cnts = hookgrad._dynamo.testing.CompileCounter()
    hookgrad.compile(mod, backend=cnts)(hookgrad.ones(2, 4))
    assert (cnts.frame_count, cnts.op_count) == (1, 2)  # (D) PyTorch: 2 frames


def test_row41_global_module_forward_pre_hook(torch):
    def scenario(lib: Any) -> dict:
        class Mod(lib.nn.Module):
            def forward(self, x: Any) -> Any:
                return x - 1
        counter = 0
        seen = []

        def hook(mod: Any, args: Any) -> Any:
            nonlocal counter
            counter += 1
            seen.append(type(mod).__name__)
            return args
        x = lib.rand(18, 18)
        mod = Mod()
        compiled = lib.compile(mod, backend="eager")
        handle = lib.nn.modules.module.register_module_forward_pre_hook(hook)
        try:
            ref = mod(x)
            counts = [counter]
            with pytest.warns(UserWarning, match=r"Using `torch.compile\(module\)` when there "
                                                 r"are global hooks.*"):
                res = compiled(x)
            counts.append(counter)
            with pytest.warns(UserWarning):
                compiled(x)  # a second call: the hook's counter is guarded, so it recompiles
            counts.append(counter)
        finally:
            handle.remove()
        return {"counts": counts, "equal": plain(ref) == plain(res), "seen": seen}
    ref, got = both(torch, scenario)
    assert got == ref
    assert got["counts"][:2] == [1, 3] and got["seen"][:3] == ["Mod", "OptimizedModule", "Mod"]
