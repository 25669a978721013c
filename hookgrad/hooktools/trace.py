"""Record every hook that fires during a forward/backward/step, in order, with what it saw.

NOTE [Hook trace]
On entering, `HookTrace` swaps each hook already registered on the objects it was given (modules
and their parameters, optimizers, tensors and their nodes) and in the global module/optimizer
registries for a recording wrapper, keeping ids and order. Hooks registered while the trace is
open are wrapped at registration: on hookgrad through
`hookgrad.utils.hooks.add_registration_observer`; on PyTorch, tensor hooks through a
``TorchFunctionMode`` and module/optimizer hooks when their module runs or their optimizer steps
(see `hookgrad.hooktools._watch`). Each row names the object the firing was for (the module a
global hook ran for, the parameter of a post-accumulate hook), summarises the arguments and the
result ("replaced" when the hook returned a value in place of its input) and times the hook.
On exit every swapped entry is restored, and wrappers created inside the trace stop recording.
A wrapper keeps the hook's ``__name__`` so PyTorch's error texts that name the hook are
unchanged. Module calls, optimizer steps and backward passes are recorded too: `silent` uses them
to say why a hook did not fire.
"""

from __future__ import annotations

import functools
import gc
import itertools
import os
import sys
import time
from dataclasses import dataclass
from typing import Any

from hookgrad.hooktools import _summary, _tables, _watch, compiled
from hookgrad.hooktools._reach import walk
from hookgrad.hooktools._records import ENGINE_KINDS, BackwardRun, HookEntry, ModuleRecord
from hookgrad.hooktools.silent import explain
from hookgrad.utils import hooks as _hooks

__all__ = ["HookTrace", "HookEvent"]

# Module full-backward hooks are driven by node hooks that the library registers on every call;
# the trace records the module hooks themselves, not that plumbing.
_PLUMBING = (os.path.join("nn", "modules", "_backward_hook.py"), os.path.join("utils", "hooks.py"))
_HERE = os.path.dirname(os.path.abspath(__file__))
_OWN_FILES = {os.path.join(_HERE, f) for f in ("trace.py", "_watch.py")}
_TORCH_DIR = os.sep + "torch" + os.sep
_REGISTER_KINDS = {
    "register_hook": "tensor/node.post",
    "register_prehook": "node.pre",
    "register_post_accumulate_grad_hook": "post_accumulate",
    "register_forward_pre_hook": "module.forward_pre",
    "register_forward_hook": "module.forward",
    "register_full_backward_pre_hook": "module.backward_pre",
    "register_full_backward_hook": "module.backward",
    "register_step_pre_hook": "optimizer.step_pre",
    "register_step_post_hook": "optimizer.step_post",
    "register_module_forward_pre_hook": "global.module.forward_pre",
    "register_module_forward_hook": "global.module.forward",
    "register_module_full_backward_pre_hook": "global.module.backward_pre",
    "register_module_full_backward_hook": "global.module.backward",
    "register_optimizer_step_pre_hook": "global.optimizer.step_pre",
    "register_optimizer_step_post_hook": "global.optimizer.step_post",
}
# Hook kinds whose first argument is the module/optimizer they ran for.
_FIRST_ARG_IS_TARGET = ("module.", "global.", "optimizer.", "post_accumulate")


@dataclass(frozen=True)
class HookEvent:
    """One hook call: firing index, kind, owner, hook name, where it was registered, the object
    it ran for, argument/result summaries, whether it replaced its input, and its duration.

    Mirrors: no PyTorch counterpart (a row of `HookTrace`).
    """

    index: int
    kind: str
    owner: str
    hook: str
    registered_at: str
    target: str = ""
    args: str = ""
    result: str = ""
    replaced: bool = False
    seconds: float = 0.0
    registered_during_trace: bool = False


def _site(fn: Any) -> str:
    code = getattr(fn, "__code__", None)
    if code is None:
        return "<unknown>"
    return f"{code.co_filename}:{code.co_firstlineno} (definition)"


def _user_frame(depth: int) -> Any:
    """The first frame outside PyTorch's dispatch code and the trace's own files (the code
    that called ``register_hook``)."""
    frame = sys._getframe(depth)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name in _OWN_FILES or _TORCH_DIR in name):
            return frame
        frame = frame.f_back
    return None


class HookTrace:
    """Context manager recording every hook call in order (see NOTE [Hook trace]).

    Example::

        with HookTrace(model, optimizer) as trace:
            loss_fn(model(x), y).backward(); optimizer.step()
        print(trace.format())          # one row per firing: object, args -> result, time
        for s in trace.silent(): print(s.hook, s.reason)   # hooks that did not fire, and why

    Args:
        objects: modules (with their parameters), optimizers and tensors to trace.
        discover: also trace every module that runs and optimizer that steps while the trace
            is open, with the hooks they hold (``hookgrad trace`` uses this).

    Mirrors: no PyTorch counterpart (a hookgrad tool built on the hook registries).
    """

    def __init__(self, *objects: Any, discover: bool = False) -> None:
        self.objects = objects
        self.discover = discover
        self.events: list[HookEvent] = []
        self.entries: list[HookEntry] = []
        self.modules: dict[int, ModuleRecord] = {}
        self.steps: dict[int, list] = {}  # id(optimizer) -> [pre count, post count, last seq]
        self.runs: list[BackwardRun] = []
        self.compiled: list = []  # CompiledHookNote rows from hookgrad.compile (see compiled.py)
        self.active = False
        self.torch_mode: Any = None
        self._swaps: list = []
        self._fired: dict[int, list[int]] = {}  # id(wrapper) -> firing indices
        self._seq = itertools.count()
        self._names: dict[int, str] = {}  # id(module or parameter) -> qualified name
        self._param_module: dict[int, int] = {}  # id(parameter) -> id(module)
        self._keep: dict[int, Any] = {}  # objects named by id: kept alive so ids stay unique
        self._wrapped: set = set()  # (id(table), hid) already wrapped by this trace
        self._pending: list[HookEntry] = []  # engine hooks not fired yet
        self._uninstall: list = []
        self._running: list[BackwardRun] = []
        self._depth = 0  # nesting of module calls
        self.last_roots: Any = None  # the roots of the last backward pass (for its picture)
        self._node_fires: dict[int, list] = {}  # id(node) -> (kind, index), last pass only

    # ------------------------------------------------------------------ wrapping
    def _wrap(self, fn: Any, kind: str, owner: str, site: str, *, table: Any = None,
              obj: Any = None, during: bool = False) -> Any:
        trace = self

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not trace.active:
                return fn(*args, **kwargs)
            return trace._call(entry, fn, args, kwargs)

        wrapper.__hookgrad_traced__ = fn  # type: ignore[attr-defined]
        wrapper.__hookgrad_trace__ = self  # type: ignore[attr-defined]
        entry = HookEntry.make(kind, owner, _hooks.hook_name(fn), site, table, wrapper, obj,
                               next(self._seq) if during else -1)
        self.entries.append(entry)
        if kind in ENGINE_KINDS:
            self._pending.append(entry)
        if self._running and kind in ENGINE_KINDS:  # registered while a backward pass runs
            reach = self._running[-1].nodes
            node = self._node_of(entry, reach)
            if node is not None and id(node) in reach.nodes:
                entry.statuses.append((self._running[-1].index, "registered_during"))
        return wrapper

    def _call(self, entry: HookEntry, fn: Any, args: tuple, kwargs: dict) -> Any:
        idx = len(self.events)
        entry.fired += 1
        if entry.node is not None:  # a non-leaf tensor's hook: number its node in the picture
            self._node_fires.setdefault(id(entry.node), []).append((entry.kind, idx))
        entry.node = None  # fired: no reason needed, let its graph go
        self._fired.setdefault(id(entry.wrapper), []).append(idx)
        first = entry.kind.startswith(_FIRST_ARG_IS_TARGET) and bool(args)
        target = self.name_of(args[0]) if first else self._label(entry)
        during = entry.reg_seq >= 0
        if entry.kind == "post_accumulate" and args:
            summary = f"grad={_summary.describe(getattr(args[0], 'grad', None))}"
        else:
            summary = _summary.describe_args(args, kwargs, first)
        head = (idx, entry.kind, entry.owner, entry.hook, entry.site, target, summary)
        self.events.append(HookEvent(*head, registered_during_trace=during))
        t0 = time.perf_counter()
        try:
            if self.torch_mode is not None and self._running:  # hooks run outside the mode
                with self.torch_mode:
                    result = fn(*args, **kwargs)
            else:
                result = fn(*args, **kwargs)
        except BaseException as e:
            self.events[idx] = HookEvent(*head, f"raised {type(e).__name__}: {e}", False,
                                         time.perf_counter() - t0, during)
            raise
        seconds = time.perf_counter() - t0
        same = any(result is a for a in args)
        self.events[idx] = HookEvent(*head, _summary.describe(result) if result is not None
                                     else "None", result is not None and not same, seconds,
                                     during)
        return result

    def _observe(self, registry: Any, fn: Any) -> Any:
        """hookgrad's registration observer: wrap a hook registered while the trace is open."""
        if getattr(fn, "__hookgrad_trace_internal__", False):
            return fn
        frame = sys._getframe(2)
        kind, site, obj = "hook", "<unknown>", None
        for _ in range(6):
            if frame is None:
                break
            name = frame.f_code.co_name
            if name in _REGISTER_KINDS:
                kind = _REGISTER_KINDS[name]
                obj = frame.f_locals.get("self")
                if kind == "tensor/node.post":  # Tensor.register_hook or Node.register_hook
                    kind = "node.post" if hasattr(obj, "next_functions") else "tensor"
                caller = frame.f_back
                if caller is not None:
                    if caller.f_code.co_filename.endswith(_PLUMBING):
                        return fn  # full backward hooks' own node hooks: recorded as module.*
                    site = f"{caller.f_code.co_filename}:{caller.f_lineno}"
                break
            frame = frame.f_back
        return self._wrap(fn, kind, self._owner_label(kind, obj), site, table=registry, obj=obj,
                          during=True)

    def wrap_registration(self, tensor: Any, fn: Any, kind: str) -> Any:
        """PyTorch tensor hooks registered while the trace is open (called by the mode)."""
        if getattr(fn, "__hookgrad_trace_internal__", False):
            return fn
        frame = _user_frame(2)
        if frame is None or frame.f_code.co_filename.endswith(_PLUMBING):
            return fn
        site = f"{frame.f_code.co_filename}:{frame.f_lineno}"
        table = getattr(tensor, "_backward_hooks" if kind == "tensor" else
                        "_post_accumulate_grad_hooks", None)
        return self._wrap(fn, kind, self._owner_label(kind, tensor), site, table=table,
                          obj=tensor, during=True)

    def _owner_label(self, kind: str, obj: Any) -> str:
        if obj is None:
            return "*" if kind.startswith("global.") else "?"
        if kind.startswith(("module.", "optimizer.")):
            return self.name_of(obj)
        if kind.startswith("node."):
            return obj.name()
        return self._names.get(id(obj)) or _tables.tensor_label(obj)

    def _label(self, entry: HookEntry) -> str:
        """An entry's owner, by its parameter name when the module was discovered later."""
        obj = entry.obj if entry.kind in ("tensor", "post_accumulate") else None
        return self._names.get(id(obj), entry.owner) if obj is not None else entry.owner

    def name_of(self, obj: Any) -> str:
        """The name the trace uses for a module, parameter, tensor or optimizer."""
        name = self._names.get(id(obj))
        if name is None:
            name = _tables.tensor_label(obj) if _summary.is_tensor(obj) else type(obj).__name__
        return name

    # ------------------------------------------------------------------ adopting objects
    def _swap_table(self, table: Any, kind: str, owner: str, obj: Any,
                    during: bool = False) -> None:
        for hid, fn in list(table.items()):
            if (id(table), hid) in self._wrapped or getattr(fn, "__hookgrad_trace__", None) is \
                    self or getattr(fn, "__hookgrad_trace_internal__", False):
                continue
            self._wrapped.add((id(table), hid))
            w = self._wrap(fn, kind, owner, _site(fn), table=table, obj=obj, during=during)
            table[hid] = w
            self._swaps.append((table, hid, fn, w))

    def adopt_module(self, root: Any, root_name: str | None = None) -> None:
        """Trace a module tree: name its modules and parameters, wrap the hooks they hold."""
        for mname, mod in root.named_modules():
            # hooks found on a module already traced were added while the trace was open
            during = self.active and id(mod) in self._names
            self._names.setdefault(id(mod), mname or root_name or type(mod).__name__)
            self._keep[id(mod)] = mod
            name = self._names[id(mod)]
            for table, kind, owner in _tables.module_tables(mod, name):
                self._swap_table(table, kind, owner, mod, during)
            for pname, p in mod.named_parameters(recurse=False):
                pfull = pname if not mname else f"{mname}.{pname}"
                self._names.setdefault(id(p), pfull)
                self._param_module.setdefault(id(p), id(mod))
                for table, kind, owner in _tables.tensor_tables(p, self._names[id(p)]):
                    self._swap_table(table, kind, owner, p, during)

    def _adopt(self, obj: Any) -> None:
        if hasattr(obj, "named_modules"):
            self.adopt_module(obj)
        elif hasattr(obj, "param_groups"):
            during = self.active and id(obj) in self._keep
            self._keep[id(obj)] = obj
            for table, kind, owner in _tables.optimizer_tables(obj, self.name_of(obj)):
                self._swap_table(table, kind, owner, obj, during)
        elif hasattr(obj, "register_hook"):
            for table, kind, owner in _tables.tensor_tables(obj, f"tensor{list(obj.shape)}"):
                self._swap_table(table, kind, owner, obj)
            fn = obj.grad_fn
            if fn is not None:
                for table, kind, owner in _tables.node_tables(fn):
                    self._swap_table(table, kind, owner, fn)

    # ------------------------------------------------------------------ watching
    def on_module_pre(self, module: Any, args: tuple) -> None:
        known = id(module) in self._names
        if (known or self.discover) and (self._depth == 0 or not known):
            # a top-level call: wrap the hooks added since (on PyTorch no observer sees them)
            self.adopt_module(module)
        rec = self._record(module)
        rec.started += 1
        rec.last_seq = next(self._seq)
        lib = _tables.lib_of(module)
        rec.grad_on += bool(lib is not None and lib.is_grad_enabled())
        rec.inputs_grad += any(getattr(a, "requires_grad", False) for a in _flat(args))
        self._depth += 1

    def on_module_exit(self, module: Any, args: tuple, output: Any) -> None:
        self._depth = max(0, self._depth - 1)

    def on_module_post(self, module: Any, args: tuple, output: Any) -> None:
        rec = self._record(module)
        rec.finished += 1
        outs = [o for o in _flat(output) if _summary.is_tensor(o)]
        rec.outputs_grad += any(o.requires_grad for o in outs)
        rec.out_nodes = [o.grad_fn for o in outs if o.grad_fn is not None]

    def _record(self, module: Any) -> ModuleRecord:
        rec = self.modules.get(id(module))
        if rec is None:
            self._keep[id(module)] = module
            rec = self.modules[id(module)] = ModuleRecord(self.name_of(module))
        return rec

    def on_step_pre(self, opt: Any, args: tuple, kwargs: dict) -> None:
        if self.discover or self.torch_mode is not None:
            self._adopt(opt)
        counts = self.steps.setdefault(id(opt), [0, 0, -1])
        counts[0] += 1
        counts[2] = next(self._seq)

    def on_step_post(self, opt: Any, args: tuple, kwargs: dict) -> None:
        self.steps.setdefault(id(opt), [0, 0, -1])[1] += 1

    def _node_of(self, entry: HookEntry, reach: Any) -> Any:
        obj = entry.obj
        if entry.kind.startswith("node."):
            return obj
        if entry.kind == "tensor" and entry.node is not None:
            return entry.node
        return reach.node_of(obj) if obj is not None else None

    def run_backward(self, api: str, roots: Any, inputs: Any, call: Any) -> Any:
        """Run one backward pass (`call`), noting which traced hooks it can reach."""
        run = BackwardRun(len(self.runs), api, next(self._seq), inputs is not None)
        self.runs.append(run)
        if not self._running:  # an outer pass: the picture shows the last one
            self.last_roots = roots
            self._node_fires = {}
        reach = walk(roots, inputs)
        run.nodes = reach
        for entry in self._pending:
            if entry.fired:
                continue
            node = self._node_of(entry, reach)
            status = reach.status(node)
            if status == "reached" and api == "grad":
                if entry.kind == "post_accumulate":
                    status = "no_accumulate"
                elif entry.kind.startswith("node.") and id(node) in reach.targets:
                    status = "stopped_at_input"
            entry.statuses.append((run.index, status))
        for rec in self.modules.values():
            if any(reach.status(n) == "reached" for n in rec.out_nodes):
                rec.reached += 1
        self._pending = [e for e in self._pending if not e.fired]
        self._running.append(run)
        try:
            return call()
        except BaseException as e:
            run.error = f"{type(e).__name__}: {e}"
            raise
        finally:
            self._running.pop()
            run.end_seq = next(self._seq)
            run.nodes = None

    # ------------------------------------------------------------------ context
    def _libs(self) -> list:
        libs = {_tables.lib_of(o) for o in self.objects} - {None}
        libs.add(sys.modules["hookgrad"])
        if "torch" in sys.modules and (self.discover or not self.objects):
            libs.add(sys.modules["torch"])
        return sorted(libs, key=lambda m: m.__name__)

    def __enter__(self) -> HookTrace:
        libs = self._libs()
        for obj in self.objects:
            self._adopt(obj)
        for lib in libs:
            for table, kind, owner in _tables.global_tables(lib):
                self._swap_table(table, kind, owner, None)
        for lib in libs:
            self._uninstall.append(_watch.install(lib, self))
        _hooks.add_registration_observer(self._observe)
        compiled._OPEN_TRACES.append(self)
        self.active = True
        return self

    def _note_late_registrations(self) -> None:
        """Hooks added to traced modules/optimizers after their last call and never wrapped
        (PyTorch has no registration observer): listed with a registration after everything.
        With ``discover``, modules and optimizers that never ran are found among live objects
        (PyTorch tells no one when a module is made or a hook is added to it)."""
        seq = next(self._seq)
        if self.discover:
            classes = tuple(c for lib in self._libs() for c in (lib.nn.Module,
                                                                lib.optim.Optimizer))
            for obj in gc.get_objects():
                if issubclass(type(obj), classes) and id(obj) not in self._keep:
                    self._keep[id(obj)] = obj
                    for p in getattr(obj, "parameters", lambda recurse: ())(recurse=False):
                        self._param_module.setdefault(id(p), id(obj))
        for obj in list(self._keep.values()):
            if hasattr(obj, "param_groups"):
                tables = _tables.optimizer_tables(obj, self.name_of(obj))
            else:
                tables = _tables.module_tables(obj, self.name_of(obj))
            for table, kind, owner in tables:
                for hid, fn in list(table.items()):
                    if (id(table), hid) in self._wrapped or getattr(
                            fn, "__hookgrad_trace__", None) is self or getattr(
                            fn, "__hookgrad_trace_internal__", False):
                        continue
                    self._wrapped.add((id(table), hid))
                    self.entries.append(HookEntry.make(kind, owner, _hooks.hook_name(fn),
                                                       _site(fn), table, fn, obj, seq))

    def __exit__(self, *exc: Any) -> None:
        self.active = False
        if self in compiled._OPEN_TRACES:
            compiled._OPEN_TRACES.remove(self)
        self._note_late_registrations()
        _hooks.remove_registration_observer(self._observe)
        for uninstall in reversed(self._uninstall):
            uninstall()
        self._uninstall = []
        for entry in self.entries:
            entry.removed = entry.is_removed()
        for registry, hid, fn, w in self._swaps:
            if registry.get(hid) is w:
                registry[hid] = fn
        self._swaps = []

    # ------------------------------------------------------------------ results
    def firing_indices(self, fn: Any) -> list[int]:
        """Indices at which a (wrapped) hook fired."""
        return self._fired.get(id(fn), [])

    def node_marks(self, node: Any) -> list:
        """``(kind, index)`` of tensor hooks that fired at `node` in the last backward pass,
        for graph nodes that do not expose their tensors' hooks (PyTorch's)."""
        return self._node_fires.get(id(node), [])

    def leaf_names(self) -> dict:
        """``{name: parameter}`` for every traced module's parameters (graph labels)."""
        out = {}
        for obj in list(self._keep.values()):
            if hasattr(obj, "named_parameters"):
                for _, p in obj.named_parameters(recurse=False):
                    out[self._names.get(id(p), "param")] = p
        return out

    def silent(self) -> list:
        """Every traced hook that did not fire, with the reason (see `hooktools.silent`)."""
        return explain(self)

    def format(self) -> str:
        """A readable table of the recorded events."""
        lines = [f"{'#':>3}  {'kind':<24} {'for':<22} {'hook':<24} {'ms':>7}  args -> result"]
        for e in self.events:
            res = f"{e.result} (replaced)" if e.replaced else e.result
            lines.append(f"{e.index:>3}  {e.kind:<24} {e.target:<22} {e.hook:<24} "
                         f"{e.seconds * 1e3:>7.3f}  {e.args} -> {res}")
        return "\n".join(lines)


def _flat(x: Any) -> list:
    if isinstance(x, (tuple, list)):
        return [y for e in x for y in _flat(e)]
    if isinstance(x, dict):
        return [y for e in x.values() for y in _flat(e)]
    return [x]
