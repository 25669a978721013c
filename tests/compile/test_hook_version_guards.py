"""Hook-dictionary guards with ``HookRegistry._version`` (spec compile.md §6.5, D).

The version is compared first (O(1)); hooks are compared by code only when it moved, so
re-registering a hook of the same code reuses the artifact exactly as PyTorch 2.13 does.
"""

from __future__ import annotations

from typing import Any

import pytest

import hookgrad
from hookgrad.compile.guards import guards as guards_mod
from hookgrad.utils.hooks import HookRegistry
from tests.compile._libs import both, dynamo, plain

pytestmark = pytest.mark.filterwarnings("ignore:The .grad attribute:UserWarning:torch.*")


def test_every_mutation_bumps_the_version():
    reg = HookRegistry()
    versions = [reg._version]
    handle = reg.add(print)
    versions.append(reg._version)
    reg.add(len, prepend=True)  # store + move_to_end
    versions.append(reg._version)
    handle.remove()
    versions.append(reg._version)
    reg[7] = abs
    reg.update({8: abs})
    reg.pop(7)
    reg.popitem()
    versions.append(reg._version)
    reg.clear()
    versions.append(reg._version)
    assert versions == sorted(set(versions)) and len(versions) == 6


def _make_hook(k: float) -> Any:
    return lambda mod, inp, out: out * k


@pytest.mark.parametrize("skip", [True, False])
@pytest.mark.parametrize("mode", ["same_fn_again", "same_code_other_k", "other_code", "removed"])
def test_reregistering_hooks_recompiles_like_pytorch(torch, skip, mode):
    def scenario(lib: Any) -> list:
        cnt = dynamo(lib).testing.CompileCounter()
        lin = lib.nn.Linear(2, 2)
        with lib.no_grad():
            lin.weight.fill_(1.0)
            lin.bias.fill_(0.0)
        out = []
        with dynamo(lib).config.patch(skip_nnmodule_hook_guards=skip):
            opt = lib.compile(lin, backend=cnt)
            hook = _make_hook(2)
            handle = lin.register_forward_hook(hook)
            x = lib.ones(1, 2)
            out.append((plain(opt(x)), cnt.frame_count))
            handle.remove()
            new = {"same_fn_again": hook, "same_code_other_k": _make_hook(3),
                   "other_code": lambda m, i, o: o + 1, "removed": None}[mode]
            if new is not None:
                lin.register_forward_hook(new)
            out.append((plain(opt(x)), cnt.frame_count))
            out.append((plain(opt(x)), cnt.frame_count))
        return out
    ref, got = both(torch, scenario)
    assert got == ref
    assert got[1][1] == (1 if mode == "same_fn_again" else 2)


def _counting_signature(monkeypatch: Any) -> list:
    calls: list = []
    real = guards_mod.hook_signature

    def counted(registry: Any) -> tuple:
        calls.append(registry)
        return real(registry)
    monkeypatch.setattr(guards_mod, "hook_signature", counted)
    return calls


def test_unchanged_version_skips_the_hook_comparison(monkeypatch):
    lin = hookgrad.nn.Linear(2, 2)
    lin.register_forward_pre_hook(lambda mod, inp: None)
    cnt = hookgrad._dynamo.testing.CompileCounter()
    opt = hookgrad.compile(lin, backend=cnt)
    x = hookgrad.ones(1, 2)
    opt(x)
    calls = _counting_signature(monkeypatch)
    opt(x)  # first hit of each guard: compares once and remembers the version
    first = len(calls)
    opt(x)
    opt(x)
    assert len(calls) == first  # later hits: version compare only
    handle = lin.register_forward_pre_hook(lambda mod, inp: None)
    handle.remove()  # same hooks again, but the version moved: compared, then reused
    opt(x)
    assert len(calls) > first and cnt.frame_count == 1


def test_direct_dict_store_is_seen():
    lin = hookgrad.nn.Linear(2, 2)
    cnt = hookgrad._dynamo.testing.CompileCounter()
    opt = hookgrad.compile(lin, backend=cnt)
    x = hookgrad.ones(1, 2)
    before = plain(opt(x))
    lin._forward_hooks[12345] = lambda mod, inp, out: out * 0
    after = plain(opt(x))
    assert cnt.frame_count == 2 and after == [[0.0, 0.0]] and before != after


def test_instances_sharing_an_artifact_still_hit(torch):
    """Row 38's shape: hook dicts of other instances are compared by code, then remembered."""
    def scenario(lib: Any) -> dict:
        cnt = dynamo(lib).testing.CompileCounter()
        layers = [lib.nn.Linear(2, 2) for _ in range(4)]
        for layer in layers:
            layer.register_forward_pre_hook(lambda mod, inp: (inp[0] + 1,))
        x = lib.ones(1, 2)
        for _ in range(3):
            for layer in layers:
                lib.compile(layer, backend=cnt)(x)
        return {"fc": cnt.frame_count}
    ref, got = both(torch, scenario)
    assert got == ref == {"fc": 1}
