"""Drawing a random program from a seed, and shrinking a failing one (see `_program`)."""

from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from tests.fuzz._catalogue import OPS
from tests.fuzz._catalogue_more import KNOWN_DIFFERENT
from tests.fuzz._catalogue_nn import UNPACKED
from tests.fuzz._ops import Meta
from tests.fuzz._program import DTYPES, MODES, _Run

OP_NAMES = sorted(n for n in OPS if n not in KNOWN_DIFFERENT)


def _meta(t: Any) -> Meta:
    return Meta(tuple(t.shape), str(t.dtype).split(".")[-1], t.requires_grad,
                t.requires_grad and t.is_leaf)


def _shape(rng: np.random.Generator) -> tuple:
    shape = [int(s) for s in rng.integers(1, 5, size=int(rng.integers(0, 4)))]
    if shape and rng.random() < 0.04:  # zero-size tensors
        shape[int(rng.integers(0, len(shape)))] = 0
    return tuple(shape)


def _broadcastable(rng: np.random.Generator, shape: tuple) -> tuple:
    """A shape that broadcasts with `shape` (a suffix, some dims set to 1), rarely one that not."""
    if rng.random() < 0.03:
        return tuple(s + 1 for s in shape) or (2,)
    k = int(rng.integers(0, len(shape) + 1))
    return tuple(1 if rng.random() < 0.3 else s for s in shape[len(shape) - k:])


class _Gen:
    def __init__(self, seed: int, torch: Any, names: list | None = None) -> None:
        self.names = OP_NAMES if names is None else names
        self.rng = np.random.default_rng(seed)
        self.run = _Run(torch, {"steps": []})
        self.steps: list = []
        self.count = 0
        self.born_graphless: set = set()  # views made while their base did not require grad
        self.view_versions: dict = {}  # view name -> its version when made
        self.viewed_in_place: set = set()  # ids of tensors an in-place view op changed

    def emit(self, st: tuple) -> None:
        self.steps.append(st)
        before = len(self.run.log)
        try:
            self.run.step(len(self.steps) - 1, st)
        finally:
            del self.run.log[before:]
            out = self.run.pool.get(st[2]) if st[0] == "op" else None
            if out is not None and out._base is not None and id(out) not in self.view_versions:
                # keyed by identity: an in-place op or contiguous() returns its input
                self.view_versions[id(out)] = out._version
                if not out.requires_grad:
                    self.born_graphless.add(id(out))

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def leaf(self, shape: tuple | None = None, dtype: str | None = None) -> str:
        rng = self.rng
        name = self.fresh("l")
        dtype = str(rng.choice(DTYPES)) if dtype is None else dtype
        shape = _shape(rng) if shape is None else shape
        self.emit(("leaf", name, shape, dtype, bool(rng.random() < 0.7), int(rng.integers(1e9))))
        return name

    def pick(self) -> str:
        return str(self.rng.choice(sorted(self.run.pool)))

    def pick_target(self) -> str:
        """An in-place target: mostly one PyTorch lets us write (not a leaf requiring grad)."""
        pool = self.run.pool
        ok = [n for n in sorted(pool) if _writable(pool[n])]
        return str(self.rng.choice(ok)) if ok and self.rng.random() < 0.9 else self.pick()

    def op(self) -> None:
        rng = self.rng
        name = str(rng.choice(self.names))
        op = OPS[name]
        a = self.pick_target() if op.kind == "inplace" else self.pick()
        ins = [a]
        if op.other is not None:
            try:
                shape = op.other(rng, _meta(self.run.pool[a]))
            except RuntimeError:  # a view whose grad_fn cannot be regenerated
                return
            if shape is None:
                return
            dtype = str(self.run.pool[a].dtype).split(".")[-1] if rng.random() < 0.9 else None
            ins.append(self.leaf(tuple(shape), dtype))
        elif op.arity == 2:
            shape = tuple(self.run.pool[a].shape)
            others = [n for n in self.run.pool if n != a and _fits(self.run.pool[n].shape, shape)]
            ins.append(str(rng.choice(others)) if others and rng.random() < 0.6
                       else self.leaf(_broadcastable(rng, shape)))
        try:
            metas = [_meta(self.run.pool[n]) for n in ins]
        except RuntimeError:  # a view whose grad_fn cannot be regenerated
            return
        if op.kind == "inplace" and _undefined_write(
                self.run.lib, self.run.pool[a], [self.run.pool[n] for n in ins[1:]]):
            return
        if op.kind == "inplace" and not metas[0].dtype.startswith("float") and any(
                m.requires_grad for m in metas[1:]):
            # PyTorch records such writes on integer tensors and then fails an internal
            # assert in backward (docs/fuzzing.md, known differences): not drawn
            return
        params = op.params(rng, *metas)
        if params is None:
            return
        if name == "unique" and params.get("dim") is not None and metas[0].dtype.startswith(
                "float") and bool(self.run.pool[a].isnan().any()):
            # unique(dim=) sorts rows with `<`, not an ordering once a row holds NaN: the
            # order std::sort leaves is undefined (not drawn)
            return
        if (name == "median_dim" or (name == "reduce_more" and params.get("fn") == "nanmedian"
                                      and params.get("dim") is not None)) and metas[0].shape:
            x = self.run.pool[a]
            d = params["dim"] % x.dim() if -x.dim() <= params["dim"] < x.dim() else 0
            if x.stride(d) == 0 and x.shape[d] > 1:
                # PyTorch 2.13's median along a dim copies the input only for strides > 1
                # and reads a stride-0 (expanded) dim as if contiguous: values from
                # neighbouring memory (a PyTorch bug, not drawn)
                return
        if name in CONDITIONED and not _float32_stable(
                self.run.lib, op, [self.run.pool[n] for n in ins], params):
            return
        if name == "view_inplace":
            # PyTorch 2.13 fails an internal assert (variable.cpp: "out != nullptr") on an
            # in-place op after an in-place view op on a tensor that retains its gradient:
            # such sequences are not drawn (nor retain_grad after an in-place view op)
            # nor in-place view ops on a tensor inside a graph: PyTorch rewrites the shape of
            # a tensor its nodes may have saved (a saved output then unpacks in the new shape)
            # or hooked, where hookgrad's saved value keeps its own (known differences)
            t = self.run.pool[a]
            if t.retains_grad or (t.requires_grad and t.grad_fn is not None):
                return
            self.viewed_in_place.add(id(t))
        mode = MODES[int(rng.integers(0, len(MODES)))]
        if name == "view_inplace" and self.run.pool[a].requires_grad:
            # with grad mode off, a tensor's shape changes under its recorded node: PyTorch's
            # engine then refuses the gradient by its input metadata, a check hookgrad's engine
            # does not make (docs/fuzzing.md, known differences)
            mode = None
        self.try_emit(("op", name, self.fresh("t"), ins, params, mode))

    def try_emit(self, st: tuple) -> None:
        try:
            self.emit(st)
        except Exception:
            pass  # kept: PyTorch's exception is part of what is compared

    def observer(self) -> None:
        rng = self.rng
        name = self.pick()
        t = self.run.pool[name]
        if (id(t) in self.born_graphless and t.requires_grad) or (
                id(t) in self.view_versions and self.view_versions[id(t)] != t._version):
            # PyTorch 2.13 crashes (SIGSEGV) registering hooks on a view whose grad_fn must be
            # regenerated (made without grad, or written since): docs/fuzzing.md, not drawn
            return
        kind = int(rng.integers(0, 5))
        if id(t) in self.viewed_in_place:
            return  # see `op`: PyTorch's internal assert, hooks across in-place view ops
        tag = self.fresh("h")
        st = [("hook", name, tag, bool(rng.random() < 0.3)), ("retain", name),
              ("node_hook", name, tag, bool(rng.random() < 0.5)), ("post_acc", name, tag),
              ("hook", name, tag, False)][kind]
        self.try_emit(st)


# Normalizations divide by a standard deviation: on a near-constant float32 row the digits the
# comparison reads are rounding noise, which ATen's vectorised Welford statistics and NumPy's
# pairwise sums produce differently. Such a step is drawn only where PyTorch's own float32
# result and input gradients agree with its float64 ones to a tenth of the comparison's
# tolerance (float64 inputs always are); the same op on a well-conditioned input is compared
# as any other step.
CONDITIONED = frozenset({"layer_norm", "batch_norm", "group_norm", "instance_norm", "rms_norm",
                         "normalize"})


def _float32_stable(torch: Any, op: Any, ins: list, params: dict) -> bool:
    if not any(t.dtype == torch.float32 for t in ins):
        return True
    runs = []
    try:
        with torch.enable_grad():
            for dt in (torch.float32, torch.float64):
                xs = [(t.detach().to(dt) if t.dtype == torch.float32 else t.detach())
                      .requires_grad_(t.is_floating_point()) for t in ins]
                y = op.call(torch, *xs, **params)
                w = torch.arange(y.numel(), dtype=y.dtype).reshape(y.shape) * 0.1 + 1
                grads = torch.autograd.grad((y * w).sum(), [x for x in xs if x.requires_grad],
                                            allow_unused=True)
                runs.append([y] + [g for g in grads if g is not None])
    except Exception:  # a failing call is compared as it is
        return True
    return len(runs) < 2 or all(
        np.allclose(a.detach().double().numpy(), b.detach().double().numpy(), rtol=1e-5,
                    atol=1e-6, equal_nan=True) for a, b in zip(*runs))


def _addresses(t: Any) -> np.ndarray:
    """The storage offset of each element of `t`, in `t`'s shape."""
    offs = np.full((), t.storage_offset(), dtype=np.int64)
    for n, st in zip(t.shape, t.stride()):
        offs = offs[..., None] + np.arange(n, dtype=np.int64) * st
    return offs


def _dense(t: Any) -> bool:
    """PyTorch's ``is_non_overlapping_and_dense``."""
    expected = 1
    for st, n in sorted((st, n) for st, n in zip(t.stride(), t.shape) if n != 1):
        if st != expected:
            return False
        expected *= n
    return True


def _undefined_write(torch: Any, target: Any, others: list) -> bool:
    """Whether an in-place write into `target` reading `others` aliases memory in a way
    PyTorch's overlap checks leave to its loop order (not drawn).

    PyTorch raises for a written tensor with a stride-0 dim and for operands overlapping it
    densely but partially (both compared); elements that alias otherwise (``unfold`` windows,
    a strided operand sharing some of the written elements) are read and written in
    TensorIterator's loop order and vector chunks, an outcome PyTorch documents as undefined
    ("in-place operations may result in incorrect behavior"), which no other library
    reproduces.
    """
    if target.numel() < 2:
        return False
    mine = _addresses(target)
    if not any(st == 0 and n > 1 for st, n in zip(target.stride(), target.shape)) and \
            np.unique(mine).size < mine.size:
        return True
    for o in others:
        if not isinstance(o, torch.Tensor) or o.numel() == 0 or \
                o.untyped_storage().data_ptr() != target.untyped_storage().data_ptr():
            continue
        if _dense(o) and _dense(target):
            continue  # PyTorch decides: the same elements, disjoint, or its partial-overlap error
        theirs = _addresses(o)
        if np.intersect1d(mine, theirs).size == 0:
            continue
        try:
            if np.array_equal(np.broadcast_to(theirs, mine.shape), mine):
                continue  # element for element (``x.mul_(x)`` through another view)
        except ValueError:
            pass
        return True
    return False


def _writable(t: Any) -> bool:
    try:
        return not (t.requires_grad and t.is_leaf)
    except RuntimeError:
        return False


def _fits(a: tuple, b: tuple) -> bool:
    try:
        np.broadcast_shapes(tuple(a), tuple(b))
    except ValueError:
        return False
    return True


def op_names(pattern: str | None) -> list:
    """The catalogue's op names matching the regular expression `pattern` (all if None)."""
    if not pattern:
        return OP_NAMES
    names = [n for n in OP_NAMES if re.search(pattern, n)]
    names += [n for n in sorted(KNOWN_DIFFERENT) if re.fullmatch(pattern, n)]
    if not names:
        raise ValueError(f"no op of the catalogue matches {pattern!r}")
    return names


def generate(seed: int, torch: Any, names: list | None = None) -> dict:
    """A random program for `seed` (its shapes learned by running it on `torch`), drawing its
    ops from `names` (the whole catalogue by default)."""
    g = _Gen(seed, torch, names)
    rng = g.rng
    for _ in range(int(rng.integers(1, 3))):
        g.leaf()
    for _ in range(int(rng.integers(4, 14))):
        r = rng.random()
        if r < 0.72:
            g.op()
        elif r < 0.92:
            g.observer()
        else:
            g.leaf()
    pool = g.run.pool
    wants = [n for n in sorted(pool) if pool[n].requires_grad]
    finish = None
    if wants:
        outs = [str(n) for n in rng.choice(wants, size=min(len(wants), 2), replace=False)]
        leaves = [n for n in sorted(pool) if pool[n].requires_grad and rng.random() < 0.5]
        finish = ("backward" if rng.random() < 0.6 else "grad", outs,
                  leaves if leaves and rng.random() < 0.4 else None,
                  bool(rng.random() < 0.3), bool(rng.random() < 0.15), bool(rng.random() < 0.2))
    hooks = bool(rng.random() < 0.5) and not any(
        st[0] == "op" and st[1] in UNPACKED for st in g.steps)  # known saved-value differences
    return {"seed": seed, "saved_hooks": hooks, "steps": g.steps,
            "finish": finish}


def minimise(program: dict, fails: Callable[[dict], bool]) -> dict:
    """Drop steps (and the finish) while `fails` still holds: a short regression program."""
    best = dict(program)
    changed = True
    while changed:
        changed = False
        for i in reversed(range(len(best["steps"]))):
            cand = dict(best, steps=best["steps"][:i] + best["steps"][i + 1:])
            if fails(cand):
                best, changed = cand, True
        for key, value in (("finish", None), ("saved_hooks", False)):
            if best.get(key) != value and fails(dict(best, **{key: value})):
                best, changed = dict(best, **{key: value}), True
    return best
