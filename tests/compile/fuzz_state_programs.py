"""Seeded random *state-change* programs for the differential compile fuzzer
(`test_fuzz_state`): the world around a compiled function changes between calls, and every
call must still equal the eager call.

`fuzz_programs` mixes ops, hooks and autograd state inside one call; this generator targets
what a compiled callable must notice *between* calls (docs/compile.md, soundness rule 2).
A program picks a few *items* from the vocabulary below; each item adds setup lines, a
statement of the compiled function that reads some state, and a change of that state made
between calls on some of the calls:

- module attributes (int, float, bool, str, list, dict), ``train``/``eval`` of a dropout,
  a submodule replaced, ``Sequential.append``, a parameter's ``.data`` assigned, a parameter
  replaced or set to None, ``requires_grad`` toggled on a parameter;
- module globals, closure cells (also holding None), a nested helper's default argument,
  ``functools.partial`` keywords and bound lists, class attributes, methods replaced on the
  class, enum settings, ``dtype`` settings, objects with ``__slots__`` or behind a weak
  reference, modules and callable objects swapped inside containers, ordered dicts, deques,
  sets, environment variables;
- inputs: layout (contiguous, transposed, expanded, a slice), ``requires_grad`` and leaf-ness,
  the same tensor passed twice or a view of the other argument, in-place writes to inputs the
  caller then reads, containers of tensors and of scalars whose length changes, ``torch.Size``,
  ``dtype`` and module arguments, a float argument that becomes an int, iterators, NumPy
  arrays;
- grad mode around the call (``no_grad``, ``enable_grad``, ``inference_mode``), the random
  seed between calls with ``rand``/dropout inside, module and tensor hooks added and removed
  between calls, global module hooks;
- tensor values read as Python numbers (``.item()``, ``int(t)``), value-dependent shapes
  (``nonzero``), results returned as dicts, named tuples and dataclasses, exceptions raised on
  some calls only.

A program is Python source (each has its own code objects; a failure prints as a
reproducer). `observe` runs it eagerly or compiled and records, per call, the result, the
arguments afterwards, gradients, the hook log and a picture of the state.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import warnings
from collections import namedtuple
from typing import Any

from tests.compile.fuzz_programs import fx_backend, same

__all__ = ["generate", "observe", "run_state_program", "STATE_MODES"]

STATE_MODES = ("eager", "aot_eager", "inductor", fx_backend)


# each item: (setup lines, body lines, between lines); ``{k}`` is the item's tag, ``{c}`` the
# condition on the call index ``i`` under which the change happens
_ITEMS: list[tuple[list[str], list[str], list[str]]] = [
    # module attributes of plain types
    (["lin.k{k} = 1"], ["h = h * lin.k{k}"], ["if {c}: lin.k{k} = lin.k{k} + 1"]),
    (["lin.f{k} = 0.5"], ["h = h + lin.f{k}"], ["if {c}: lin.f{k} = lin.f{k} * -2.0"]),
    (["lin.on{k} = True"], ["if lin.on{k}:", "    h = h.tanh()"],
     ["if {c}: lin.on{k} = not lin.on{k}"]),
    (["lin.tag{k} = 'a'"], ["h = h * (2.0 if lin.tag{k} == 'b' else 1.0)"],
     ["if {c}: lin.tag{k} = 'b' if lin.tag{k} == 'a' else 'a'"]),
    (["lin.sizes{k} = [1, 2]"], ["h = h * len(lin.sizes{k})"],
     ["if {c}: lin.sizes{k}.append(3)"]),
    (["lin.tab{k} = {{'a': 1.0}}"], ["h = h + lin.tab{k}['a']"],
     ["if {c}: lin.tab{k}['a'] = lin.tab{k}['a'] + 0.5"]),
    # modules: training flag, submodules, parameters
    ([], ["h = drop(h)"], ["if {c}: drop.train(not drop.training)"]),
    ([], ["h = net.act(h)"], ["if {c}: net.act = ACTS[i % len(ACTS)]()"]),
    ([], ["h = seq(h)"], ["if {c}: seq.append(torch.nn.Tanh())"]),
    ([], ["h = lin(h)"], ["if {c}: lin.weight.data = lin.weight.data * 0.5"]),
    ([], ["h = lin(h)"], ["if {c}: lin.bias = None if lin.bias is not None else "
                          "torch.nn.Parameter(torch.full((4,), 0.1))"]),
    ([], ["h = lin(h)"], ["if {c}: lin.weight = torch.nn.Parameter(lin.weight.detach() + 0.25)"]),
    ([], ["h = lin(h)"], ["if {c}: lin.weight.requires_grad_(not lin.weight.requires_grad)"]),
    ([], ["h = lin(h) * (2.0 if lin.bias is None else 1.0)"], ["if {c}: lin.bias = None"]),
    # globals, cells, defaults, partials, classes, enums, dtypes, slots
    ([], ["h = h * SCALE"], ["if {c}: SCALE = SCALE + 1.0"]),
    (["cell{k} = [1.0]"], ["h = h * cell{k}[0]"], ["if {c}: cell{k}[0] = cell{k}[0] - 0.5"]),
    (["opt{k} = {{'v': None}}"], ["h = h if opt{k}['v'] is None else h * opt{k}['v']"],
     ["if {c}: opt{k}['v'] = None if opt{k}['v'] is not None else 3.0"]),
    (["def helper{k}(t, s=1.0):", "    return t * s"], ["h = helper{k}(h)"],
     ["if {c}: helper{k}.__defaults__ = (helper{k}.__defaults__[0] + 1.0,)"]),
    (["part{k} = {{'p': functools.partial(lambda t, s: t * s, s=1.0)}}"], ["h = part{k}['p'](h)"],
     ["if {c}: part{k}['p'] = functools.partial(lambda t, s: t * s, s=float(i + 2))"]),
    (["kpart{k} = functools.partial(lambda t, s: t * s, s=1.0)"], ["h = kpart{k}(h)"],
     ["if {c}: kpart{k}.keywords['s'] = kpart{k}.keywords['s'] + 1.0"]),
    (["bound{k} = [1.0]", "pbound{k} = functools.partial(lambda t, b: t * b[0], b=bound{k})"],
     ["h = pbound{k}(h)"], ["if {c}: bound{k}[0] = bound{k}[0] + 1.0"]),
    (["class Cfg{k}:", "    scale = 1.0", "    def act(self, t):", "        return t.sin()",
      "cfg{k} = Cfg{k}()"], ["h = cfg{k}.act(h) * cfg{k}.scale"],
     ["if {c}: Cfg{k}.scale = Cfg{k}.scale + 1.0",
      "if {c}: Cfg{k}.act = lambda self, t: t.cos()"]),
    (["mode{k} = {{'m': Mode.A}}"], ["h = h * (2.0 if mode{k}['m'] is Mode.A else 3.0)"],
     ["if {c}: mode{k}['m'] = Mode.B if mode{k}['m'] is Mode.A else Mode.A"]),
    (["dt{k} = {{'d': torch.float32}}"], ["h = (h.to(dt{k}['d']) * 2).to(x.dtype)",
                                          "log.append(str(h.to(dt{k}['d']).dtype))"],
     ["if {c}: dt{k}['d'] = torch.float64 if dt{k}['d'] is torch.float32 else torch.float32"]),
    (["class Slot{k}:", "    __slots__ = ('v',)", "slot{k} = Slot{k}()", "slot{k}.v = 1.0"],
     ["h = h * slot{k}.v"], ["if {c}: slot{k}.v = slot{k}.v + 1.0"]),
    # containers of modules, callables and of other kinds; weak references; the environment
    (["box{k} = [torch.nn.ReLU()]"], ["h = box{k}[0](h - 0.5)"],
     ["if {c}: box{k}[0] = ACTS[i % len(ACTS)]()"]),
    (["class Dbl{k}:", "    def __call__(self, t):", "        return t * 2",
      "class Tpl{k}:", "    def __call__(self, t):", "        return t * 3",
      "fnbox{k} = {{'f': Dbl{k}()}}"], ["h = fnbox{k}['f'](h)"],
     ["if {c}: fnbox{k}['f'] = Tpl{k}() if isinstance(fnbox{k}['f'], Dbl{k}) else Dbl{k}()"]),
    (["od{k} = collections.OrderedDict(v=1.0)"], ["h = h * od{k}['v']"],
     ["if {c}: od{k}['v'] = od{k}['v'] + 1.0"]),
    (["dq{k} = collections.deque([1.0])"], ["h = h * dq{k}[0] * len(dq{k})"],
     ["if {c}: dq{k}.appendleft(2.0)"]),
    (["names{k} = {{'a'}}"], ["h = h * (2.0 if 'b' in names{k} else 1.0)"],
     ["if {c}: names{k}.symmetric_difference_update({{'b'}})"]),
    (["class Ref{k}:", "    pass", "tgt{k} = Ref{k}()", "tgt{k}.v = 1.0",
      "ref{k} = weakref.ref(tgt{k})"], ["h = h * ref{k}().v"],
     ["if {c}: tgt{k}.v = tgt{k}.v + 1.0"]),
    ([], ["h = h * (2.0 if os.environ.get('HOOKGRAD_FUZZ_STATE_FLAG') == '1' else 1.0)"],
     ["if {c}: os.environ['HOOKGRAD_FUZZ_STATE_FLAG'] = "
      "'0' if os.environ.get('HOOKGRAD_FUZZ_STATE_FLAG') == '1' else '1'"]),
    (["mods{k} = {{'m': torch.nn.Tanh()}}"], ["h = h + mods{k}['m'](h)"],
     ["if {c}: mods{k}['m'].register_forward_hook(lambda mod, a, o: o * 0.5)"]),
    # random state
    ([], ["h = h + torch.rand(h.shape) * 0.1"], ["if {c}: torch.manual_seed(7)"]),
    ([], ["h = F.dropout(h, 0.5, training=True)"], ["if {c}: torch.manual_seed(3)"]),
    # hooks between calls
    (["hooks{k} = []"], ["h = lin(h)"],
     ["if {c} and not hooks{k}: hooks{k}.append(lin.register_forward_hook("
      "lambda mod, a, o: o * 0.5))",
      "elif {c}: hooks{k}.pop().remove()"]),
    (["hooks{k} = []"], ["h = lin(h)"],
     ["if {c} and not hooks{k}: hooks{k}.append(lin.weight.register_hook("
      "lambda g: (log.append('wh{k}'), g * 2)[1]))",
      "elif {c}: hooks{k}.pop().remove()"]),
    (["hooks{k} = []"], ["h = lin(h)"],
     ["if {c} and not hooks{k}: hooks{k}.append(lin.register_full_backward_hook("
      "lambda mod, gi, go: log.append('bw{k}')))",
      "elif {c}: hooks{k}.pop().remove()"]),
    ([], ["h = lin(h)"],
     ["if {c} and not GLOBAL_HOOKS: GLOBAL_HOOKS.append(torch.nn.modules.module."
      "register_module_forward_hook(lambda mod, a, o: log.append(type(mod).__name__)))",
      "elif {c}: GLOBAL_HOOKS.pop().remove()"]),
    # exceptions on some calls
    (["fail{k} = {{'on': False}}"], ["if fail{k}['on']:", "    raise ValueError('f{k}')"],
     ["fail{k}['on'] = {c}"]),
]

# statements that break the graph (the rest of the call runs eagerly): a few programs only
_BREAKING = [
    "if h.sum().item() > 0:\n    h = h * 2",
    "h = h * len(h.detach().nonzero())",
    "h = h * int(y.abs().sum().item()) % 3",
    "h = h * next(extra['it'])",
    "with torch.no_grad():\n    x.mul_(1.5)",
]

# statements reading the arguments (their kinds change from call to call, see `_args`)
_ARG_READS = [
    "h = h + y",
    "h = h * 2.0 if x.is_contiguous() else h * 3.0",
    "h = h + x.stride(0)",
    "h = h * (2.0 if x is y else 1.0)",
    "h = h + sum(t.sum() for t in extra['ts'])",
    "h = h * extra['k'] + len(extra['ts'])",
    "h = h.reshape(extra['size']).reshape(h.shape)",
    "h = h * float(extra['arr'][0])",
    "h = h.to(extra['dtype']).to(x.dtype) * (2.0 if extra['dtype'] is torch.float64 else 1.0)",
    "h = h * extra['k'] if isinstance(extra['k'], float) else h + extra['k']",
    "h = extra['act'](h - 0.5)",
    "h = h * (2.0 if x.is_leaf else 3.0)",
    "h = h * (2.0 if x.requires_grad else 3.0)",
    "y.add_(1.0)",
]

_RETURNS = ["h", "(h, y * 1.0)", "{'out': h, 'n': h.shape[0]}", "Pair(h, h.sum())", "h",
            "(h, y * 1.0)", "{'out': h, 'n': h.shape[0]}", "Pair(h, h.sum())",
            "Out(h, len(log))"]  # (a dataclass made in the region breaks the graph)

_LAYOUTS = ("contiguous", "transposed", "expanded", "sliced")
_ALIASES = ("separate", "same", "view")
_CTXS = ("none", "no_grad", "enable_grad", "inference_mode")


def generate(seed: int) -> dict:
    """A random state-change program: its source and the per-call argument kinds."""
    r = random.Random(seed)
    setup: list[str] = []
    body: list[str] = []
    between: list[str] = []
    n = r.randint(3, 5)
    for k in range(r.randint(1, 4)):
        s, b, w = r.choice(_ITEMS)
        calls = sorted(r.sample(range(1, n), r.randint(1, n - 1)))
        cond = f"i in {tuple(calls)}"
        setup += [line.format(k=k, c=cond) for line in s]
        if b:  # (one statement: a read inserted later never splits an ``if`` block)
            body.append("\n".join(line.format(k=k, c=cond) for line in b))
        between += [line.format(k=k, c=cond) for line in w]
    for _ in range(r.randint(1, 3)):
        body.insert(r.randint(0, len(body)), r.choice(_ARG_READS))
    if r.random() < 0.15:
        body.insert(r.randint(0, len(body)), r.choice(_BREAKING))
    inplace = any(stmt.startswith(("y.add_", "with torch.no_grad():\n    x.mul_"))
                  for stmt in body)
    # each call changes at most one argument property of the call before it: a stale graph
    # shows only when every other guard still passes (several changes at once recompile)
    choices = {"layout": _LAYOUTS, "alias": _ALIASES, "xgrad": (False, True),
               "nonleaf": (False, True), "ctx": _CTXS, "nts": (1, 2, 3), "k": (1.0, 2.0, 3),
               "size": ((2, 8), (8, 2)), "dtype": ("float32", "float64"), "arr": (1.0, 2.0),
               "act": ("ReLU", "Tanh")}
    spec = {key: r.choice(values) for key, values in choices.items()}
    spec["ctx"] = "none"
    spec["xgrad"] = spec["xgrad"] and not inplace
    calls = []
    for i in range(n):
        if i and r.random() < 0.6:
            key = r.choice(sorted(choices))
            spec = dict(spec, **{key: r.choice(choices[key])})
            if inplace:
                spec["xgrad"] = False
        calls.append(dict(spec))
    if inplace:  # (an in-place write to an input that shares memory with the other one is
        for c in calls:  # an eager error in some layouts; kept simple: separate inputs)
            c["alias"], c["layout"] = "separate", "contiguous"
    uses = {key for key in ("arr", "it") if any(f"extra['{key}']" in b for b in body)}
    for c in calls:
        c["uses"] = uses
    src = _SOURCE.format(
        setup="\n".join("    " + line for stmt in setup for line in stmt.split("\n")) or "    pass",
        body="\n".join("        " + line for stmt in body for line in stmt.split("\n")),
        between="\n".join("        " + line for stmt in between for line in stmt.split("\n"))
        or "        pass",
        ret=r.choice(_RETURNS))
    return {"seed": seed, "src": src, "calls": calls}


_SOURCE = """\
SCALE = 1.0
GLOBAL_HOOKS = []


def build(torch, log, Mode, Pair, Out, functools):
    import collections, os, weakref
    F = torch.nn.functional
    ACTS = (torch.nn.ReLU, torch.nn.Tanh, torch.nn.Identity, torch.nn.Sigmoid)
    lin = torch.nn.Linear(4, 4)
    with torch.no_grad():
        lin.weight.copy_(torch.arange(16.0).reshape(4, 4).sin() * 0.5)
        lin.bias.copy_(torch.arange(4.0).cos() * 0.1)
    net = torch.nn.Module()
    net.act = torch.nn.ReLU()
    seq = torch.nn.Sequential(torch.nn.Identity())
    drop = torch.nn.Dropout(0.5)
{setup}

    def f(x, y, extra):
        h = x * 1.0
{body}
        return {ret}

    def between(i):
        global SCALE
{between}

    def state():
        return (SCALE, lin.training, drop.training, lin.bias is None,
                [float(v) for v in lin.weight.detach().reshape(-1).tolist()],
                {{k: v for k, v in vars(lin).items() if not k.startswith('_')
                  and isinstance(v, (int, float, str, list, dict))}})

    def cleanup():
        while GLOBAL_HOOKS:
            GLOBAL_HOOKS.pop().remove()
        os.environ.pop('HOOKGRAD_FUZZ_STATE_FLAG', None)
    return f, between, state, cleanup, lin
"""


_Pair = namedtuple("_Pair", "a b")


@dataclasses.dataclass
class _Out:
    a: Any
    n: int


def _args(torch: Any, call: dict, i: int) -> tuple:
    """The arguments of call `i` in the layouts, aliasing and kinds the program chose."""
    import numpy as np  # noqa: PLC0415
    base = torch.arange(16.0).reshape(4, 4).sin() + i * 0.25
    layout = call["layout"]
    if layout == "transposed":
        x = base.t().contiguous().t()
    elif layout == "expanded":
        x = base[:1].expand(4, 4)
    elif layout == "sliced":
        x = torch.cat([base, base], 1)[:, 2:6]
    else:
        x = base.clone()
    if call["xgrad"]:
        x = x.detach().requires_grad_()
        if call["nonleaf"]:
            x = x * 1.0
    alias = call["alias"]
    y = x if alias == "same" else x.view(4, 4) if alias == "view" else base.cos()
    extra = {"ts": [base[0] * (j + 1) for j in range(call["nts"])], "k": call["k"],
             "size": torch.Size(call["size"]), "dtype": getattr(torch, call["dtype"]),
             "act": getattr(torch.nn, call["act"])()}
    if "arr" in call["uses"]:  # (only when read: an iterator argument runs the call eagerly)
        extra["arr"] = np.array([call["arr"]])
    if "it" in call["uses"]:
        extra["it"] = iter([call["k"], 0.0])
    return x, y, extra


def _ctx(torch: Any, name: str) -> Any:
    if name == "none":
        return contextlib.nullcontext()
    return getattr(torch, name)()


def _plain(v: Any, torch: Any) -> Any:
    if isinstance(v, torch.Tensor):
        return ("T", tuple(v.shape), str(v.dtype).split(".")[-1], v.requires_grad,
                [float(a) for a in v.detach().reshape(-1).tolist()])
    if isinstance(v, dict):
        return {k: _plain(a, torch) for k, a in v.items() if k != "it"}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return ("dataclass", [_plain(getattr(v, f.name), torch) for f in dataclasses.fields(v)])
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_plain(a, torch) for a in v])
    if v is None or isinstance(v, (int, float, str, bool)):
        return v
    return type(v).__name__


def observe(torch: Any, prog: dict, backend: Any) -> list:
    """One observation per call of `prog`, eager (`backend` None) or compiled."""
    import enum  # noqa: PLC0415
    import functools  # noqa: PLC0415
    ns: dict = {}
    exec(compile(prog["src"], f"<state fuzz {prog['seed']} {backend}>", "exec"), ns)  # noqa: S102
    log: list = []
    mode = enum.Enum("Mode", "A B")
    f, between, state, cleanup, lin = ns["build"](torch, log, mode, _Pair, _Out, functools)
    run = f if backend is None else torch.compile(f, backend=backend)
    out: list = []
    try:
        for i, call in enumerate(prog["calls"]):
            try:
                between(i)
            except Exception as e:  # noqa: BLE001 - (a hook on a parameter that stopped
                out.append(("between raised", type(e).__name__))  # requiring grad): observed
            torch.manual_seed(100 + i)
            x, y, extra = _args(torch, call, i)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    with _ctx(torch, call["ctx"]):
                        res = run(x, y, extra)
                    first = next(iter(res.values())) if isinstance(res, dict) else (
                        res[0] if isinstance(res, tuple) else getattr(res, "a", res))
                    if first.requires_grad:
                        first.sum().backward()
                leaf_x = x if x.is_leaf else None
                out.append(_plain((res, x, y, leaf_x.grad if leaf_x is not None else None,
                                   _grads(lin), list(log), state()), torch))
            except Exception as e:  # noqa: BLE001 - the exception type is observed
                out.append(("raised", type(e).__name__, list(log)))
            log.clear()
    finally:
        cleanup()
    return out


def _grads(lin: Any) -> list:
    """The Linear's gradients after the call's backward (then cleared for the next call)."""
    grads = [p.grad.clone() if p is not None and p.grad is not None else None
             for p in (lin.weight, lin.bias)]
    lin.zero_grad()
    return grads


def _in_float64(torch: Any, prog: dict, backend: Any) -> list:
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        return observe(torch, prog, backend)
    except Exception as e:  # noqa: BLE001 - a crash of the compiled run is a failure
        return [("crashed", repr(e))]
    finally:
        torch.set_default_dtype(before)


def run_state_program(torch: Any, seed: int, modes: tuple = STATE_MODES) -> list[str]:
    """Every mode in which state program `seed` differs from eager (its failures)."""
    prog = generate(seed)
    torch._dynamo.reset()
    want = observe(torch, prog, None)
    bad = []
    for backend in modes:
        torch._dynamo.reset()
        try:
            got = observe(torch, prog, backend)
        except Exception as e:  # noqa: BLE001 - a crash of the compiled run is a failure
            got = [("crashed", repr(e))]
        if not same(want, got):  # a second look in float64: rounding near a cancellation
            torch._dynamo.reset()  # (``tanh`` of saturated values) vanishes there
            got, want = (_in_float64(torch, prog, b) for b in (backend, None))
        if not same(want, got):
            bad.append(f"state seed {seed}: {getattr(backend, '__name__', backend)}")
        torch._dynamo.reset()
    return bad

