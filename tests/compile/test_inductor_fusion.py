"""Fused elementwise groups (NOTE [Fused groups]) and the Numba kernel cache (NOTE [Kernel cache]).

Numba is optional: the tests that need it skip without it; the switches and the fallback
without Numba are tested always.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hookgrad
from hookgrad.compile.codegen import kernels

RNG = np.random.default_rng(11)
X = RNG.normal(size=(5, 6))
Y = RNG.normal(size=(6,))
W = RNG.normal(size=(3, 6))


@pytest.fixture
def numba_on():
    pytest.importorskip("numba")
    kernels.set_numba(True)
    yield
    kernels.set_numba(None)


def _mixed(lib: Any) -> Any:
    def fn(x: Any, y: Any) -> Any:
        a = (x * 1.5 + y).tanh()          # group 1: broadcast input y is not full-shape
        b = a * a - (a * 0.5).sigmoid()   # a read inside and outside the group
        c = lib.nn.functional.linear(b.exp() / (b * b + 1.0), lib.tensor(W, dtype=x.dtype))
        return c.sum(1).mean() + a.sum(), b
    return fn


def _run(fn: Any, dtype: Any, out_index: int = 0) -> tuple:
    x = hookgrad.tensor(X, dtype=dtype, requires_grad=True)
    y = hookgrad.tensor(Y, dtype=dtype, requires_grad=True)
    outs = fn(x, y)
    (outs[0] + outs[1].sum() * 0.25).backward()
    return [o.detach().numpy().copy() for o in outs], x.grad.numpy().copy(), y.grad.numpy().copy()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fused_program_matches_eager(numba_on, dtype):
    dt = getattr(hookgrad, dtype)
    fn = _mixed(hookgrad)
    ref = _run(fn, dt)
    opt = hookgrad.compile(fn)
    for _ in range(3):
        got = _run(opt, dt)
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == "float64" else dict(rtol=2e-5, atol=1e-6)
    for g, r in zip([*got[0], got[1], got[2]], [*ref[0], ref[1], ref[2]]):
        np.testing.assert_allclose(g, r, **tol)
    program = opt._hookgrad_cache[0].artifact
    assert program.fused is not None and program.checked and program.groups
    assert program.fusion_error is None and not program.variant_errors
    assert "_group_fwd" in program.fused_code
    assert all(v is not False for v in program.variants.values())
    assert "_group_bwd" in program.backward_code


def test_fused_program_passes_gradcheck(numba_on):
    fn = _mixed(hookgrad)
    opt = hookgrad.compile(lambda x, y: fn(x, y)[0])
    inputs = (hookgrad.tensor(X, requires_grad=True), hookgrad.tensor(Y, requires_grad=True))
    assert hookgrad.autograd.gradcheck(opt, inputs)
    assert opt._hookgrad_cache[0].artifact.groups


def test_float32_chain_within_float32_tolerance_of_torch(numba_on, torch):
    def chain(lib: Any, x: Any) -> Any:
        y = x
        for _ in range(40):
            y = lib.tanh(y * 1.01)
        return y.sum()

    x0 = RNG.normal(size=(16, 16)).astype(np.float32)
    opt = hookgrad.compile(lambda x: chain(hookgrad, x))
    for _ in range(3):
        x = hookgrad.tensor(x0, requires_grad=True)
        out = opt(x)
        out.backward()
    tx = torch.tensor(x0, requires_grad=True)
    tout = chain(torch, tx)
    tout.backward()
    np.testing.assert_allclose(out.item(), tout.item(), rtol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-5)
    assert opt._hookgrad_cache[0].artifact.fused is not None


def test_tanh32_kernel_accuracy(numba_on, tmp_path, monkeypatch):
    monkeypatch.setenv("HOOKGRAD_CACHE_DIR", str(tmp_path))
    from hookgrad.compile.codegen.fastmath import TANH32_SOURCE
    src = ("import numba\nimport numpy as np\n" + TANH32_SOURCE +
           "\ndef kernel(i0, o0):\n    for e in range(i0.shape[0]):\n"
           "        o0[e] = _tanh32(i0[e])\n")
    kernel = kernels.load_kernel(src, "kernel")
    x = np.linspace(-12, 12, 200_001).astype(np.float32)
    out = np.empty_like(x)
    kernel(x, out)
    ref = np.tanh(x.astype(np.float64))
    assert np.max(np.abs(out - ref) / np.maximum(np.abs(ref), 1e-30)) < 1e-6
    assert out[0] == -1.0 and out[-1] == 1.0


_CHILD = """
import json, sys
import numpy as np
import hookgrad
from hookgrad.compile.codegen import kernels
kernels.set_numba(True)
opt = hookgrad.compile(lambda x: ((x * 1.25).tanh() * x).exp().sum())
for _ in range(3):
    x = hookgrad.tensor(np.arange(12.0).reshape(3, 4) / 10, requires_grad=True)
    opt(x).backward()
print(json.dumps(dict(kernels.STATS)))
"""


def test_kernels_are_cached_on_disk_across_processes(tmp_path):
    pytest.importorskip("numba")
    root = str(Path(__file__).resolve().parents[2])  # this checkout, not an installed copy
    env = dict(os.environ, HOOKGRAD_CACHE_DIR=str(tmp_path), PYTHONPATH=root)
    runs = [json.loads(subprocess.run([sys.executable, "-c", _CHILD], env=env, check=True,
                                      capture_output=True, text=True).stdout.splitlines()[-1])
            for _ in range(2)]
    assert runs[0].get("files_written", 0) == 2 and runs[0].get("file_hits", 0) == 0
    assert runs[1].get("files_written", 0) == 0 and runs[1].get("file_hits", 0) == 2
    files = os.listdir(tmp_path / "kernels")
    assert len([f for f in files if f.endswith(".py")]) == 2
    assert any(f.endswith(".nbi") for f in os.listdir(tmp_path / "kernels" / "__pycache__"))


def test_numba_off_runs_generated_numpy_code(monkeypatch):
    monkeypatch.setenv("HOOKGRAD_NUMBA", "0")
    fn = _mixed(hookgrad)
    ref = _run(fn, hookgrad.float64)
    opt = hookgrad.compile(fn)
    for _ in range(2):
        got = _run(opt, hookgrad.float64)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-12)
    program = opt._hookgrad_cache[0].artifact
    assert program.fused is None and not program.groups
    assert "_group" not in program.backward_code


def test_numba_requested_but_missing_raises_a_clear_error(monkeypatch):
    real = kernels.importlib.util.find_spec
    monkeypatch.setattr(kernels.importlib.util, "find_spec",
                        lambda name, *a: None if name == "numba" else real(name, *a))
    monkeypatch.setenv("HOOKGRAD_NUMBA", "1")
    with pytest.raises(ImportError, match=r"hookgrad\[compile\]"):
        kernels.numba_mode()
    monkeypatch.delenv("HOOKGRAD_NUMBA")
    assert kernels.numba_mode() is False  # not requested: quietly the NumPy code


def test_links_of_one_structure_share_one_kernel(numba_on):
    def fn(x: Any) -> Any:
        y = x
        for _ in range(6):
            y = (y * 1.25).tanh()
            y.register_hook(lambda g: None)  # ends each group: six groups of (mul, tanh)
        return y.sum()

    opt = hookgrad.compile(fn)
    before = dict(kernels.STATS)
    for _ in range(3):  # 64 elements: interleaved halves (NOTE [Interleaved chains])
        x = hookgrad.tensor(np.resize(X, (8, 8)), requires_grad=True)
        opt(x).backward()
    loaded = kernels.STATS["kernels_loaded"] - before.get("kernels_loaded", 0)
    reused = kernels.STATS["memory_hits"] - before.get("memory_hits", 0)
    program = opt._hookgrad_cache[0].artifact
    assert len(set(map(id, program.groups.values()))) == 6
    assert loaded <= 2 and reused >= 10  # 6 forward + 6 backward groups, 2 kernel sources


def test_inference_graph_runs_fused_kernels(numba_on, torch):
    def chain(lib: Any, x: Any) -> Any:
        y = x
        for _ in range(30):
            y = (y * 1.01).tanh()
        return y + 1

    x0 = RNG.normal(size=(8, 8)).astype(np.float32)
    opt = hookgrad.compile(lambda x: chain(hookgrad, x))
    with hookgrad.no_grad():
        outs = [opt(hookgrad.tensor(x0)).numpy() for _ in range(3)]
    oracle = chain(torch, torch.tensor(x0)).numpy()
    for out in outs:
        np.testing.assert_allclose(out, oracle, rtol=1e-5, atol=1e-6)
    entry = opt._hookgrad_cache[0]
    assert type(entry.artifact).__name__ == "CheckedForward" and entry.artifact.checked
    assert "_group_fwd" in entry.gm.fused_code


def test_unbuildable_kernels_leave_the_program_unfused(numba_on, monkeypatch):
    """A cache dir that cannot be written (or a kernel Numba rejects) falls back, recorded."""
    def broken(source: str, name: str) -> Any:
        raise OSError("read-only cache dir")

    monkeypatch.setattr("hookgrad.compile.codegen.fusion.load_kernel", broken)
    fn = _mixed(hookgrad)
    ref = _run(fn, hookgrad.float64)
    opt = hookgrad.compile(fn)
    for _ in range(2):
        got = _run(opt, hookgrad.float64)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-12)
    program = opt._hookgrad_cache[0].artifact
    assert program.fused is None and isinstance(program.fusion_error, OSError)
