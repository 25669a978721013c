"""Seeded random programs for the differential compile fuzzer (`test_fuzz_compile`).

A program is Python *source* (so each one has its own code objects, hence its own compile
cache, and a failure is printed as a runnable reproducer). ``build(torch, log, S, G)`` makes a
fresh world (a module with hooks, closures over the log and the state) and returns
``(f, m, between)``: the function to compile, its module and what the caller does between
calls (mutate globals, replace hooks). `observe` runs one program eagerly or compiled, calling
``f`` several times with new values (and, in some programs, new shapes), running backward
after each call, and returns everything observable: outputs, gradients, retained gradients,
hook logs, side effects, exception types.
"""

from __future__ import annotations

import contextlib
import math
import random
import warnings
from typing import Any

__all__ = ["generate", "observe", "same", "departs", "run_program", "MODES"]



def fx_backend(gm: Any, example_inputs: list) -> Any:
    """A custom backend as a PyTorch user writes one: it receives a ``hookgrad.fx.GraphModule``
    and runs its generated ``forward``."""
    import hookgrad.fx  # noqa: PLC0415 - only the hookgrad run uses it
    assert isinstance(gm, hookgrad.fx.GraphModule), type(gm)
    gm.graph.lint()
    return gm.forward


def fx_interpreter_backend(gm: Any, example_inputs: list) -> Any:
    """A custom backend that runs the received graph node by node (``fx.Interpreter``)."""
    import hookgrad.fx  # noqa: PLC0415
    assert isinstance(gm, hookgrad.fx.GraphModule), type(gm)
    return lambda *args: hookgrad.fx.Interpreter(gm).run(*args)


# (backend, compiled autograd around backward)
MODES = (("eager", False), ("aot_eager", False), ("inductor", False), ("eager", True),
         (fx_backend, False), (fx_interpreter_backend, False))

_UNARY = ("tanh", "sin", "sigmoid", "relu", "cos", "abs")
_HOOKS = (  # tensor hooks on intermediates: logging, replacing, value-reading
    "lambda g: log.append(('t{k}', g.shape[0]))",
    "lambda g: g * 0.5",
    "lambda g: torch.ones_like(g) * 0.5",
    "lambda g: log.append(('tv{k}', round(float(g.sum()), 3)))",
    "lambda g: (log.append('t{k}'), g + 1)[1]",
)


# hooks registered before the first call: (chance, one of these statements); `{k}` tags the
# log entry, `{mm}` is the module of the global module hooks; handles kept in `H` are removed
# between calls (and all of them when the program ends: global hooks must not leak)
_SETUP_KEPT = (
    (0.15, ["H['kw'] = m.register_forward_hook(lambda mod, a, kw, o: "
            "log.append(('mkw{k}', len(a), sorted(kw))), with_kwargs=True)"]),
    (0.1, ["H['pkw'] = m.register_forward_pre_hook(lambda mod, a, kw: "
           "log.append(('mpkw{k}', len(a))), with_kwargs=True)"]),
    (0.1, ["H['ac'] = m.register_forward_hook(lambda mod, a, o: log.append('mac{k}'), "
           "always_call=True)"]),
    (0.15, ["H['gf'] = {mm}.register_module_forward_hook(lambda mod, a, o: "
            "log.append(('gf{k}', type(mod).__name__)))",
            "H['gp'] = {mm}.register_module_forward_pre_hook(lambda mod, a: "
            "log.append(('gp{k}', type(mod).__name__)))",
            "H['gb'] = {mm}.register_module_full_backward_hook(lambda mod, gi, go: "
            "log.append(('gb{k}', type(mod).__name__)))"]),
    (0.15, ["H['lnb'] = ln.register_full_backward_hook(lambda mod, gi, go: "
            "log.append(('lnb{k}', len(gi))))"]),
    (0.1, ["H['wacc'] = m.weight.register_post_accumulate_grad_hook("
           "lambda p: log.append(('wacc{k}', p.grad.shape[0])))"]),
)
_SETUP_PLAIN = (  # hooks whose handles are not kept
    (0.5, ["m.register_forward_hook(lambda mod, a, o: log.append('mf{k}'))"]),
    (0.3, ["m.register_forward_pre_hook(lambda mod, a: log.append('mp{k}'))"]),
    (0.4, ["m.register_full_backward_hook(lambda mod, gi, go: log.append(('mb{k}', len(gi))))"]),
    (0.3, ["m.register_full_backward_pre_hook(lambda mod, go: log.append('mbp{k}'))"]),
    (0.2, ["m.weight.register_hook(lambda g: g * 2)"]),
)


class _Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.k = 0
        self.setup: list[str] = []
        self.body: list[str] = []
        self.between: list[str] = []

    def tag(self) -> int:
        self.k += 1
        return self.k

    def hook(self) -> str:
        return self.r.choice(_HOOKS).format(k=self.tag())

    # ------------------------------------------------------------ statements in f
    def stmt(self) -> None:
        r, b = self.r, self.body
        choice = r.randrange(30)
        if choice >= 22:
            self.stmt2(choice - 22)
            return
        if choice < 4:
            b.append(f"h = h.{r.choice(_UNARY)}()")
        elif choice < 6:
            b.append(r.choice(["h = h * x", "h = h + w", "h = h * 2.0 - x", "h = (h * w).tanh()"]))
        elif choice < 8:
            b.append("h = m(h)")
        elif choice == 8:
            b.append(r.choice(["h = h + h.detach() * 0.5", "h = h.detach().tanh() + h",
                               "h = h * x.detach()", "h = x.detach().sin() + h",
                               "h = h + h.data.cos()", "h = h * torch.tensor(x.tolist())"]))
        elif choice == 9:
            b.append(f"h.register_hook({self.hook()})")
        elif choice == 10:
            b.append(f"hd = h.register_hook({self.hook()})")
            b.append("hd.remove()")
        elif choice == 11:
            b.append("h.retain_grad()")
            b.append(f"S['r{self.tag()}'] = h")
        elif choice == 12:
            k = self.tag()
            kind = r.choice(["register_prehook(lambda go: log.append(('pre{k}', len(go))))",
                             "register_hook(lambda gi, go: log.append(('post{k}', len(gi))))"])
            b.append(f"h.grad_fn.{kind.format(k=k)}")
        elif choice == 13:
            b.append(r.choice(["log.append('fwd')", "S['n'] = S.get('n', 0) + 1",
                               "L.append(len(L))", "h = h * (1 + len(L))",
                               "S['last'] = h", "C.count += 1", "h = h * C.count"]))
        elif choice == 14:
            b.append("with torch.autograd.graph.saved_tensors_hooks("
                     "lambda t: (log.append('pack'), t)[1], "
                     "lambda t: (log.append('unpack'), t)[1]):")
            b.append("    h = (h * h).tanh()")
        elif choice == 15:
            b.append(r.choice(["h = h * G['scale']", "h = h + G['shift'] * x",
                               "h = h * len(G['sizes'])"]))
        elif choice == 16:
            b.append("if float(h.sum()) > 0.1:")
            b.append("    h = h * 2")
        elif choice == 17:
            b.append(f"x.register_hook({self.hook()})")
        elif choice == 18:
            b.append(r.choice(["h = torch.cat([h, x], 0)[: h.shape[0]]",
                               "h = h.reshape(-1, 2).sum(1).repeat_interleave(2).reshape(h.shape)",
                               "h = h.sum(0, keepdim=True) * h"]))
        elif choice == 19:
            b.append(r.choice(["h = torch.nn.functional.layer_norm(h, h.shape[-1:])",
                               "h = torch.nn.functional.layer_norm(h, h.shape[-1:]).detach() + h",
                               "h = ln(h)"]))
        elif choice == 20 and r.random() < 0.5:
            b.append(f"S['b{self.tag()}'] = h.shape[0]")
            b.append("if G['scale'] > 1.7:")
            b.append("    raise ValueError('scale')")
        elif choice == 20:
            b.append(f"m.weight.register_post_accumulate_grad_hook("
                     f"lambda p: log.append(('acc{self.tag()}', p.grad.shape[0])))")
        else:
            b.append(r.choice(["h = h.clone()", "h = h.exp().clamp(max=5.0)",
                               "h = h.abs().sqrt()", "h = h / (1 + h * h)"]))

    def stmt2(self, choice: int) -> None:
        """The second half of the vocabulary: grad-mode flips, in-place ops on views, input
        mutation, closures, module attributes, hooks that raise, module hooks registered inside."""
        r, b = self.r, self.body
        if choice == 0:
            b.append(r.choice(["with torch.no_grad():", "with torch.set_grad_enabled(False):",
                               "with torch.enable_grad():"]))
            b.append("    h2 = h * 2 + x")
            b.append(r.choice(["h = h + h2", "h = h * h2.sigmoid()",
                               "h = h2.requires_grad_() * h", "h = h + h2.detach()"]))
        elif choice == 1:
            b.append(r.choice(["h = h.clone()\nh[:, 0] = x[:, 1] * 2",
                               "v = h[:, 1:3]\nv.mul_(2)",
                               "h = h.clone()\nh.narrow(0, 0, 1).add_(w)",
                               "h = h * 1.0\nh.t()[0].mul_(0.5)",
                               "h = h.clone()\nh.view(-1)[::3].zero_()",
                               "h = h.clone()\nh.unsqueeze(0)[0, :, 2].sub_(x[:, 0])"]))
        elif choice == 2:
            b.append(r.choice(["x.add_(1.0)", "with torch.no_grad():\n    x.add_(0.5)",
                               "w.mul_(2.0)", "h = h.detach().requires_grad_()",
                               "h = h.detach()", "w.requires_grad_()"]))
        elif choice == 3:
            b.append(r.choice(["cnt += 1", "h = h * cnt", "box.append(float(h.sum() > 0.1))",
                               "m.calls = getattr(m, 'calls', 0) + 1", "h = h * getattr(m, 'calls', 1)",
                               "C.items = C.__dict__.get('items', ()) + (h.shape[0],)",
                               "h = h * getattr(x, 'tag', 1)", "acc.append(1)\nh = h * len(acc)"]))
        elif choice == 4:
            k = self.tag()
            b.append(r.choice([f"h.register_hook(lambda g: boom('hook{k}'))",
                               f"h.grad_fn.register_prehook(lambda go: boom('pre{k}'))",
                               f"log.append('e{k}')\nboom('fwd{k}')"]))
        elif choice == 5:
            k = self.tag()
            b.append(r.choice([
                f"H['in{k}'] = m.register_forward_hook(lambda mod, a, o: log.append('inf{k}'))",
                f"ln.register_forward_pre_hook(lambda mod, a: log.append('inp{k}'))",
                f"m.weight.register_hook(lambda g: log.append(('wh{k}', g.shape[0])))",
                f"h = h.expand(2, *h.shape).sum(0)"]))
        elif choice == 6:
            b.append(r.choice(["h = m(h) + ln(h)", "h = ln(m(h)).relu()",
                               "h = m(input=h)" if r.random() < 0.5 else "h = m(h.detach())",
                               "h = torch.nn.functional.linear(h, m.weight) * w"]))
        else:
            b.append(r.choice(["h = h.sum(1, keepdim=True).expand_as(h) * h",
                               "h = torch.where(h > 0, h, h * 0.1)",
                               "h = torch.stack([h, x]).mean(0)",
                               "h = h.masked_fill(h < -0.5, 0.0)"]))

    # ------------------------------------------------------------ setup and between calls
    def hooks(self, table: tuple) -> None:
        for chance, templates in table:
            if self.r.random() < chance:
                line = templates[0] if len(templates) == 1 else self.r.choice(templates)
                self.setup.append(line.format(k=self.tag(), mm="torch.nn.modules.module"))

    def world(self) -> None:
        r, s = self.r, self.setup
        self.hooks(_SETUP_KEPT)
        if r.random() < 0.3:
            self.between.append("for k in list(H)[:1]:\n    H.pop(k).remove()")
        self.hooks(_SETUP_PLAIN)
        self.between.append(r.choice(["pass", "G['scale'] = G['scale'] + 0.5",
                                      "G['sizes'].append(1)", "G['shift'] = -G['shift']"]))
        if r.random() < 0.15:
            self.between.append("m.forward = (lambda t: type(m).forward(m, t) * 2)")
        if r.random() < 0.15:
            self.between.append(f"m.register_forward_hook(lambda mod, a, o: o * 0.5)")


def generate(seed: int) -> dict:
    """A random program: its source and how to call it (shapes per call)."""
    g = _Gen(seed)
    g.world()
    for _ in range(g.r.randint(2, 7)):
        g.stmt()
    dyn = g.r.random() < 0.25
    ret = g.r.choice(["h", "h", "h", "(h, w * 2)", "(h, x.sin())"])
    rows = [4, 6, 2, 8] if dyn else [4, 4, 4, 4]
    body = "\n".join("        " + line for stmt in g.body for line in stmt.split("\n"))
    setup = "\n".join("    " + line for stmt in g.setup for line in stmt.split("\n"))
    between = "\n".join("        " + line for stmt in g.between for line in stmt.split("\n"))
    src = """\
def build(torch, log, S, G, L, C, H):
    m = torch.nn.Linear(4, 4)
    ln = torch.nn.LayerNorm(4)
    with torch.no_grad():
        m.weight.copy_(torch.arange(16.0).reshape(4, 4).sin() * 0.5)
        m.bias.copy_(torch.arange(4.0).cos() * 0.1)
    cnt = 0
    box = []

    def boom(tag):
        log.append(tag)
        if G['scale'] > 1.7:
            raise KeyError(tag)

{setup}

    def f(x, w, acc=[]):
        nonlocal cnt
        h = x * 1.0
{body}
        return {{ret}}

    def between():
{between}
    return f, m, between, lambda: (cnt, list(box), getattr(m, 'calls', None), ln.weight.grad)
""".format(setup=setup or "    pass", body=body, between=between)
    n = g.r.randint(3, 4)
    flip = g.r.random() < 0.3  # a later call where an input's requires_grad flips
    return {"seed": seed, "src": src.replace("{ret}", ret), "rows": rows[:n],
            "outer_hook": g.r.random() < 0.2, "gradfn_hook": g.r.random() < 0.15,
            "wgrad": [flip and i == n - 1 for i in range(n)],
            "xgrad": [not (flip and g.r.random() < 0.3 and i == n - 2) for i in range(n)],
            "nograd_call": g.r.randrange(n) if g.r.random() < 0.1 else None,
            "outer_sth": g.r.random() < 0.1,
            "xtag": [g.r.random() < 0.3 and i for i in range(n)]}  # x.tag = i on those calls


class _Counter:
    count = 0


def _plain(v: Any, torch: Any) -> Any:
    if isinstance(v, torch.Tensor):
        return ("T", tuple(v.shape), v.requires_grad, [float(a) for a in v.detach().reshape(-1).tolist()])
    if isinstance(v, (list, tuple)):
        return [_plain(a, torch) for a in v]
    if isinstance(v, dict):
        return {k: _plain(a, torch) for k, a in sorted(v.items(), key=lambda kv: str(kv[0]))}
    return v


def departs(prog: dict, backend: str | None) -> bool:
    """The one documented departure the fuzzer tolerates (docs/compile.md): under
    ``aot_eager``/``inductor`` a compiled output's ``grad_fn`` is the graph's single
    ``CompiledFunctionBackward`` node (as in PyTorch), so a hook registered on it afterwards
    sees that node's gradients, not the eager last op's."""
    return prog["gradfn_hook"] and backend in ("aot_eager", "inductor")


def _values(seed: int, rows: int, cols: int) -> list:
    """Input values from Python's RNG, so hookgrad and PyTorch see the same numbers."""
    r = random.Random(seed)
    return [[round(r.uniform(-2.0, 2.0), 3) for _ in range(cols)] for _ in range(rows)]


def observe(torch: Any, prog: dict, backend: Any, ca: bool = False,
            gradfn: bool | None = None) -> list:
    """Run `prog` eagerly (`backend` None) or compiled; one observation per call (`gradfn`:
    whether a hook goes on the output's ``grad_fn``; by default unless `departs`). `torch` is
    hookgrad or PyTorch itself (the program is written against the library it is given)."""
    if gradfn is None:
        gradfn = prog["gradfn_hook"] and not departs(prog, backend)
    ns: dict = {}
    exec(compile(prog["src"], f"<fuzz {prog['seed']} {backend} {ca}>", "exec"), ns)  # noqa: S102
    log: list = []
    S: dict = {}
    G = {"scale": 1.0, "shift": 0.25, "sizes": [1, 2]}
    L: list = []
    C = type("C", (_Counter,), {})
    H: dict = {}
    out = []
    try:
        f, m, between, peek = ns["build"](torch, log, S, G, L, C, H)
        run = f if backend is None else torch.compile(f, backend=backend)
        for i, rows in enumerate(prog["rows"]):
            x = torch.tensor(_values(1000 + i, rows, 4), requires_grad=prog["xgrad"][i])
            w = torch.tensor(_values(2000 + i, 1, 4)[0], requires_grad=prog["wgrad"][i])
            if prog["xtag"][i]:
                x.tag = prog["xtag"][i]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    sth = (torch.autograd.graph.saved_tensors_hooks(
                        lambda t: (log.append("opack"), t)[1],
                        lambda t: (log.append("ounpack"), t)[1])
                        if prog["outer_sth"] else contextlib.nullcontext())
                    mode = torch.no_grad() if prog["nograd_call"] == i else contextlib.nullcontext()
                    with sth, mode:
                        res = run(x, w)
                    r = res[0] if isinstance(res, tuple) else res
                    # (PyTorch 2.13 segfaults in backward when a hook is registered on a view
                    # whose view was modified in place: `cat(..)[:n]`, then `r[:, 1:3].mul_(2)`)
                    if prog["outer_hook"] and r.requires_grad and not (
                            r._base is not None and r._version > 0):
                        r.register_hook(lambda g: log.append(("outer", g.shape[0])))
                    if gradfn and r.grad_fn is not None:
                        r.grad_fn.register_hook(lambda gi, go: log.append(("gf", len(gi), len(go))))
                    ctx = (torch._dynamo.compiled_autograd._enable(torch.compile(backend="eager"))
                           if ca else contextlib.nullcontext())
                    if r.requires_grad:
                        with ctx:
                            r.sum().backward()
                    retained = {k: v.grad for k, v in S.items()
                                if k.startswith("r") and isinstance(v, torch.Tensor)}
                obs = (res, x, x.grad, w, w.grad, m.weight.grad, m.bias.grad, retained, list(log),
                       {k: v for k, v in S.items() if not k.startswith("r")}, list(L), C.count,
                       C.__dict__.get("items"), peek())
                out.append(_plain(obs, torch))
            except Exception as e:  # noqa: BLE001 - the exception type is observed
                out.append(("raised", type(e).__name__, list(log)))
                break
            log.clear()
            m.zero_grad()
            between()
    finally:
        for h in H.values():  # global module hooks must not outlive the program
            h.remove()
    return out


def same(a: Any, b: Any) -> bool:
    """Structural equality with a float tolerance (backends may reorder float sums)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b)) or math.isclose(
            a, b, rel_tol=1e-4, abs_tol=1e-5)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def _in_float64(lib: Any, prog: dict, backend: Any = None, ca: bool = False,
                gradfn: bool | None = None) -> list:
    """A run in float64: the comparison with PyTorch, and the second look at a float32
    difference (programs near a cancellation, e.g. ``layer_norm`` of saturated values, differ
    by rounding alone; a stale or missing value differs in float64 too)."""
    before = lib.get_default_dtype()
    lib.set_default_dtype(lib.float64)
    try:
        return observe(lib, prog, backend, ca, gradfn)
    finally:
        lib.set_default_dtype(before)


def run_program(torch: Any, seed: int, oracle: Any = None, modes: tuple = MODES) -> list[str]:
    """Every mode in which program `seed` differs from eager (its failures); with `oracle`
    (PyTorch itself) also whether hookgrad's eager run differs from PyTorch's eager run."""
    prog = generate(seed)
    ref = observe(torch, prog, None)
    bad = []
    if oracle is not None and not same(*(_in_float64(lib, prog) for lib in (oracle, torch))):
        bad.append(f"seed {seed}: eager differs from PyTorch eager")
    for backend, ca in modes:
        torch._dynamo.reset()
        got = observe(torch, prog, backend, ca)
        want = observe(torch, prog, None, gradfn=False) if departs(prog, backend) else ref
        if not same(want, got):
            torch._dynamo.reset()
            gradfn = False if departs(prog, backend) else None
            got = _in_float64(torch, prog, backend, ca)
            want = _in_float64(torch, prog, None, gradfn=gradfn)
        if not same(want, got):
            name = getattr(backend, "__name__", backend)
            bad.append(f"seed {seed}: {name}{' + compiled autograd' if ca else ''}")
        torch._dynamo.reset()
    return bad
