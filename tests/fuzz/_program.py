"""Random programs for the differential fuzzer: generate, run on a library, compare, minimise.

A program is plain data (a dict of lists of tuples), so a failing one can be printed, minimised
and pasted into ``test_regressions.py``. `generate` draws one from a seed, running each step on
the oracle to learn the shapes the next steps may use; `run` replays it on ``torch`` or on
``hookgrad`` and returns a log of everything observable; `diff` compares two logs.

Steps (``steps`` list):
  ("leaf", name, shape, dtype, requires_grad, data_seed)    a fresh tensor
  ("op", name, out, inputs, params, mode)                   a catalogue op under a grad mode
  ("hook", name, tag, double)                               tensor hook (returns 2*g if double)
  ("retain", name)                                          retain_grad
  ("node_hook", name, tag, pre)                             grad_fn pre-hook / post-hook
  ("post_acc", name, tag)                                   post-accumulate-grad hook
``finish``: ("backward" | "grad", outputs, inputs-or-None, retain_graph, create_graph, again).
"""

from __future__ import annotations

import warnings
from contextlib import ExitStack
from typing import Any

import numpy as np

from tests.fuzz._catalogue import OPS
from tests.fuzz._ops import Meta

MODES = (None,) * 14 + ("no_grad", "no_grad", "set_grad_enabled", "enable_grad_in_no_grad")
# Warnings both libraries give once per process (PyTorch's TORCH_WARN_ONCE): which program
# sees one depends on what ran before (generating a program runs it on PyTorch), so they are
# not compared; tests/nn covers them in fresh processes (and test_regressions.py the
# reference-cycle warning of backward(create_graph=True), once per process: seed 70278 saw
# it in one library's program and not the other's)
ONCE_WARNINGS = ("Using padding='same' with even kernel lengths",
                 "Using backward() with create_graph=True will create a reference cycle",
                 "index_reduce() is in beta",
                 # AccumulateGrad's TORCH_WARN_ONCE; hookgrad never gives it (known differences)
                 "grad and param do not obey the gradient layout contract")
DTYPES = ("float32",) * 10 + ("float64",) * 4 + ("int64",) * 2 + ("int32", "bool")


def _mode(lib: Any, mode: str | None, stack: ExitStack) -> None:
    if mode == "no_grad":
        stack.enter_context(lib.no_grad())
    elif mode == "set_grad_enabled":
        stack.enter_context(lib.set_grad_enabled(False))
    elif mode == "enable_grad_in_no_grad":
        stack.enter_context(lib.no_grad())
        stack.enter_context(lib.enable_grad())


def _leaf_value(lib: Any, shape: tuple, dtype: str, rg: bool, seed: int) -> Any:
    rng = np.random.default_rng(seed)
    if dtype in ("int64", "int32"):
        arr = rng.integers(-3, 4, size=shape).astype(dtype)
    elif dtype == "bool":
        arr = rng.random(size=shape) > 0.5
    else:
        arr = rng.uniform(-2, 2, size=shape).astype(dtype)
    return lib.tensor(arr, requires_grad=rg and dtype.startswith("float"))


def summary(t: Any, names: bool = True) -> tuple:
    """What is compared of a tensor: layout, autograd flags and values.

    Without `names`, only whether it has a ``grad_fn`` (gradients computed with
    ``create_graph=True``: docs/fuzzing.md, known differences).
    """
    if t is None:
        return (None,)
    try:  # a stale view's grad_fn may raise (its regeneration is refused): compare that too
        fn = t.grad_fn
        node = None if fn is None else fn.name() if names else "<graph>"
    except RuntimeError as e:
        node = f"raises {type(e).__name__}"
    return ("T", tuple(t.shape), str(t.dtype).split(".")[-1], _strides(t), t.is_contiguous(),
            t.requires_grad, node, _values(t))


def _values(t: Any) -> np.ndarray:
    d = t.detach()
    if getattr(d, "_is_zerotensor", None) is not None and d._is_zerotensor():
        # PyTorch's ZeroTensor (the gradient `sgn` of a real tensor gives a hook) has no
        # NumPy view: it is zeros
        return np.zeros(tuple(d.shape), dtype=str(d.dtype).split(".")[-1])
    return np.array(d.numpy(), copy=True)


def _strides(t: Any) -> tuple:
    """Strides of dims of size > 1 (docs/fuzzing.md: the others are not compared)."""
    if t.numel() == 0:
        return ()
    return tuple(st if n > 1 else None for st, n in zip(t.stride(), t.shape))


# ---------------------------------------------------------------------------- running
class _Run:
    def __init__(self, lib: Any, program: dict) -> None:
        self.lib, self.program = lib, program
        self.pool: dict[str, Any] = {}
        self.log: list = []
        self.names = True  # compare grad_fn names of gradients (not under create_graph)

    def hook(self, tag: str, double: bool) -> Any:
        def fn(g: Any) -> Any:
            self.log.append(("hook", tag, summary(g, self.names)))
            return g * 2 if double else None

        return fn

    def step(self, i: int, st: tuple) -> None:
        kind, name = st[0], st[1]
        pool, lib = self.pool, self.lib
        if kind == "leaf":
            pool[name] = _leaf_value(lib, *st[2:])
            return
        if kind == "op":
            _, op, out, ins, params, mode = st
            if any(n not in pool for n in ins):
                return
            with ExitStack() as stack:
                _mode(lib, mode, stack)
                pool[out] = OPS[op].call(lib, *[pool[n] for n in ins], **params)
            return
        if name not in pool:
            return
        t = pool[name]
        if kind == "hook":
            t.register_hook(self.hook(st[2], st[3]))
        elif kind == "retain":
            t.retain_grad()
        elif kind == "node_hook" and t.grad_fn is not None:
            tag, log = st[2], self.log
            if st[3]:
                t.grad_fn.register_prehook(lambda go: log.append(
                    ("npre", tag, [summary(g, self.names) for g in go])))
            else:
                t.grad_fn.register_hook(lambda gi, go: log.append(
                    ("npost", tag, [summary(g, self.names) for g in gi],
                     [summary(g, self.names) for g in go])))
        elif kind == "post_acc":
            log = self.log
            t.register_post_accumulate_grad_hook(
                lambda p, tag=st[2]: log.append(("pacc", tag, summary(p.grad, self.names))))

    def forward(self) -> None:
        lib, log = self.lib, self.log
        with ExitStack() as stack:
            if self.program.get("saved_hooks"):
                stack.enter_context(lib.autograd.graph.saved_tensors_hooks(
                    lambda t: (log.append(("pack", tuple(t.shape), str(t.dtype).split(".")[-1],
                                           t.requires_grad)), t)[1],
                    lambda t: (log.append(("unpack", tuple(t.shape))), t)[1]))
            for i, st in enumerate(self.program["steps"]):
                start = len(log)
                try:
                    self.step(i, st)
                except Exception as e:  # the exception type is compared with PyTorch's
                    # PyTorch packs an op's inputs before its kernel checks them; hookgrad
                    # checks first (docs/fuzzing.md, known differences): a failing step's
                    # pack calls are not compared
                    log[start:] = [e for e in log[start:] if e[0] != "pack"]
                    log.append(("exc", i, type(e).__name__))

    def finish(self) -> None:
        fin = self.program.get("finish")
        if not fin:
            return
        kind, outs, ins, retain, create, again = fin
        lib, pool = self.lib, self.pool
        outs = [pool[n] for n in outs if n in pool]
        if not outs:
            return
        loss = sum((o * (lib.arange(o.numel(), dtype=o.dtype).reshape(o.shape) * 0.1 + 1)).sum()
                   for o in outs)
        inputs = None if ins is None else [pool[n] for n in ins if n in pool]
        self.names = not create
        for _ in range(2 if again else 1):
            if kind == "backward":
                loss.backward(retain_graph=retain, create_graph=create, inputs=inputs or None)
            else:
                grads = lib.autograd.grad(loss, inputs or outs, retain_graph=retain,
                                          create_graph=create, allow_unused=True)
                self.log.append(("grads", [summary(g, self.names) for g in grads]))

    def state(self) -> None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for name in sorted(self.pool):
                t = self.pool[name]
                try:
                    grad = summary(t.grad, self.names)
                except RuntimeError as e:
                    grad = ("raises", type(e).__name__)
                self.log.append(("state", name, summary(t), t.retains_grad, grad))
        self.log.append(("warnings", sorted({str(w.category.__name__) for w in caught})))


def run(lib: Any, program: dict) -> list:
    """Replay `program` on `lib`; the log of everything observable."""
    r = _Run(lib, program)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r.forward()
        try:
            r.finish()
        except Exception as e:
            r.log.append(("exc", "finish", type(e).__name__))
    r.log.append(("run_warnings", sorted({w.category.__name__ for w in caught
                                          if not str(w.message).startswith(ONCE_WARNINGS)})))
    r.state()
    return r.log


# ---------------------------------------------------------------------------- comparing
def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.dtype.kind not in "fc":
            return bool(np.array_equal(a, b))
        # float32 kernels differ in the last bits (NumPy's exp is not ATen's), and a float64
        # result of float32 inputs inherits that: one tolerance for every float
        return bool(np.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def diff(mine: list, theirs: list) -> str | None:
    """None if the logs agree; else a description of the first difference."""
    for i, (a, b) in enumerate(zip(mine, theirs)):
        if not _same(a, b):
            return f"entry {i}:\n  hookgrad: {a!r}\n  torch:    {b!r}"
    if len(mine) != len(theirs):
        return f"log lengths differ: hookgrad {len(mine)}, torch {len(theirs)}"
    return None
