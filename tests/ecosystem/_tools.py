"""Run one scenario with a third-party tool on real PyTorch and on hookgrad (import swapped).

A scenario is ``fn(torch, tool_module) -> result``; the tool is imported fresh for each library
so it binds to the one under test. Weights come from a NumPy generator so both libraries start
from the same numbers.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import hookgrad
from hookgrad.testing._as_torch import as_torch
from tests.conftest import load_torch


def require_tool(module: str) -> None:
    """Skip when the tool itself is not installed (the only reason a tool test may skip)."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install hookgrad[tools])")


def require_hookgrad(*names: str) -> None:
    """Skip while hookgrad lacks a name another work stream adds (listed in the issue note)."""
    missing = []
    for name in names:
        obj: Any = hookgrad
        for part in name.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                try:
                    obj = importlib.import_module("hookgrad." + name)
                except ImportError:
                    missing.append(name)
                break
    if missing:
        pytest.skip(f"hookgrad lacks {missing} (issue 14 part B / distributed work stream)")


def _drop(prefixes: tuple[str, ...]) -> dict:
    saved = {k: v for k, v in sys.modules.items()
             if any(k == p or k.startswith(p + ".") for p in prefixes)}
    for k in saved:
        del sys.modules[k]
    return saved


def run_with(lib: str, tools: tuple[str, ...], fn: Callable[..., Any]) -> Any:
    """``fn(torch, *tool_modules)`` with `lib` ("torch" or "hookgrad") as ``torch``."""
    if lib == "torch":
        torch = load_torch()
        saved = _drop(tools)
        try:
            return fn(torch, *[importlib.import_module(t) for t in tools])
        finally:
            _drop(tools)
            sys.modules.update(saved)
    with as_torch(tools) as torch:
        return fn(torch, *[importlib.import_module(t) for t in tools])


def set_weights(torch: Any, model: Any, seed: int = 0) -> None:
    """Fill every parameter from one NumPy stream (same numbers in both libraries)."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))


def array(torch: Any, shape: tuple, seed: int = 1) -> Any:
    rng = np.random.default_rng(seed)
    return torch.tensor(rng.standard_normal(shape).astype(np.float32))


def stub_torchvision() -> dict:
    """pytorch-grad-cam imports a few torchvision transforms at load time (never used by the CAM
    methods); torchvision is a compiled PyTorch extension, so both runs get the same stand-in."""
    saved = _drop(("torchvision",))
    tv = types.ModuleType("torchvision")
    tr = types.ModuleType("torchvision.transforms")
    fn = types.ModuleType("torchvision.transforms.functional")
    ops = types.ModuleType("torchvision.ops")
    for n in ("Compose", "Normalize", "ToTensor"):
        setattr(tr, n, type(n, (), {}))
    fn.resize = lambda *a, **k: None
    tr.functional, tv.transforms, tv.ops = fn, tr, ops
    sys.modules.update({"torchvision": tv, "torchvision.transforms": tr,
                        "torchvision.transforms.functional": fn, "torchvision.ops": ops})
    return saved


def restore_torchvision(saved: dict) -> None:
    _drop(("torchvision",))
    sys.modules.update(saved)
