"""Two hook effects from the compile issue, checked against PyTorch's eager runs.

- Under compiled autograd, a hook that modifies a saved tensor in place before the node that
  saved it runs raises eager's version-counter error (NOTE [Saved values modified by hooks] in
  ca_ops.py). PyTorch 2.13's compiled autograd silently uses the new values (its capture reads
  saved tensors before any hook runs); the contract asks for eager's behaviour.
- ``saved_tensors_hooks`` around a compiled call whose module has a backward pre-hook with a
  side effect pack as often as eager (two calls, several region shapes).
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest

import hookgrad


def _saved_then_modified(lib: Any, ca: bool, variant: str) -> tuple:
    if ca:
        lib._dynamo.reset()
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = lib.tensor([0.5, 0.5, 0.5], requires_grad=True)
    c = lib.tensor([2.0, 3.0, 4.0], requires_grad=True)
    h = a * 1.0

    def hook(p: Any) -> None:
        with lib.no_grad():
            {"leaf": a, "other": c, "intermediate": h, "grad": p.grad}[variant].mul_(2)
    b.register_post_accumulate_grad_hook(hook)
    out = (h.exp() * c).sum() + (b * 2).sum() if variant == "intermediate" else \
        (a * c).sum() + (b * 2).sum()
    ctx = (lib._dynamo.compiled_autograd._enable(lib.compile(backend="eager")) if ca
           else contextlib.nullcontext())
    try:
        with ctx:
            out.backward()
    except RuntimeError as e:
        return ("raised", str(e).split(";")[0])
    return ("ok", *[[round(v, 4) for v in t.grad.tolist()] for t in (a, b, c)])


@pytest.mark.parametrize("variant", ["leaf", "other", "grad", "intermediate"])
def test_compiled_autograd_sees_a_saved_tensor_modified_by_a_hook(variant: str,
                                                                  torch: Any) -> None:
    want = _saved_then_modified(torch, False, variant)
    assert _saved_then_modified(hookgrad, False, variant) == want
    for _ in range(2):  # the capture, then a call of the captured graph
        assert _saved_then_modified(hookgrad, True, variant) == want


def _pack_counts(lib: Any, backend: str | None, region: str) -> list:
    if backend is not None:
        lib._dynamo.reset()
    m = lib.nn.Linear(3, 3)
    with lib.no_grad():
        m.weight.copy_(lib.arange(9, dtype=lib.float32).reshape(3, 3) / 9)
        m.bias.copy_(lib.arange(3, dtype=lib.float32) / 4)
    counts, side = [0, 0], []
    m.register_full_backward_pre_hook(lambda mod, go: side.append(len(side)))

    def pack(t: Any) -> Any:
        counts[0] += 1
        return t

    def unpack(t: Any) -> Any:
        counts[1] += 1
        return t

    def fn(x: Any) -> Any:
        if region == "inside":
            with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
                return m(x).sum()
        if region == "reads_side_effect":
            return (m(x) * (len(side) + 1)).sum()
        return (m(x * x) * x).sum() if region == "products" else m(x).sum()
    run = fn if backend is None else lib.compile(fn, backend=backend)
    out = []
    for i in range(2):
        x = (lib.arange(6, dtype=lib.float32).reshape(2, 3) / 7 + i).requires_grad_()
        outer = (contextlib.nullcontext() if region == "inside"
                 else lib.autograd.graph.saved_tensors_hooks(pack, unpack))
        with outer:
            r = run(x)
        r.backward()
        out.append((*counts, list(side), round(float(x.grad.sum()), 4)))
    return out


@pytest.mark.parametrize("region", ["plain", "inside", "reads_side_effect", "products"])
def test_saved_tensors_hooks_around_a_module_with_a_backward_pre_hook(region: str,
                                                                      torch: Any) -> None:
    want = _pack_counts(torch, None, region)
    assert _pack_counts(hookgrad, None, region) == want
    for backend in ("eager", "aot_eager", "inductor"):
        assert _pack_counts(hookgrad, backend, region) == want, backend
