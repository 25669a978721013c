"""Custom backends receive a ``hookgrad.fx.GraphModule`` as ``torch.compile``'s receive a
``torch.fx.GraphModule``: the same node kinds and targets, printable, and the callable the
backend returns is what every later call runs."""

from __future__ import annotations

import contextlib
import io
import operator
from typing import Any

import numpy as np
import pytest
import torch

import hookgrad
import hookgrad.fx

# Each program: lib -> (function, inputs). Written once, run on torch and on hookgrad.


def _basic(lib: Any) -> Any:
    lin = lib.nn.Linear(3, 4)

    def f(x: Any, y: Any) -> Any:
        a = x.relu() + y * 2
        b = lib.sin(a).sum(0)
        c = lin(a.t().t()[:, :3])
        return b, c.mean(), a.view(-1)
    return f, (lib.randn(2, 3, requires_grad=True), lib.randn(2, 3))


def _operators(lib: Any) -> Any:
    def f(x: Any, y: Any) -> Any:
        a = 2 - x
        b = -a * x ** 2 / (y + 3)
        c = 1 / (b + 5) - y @ x.t().sum(1, keepdim=True)
        return (c > 0) | (c < -1), c % 2, c // 3, c.abs()
    return f, (lib.randn(3, 3, requires_grad=True), lib.randn(3, 3))


def _functions(lib: Any) -> Any:
    F = lib.nn.functional

    def f(x: Any, y: Any) -> Any:
        z = lib.cat([x, y], 0).reshape(2, -1)
        z = F.softmax(lib.tanh(z), dim=-1) + lib.sigmoid(z)
        w = lib.where(z > 0.2, z, lib.zeros_like(z))
        return lib.matmul(w, w.t()).unsqueeze(0).expand(2, 2, 2).sum(dim=(1, 2))
    return f, (lib.randn(2, 3, requires_grad=True), lib.randn(2, 3))


def _inplace(lib: Any) -> Any:
    def f(x: Any) -> Any:
        y = x * 1
        y.add_(1)
        y.mul_(2)
        y += 3
        return y.exp()[0]
    return f, (lib.randn(3, 2, requires_grad=True),)


def _mlp(lib: Any) -> Any:
    nn = lib.nn
    net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))

    def f(x: Any) -> Any:
        return net(x).pow(2).mean()
    return f, (lib.randn(5, 4),)


PROGRAMS = {"basic": _basic, "operators": _operators, "functions": _functions,
            "inplace": _inplace, "mlp": _mlp}


def _record(lib: Any, program: Any, seed: int) -> tuple[list, list, list, Any]:
    """Compile `program` with a recording backend; (graphs, example inputs, results, calls)."""
    lib.manual_seed(seed)
    fn, inputs = program(lib)
    graphs: list = []
    runs = [0]

    def backend(gm: Any, example_inputs: list) -> Any:
        graphs.append((gm, list(example_inputs)))

        def run(*args: Any) -> Any:
            runs[0] += 1
            return gm.forward(*args)
        return run
    compiled = lib.compile(fn, backend=backend)
    results = [compiled(*inputs) for _ in range(2)]
    return graphs, results, runs[0], inputs


def _target_name(node: Any) -> str:
    if node.op in ("placeholder", "output", "get_attr"):
        return ""
    if node.op == "call_method":
        return node.target
    return node.target.__name__


def _kinds(gm: Any) -> list[tuple[str, str]]:
    return [(n.op, _target_name(n)) for n in gm.graph.nodes]


def _tabular(gm: Any) -> tuple:
    text = io.StringIO()
    try:
        with contextlib.redirect_stdout(text):
            gm.graph.print_tabular()
    except ImportError as e:
        return (type(e),)
    return (None, text.getvalue())


def _flat(v: Any) -> list:
    return [x for item in v for x in _flat(item)] if isinstance(v, (tuple, list)) else [v]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_custom_backend_gets_fx_graph_like_torch(name: str) -> None:
    program = PROGRAMS[name]
    tg, tres, truns, tin = _record(torch, program, 0)
    hg, hres, hruns, hin = _record(hookgrad, program, 0)
    assert len(hg) == len(tg) == 1
    gm, example = hg[0]
    assert isinstance(gm, hookgrad.fx.GraphModule)
    assert _kinds(gm) == _kinds(tg[0][0])
    assert len(example) == len(tg[0][1])
    assert all(isinstance(e, hookgrad.Tensor) for e in example)
    # (torch orders lifted parameters by first access, hookgrad by first use in an op)
    assert sorted(tuple(e.shape) for e in example) == sorted(tuple(e.shape) for e in tg[0][1])
    # the backend's callable is what runs; hookgrad's first call is the trace, which runs the
    # function itself (docs/compile.md, "Custom backends"), so it runs from the second call on
    assert truns == 2 and hruns == 1
    hookgrad.manual_seed(0)
    fn, _ = program(hookgrad)  # the same parameters (same seed), run eagerly on the same inputs
    for h, e in zip(_flat(hres[-1]), _flat(fn(*hin))):
        np.testing.assert_allclose(h.detach().numpy(), e.detach().numpy(), rtol=1e-6)
    gm.graph.lint()
    assert _tabular(gm) == _tabular(tg[0][0])[:1]  # both print, or both lack `tabulate`
    assert gm.code.strip().startswith("def forward(self")


def _differentiable(t: Any) -> bool:
    # floor division has no derivative (PyTorch raises on its backward too)
    return t.requires_grad and "floor" not in type(t.grad_fn).__name__.lower() and \
        "notimplemented" not in type(t.grad_fn).__name__.lower()


def test_fx_graph_runs_gradients_like_eager() -> None:
    """The received GraphModule's forward records autograd like the eager ops it names."""
    for name, program in PROGRAMS.items():
        hookgrad.manual_seed(1)
        fn, inputs = program(hookgrad)
        hookgrad._dynamo.reset()
        out = hookgrad.compile(fn, backend=lambda gm, ex: gm.forward)(*inputs)
        loss = sum(o.float().sum() for o in _flat(out) if _differentiable(o))
        if not isinstance(loss, hookgrad.Tensor) or not any(i.requires_grad for i in inputs):
            continue
        grads = hookgrad.autograd.grad(loss, [i for i in inputs if i.requires_grad])
        hookgrad.manual_seed(1)
        fn, inputs = program(hookgrad)
        eloss = sum(o.float().sum() for o in _flat(fn(*inputs)) if _differentiable(o))
        egrads = hookgrad.autograd.grad(eloss, [i for i in inputs if i.requires_grad])
        for g, e in zip(grads, egrads):
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-6, err_msg=name)


def test_targets_are_public_objects() -> None:
    fn, inputs = _basic(hookgrad)
    seen: list = []
    hookgrad.compile(fn, backend=lambda gm, ex: seen.append(gm) or gm.forward)(*inputs)
    targets = [n.target for n in seen[0].graph.nodes if n.op == "call_function"]
    assert operator.mul in targets and operator.add in targets and operator.getitem in targets
    assert hookgrad.sin in targets and hookgrad.nn.functional.linear in targets


def test_registered_backend_gets_fx_graph_and_builtins_accept_it() -> None:
    seen: list = []

    @hookgrad._dynamo.register_backend(name="fxc_recording")
    def recording(gm: Any, example_inputs: list) -> Any:
        seen.append(gm)
        # a custom backend may hand the fx graph on to a built-in one, as in torch
        return hookgrad._dynamo.lookup_backend("aot_eager")(gm, example_inputs)
    x = hookgrad.randn(4, requires_grad=True)
    f = hookgrad.compile(lambda t: (t.sin() * 3).sum(), backend="fxc_recording")
    out = f(x)
    out.backward()
    assert isinstance(seen[0], hookgrad.fx.GraphModule)
    np.testing.assert_allclose(x.grad.numpy(), (3 * np.cos(x.detach().numpy())), rtol=1e-6)


def test_backend_result_is_what_runs() -> None:
    """Whatever callable the backend returns runs (here: one that adds 1) on the calls after
    the trace call."""
    def backend(gm: Any, example_inputs: list) -> Any:
        return lambda *args: tuple(o + 1 for o in gm.forward(*args))
    for lib in (torch, hookgrad):
        f = lib.compile(lambda t: t * 2, backend=backend)
        f(lib.ones(2))
        assert f(lib.ones(2)).tolist() == [3.0, 3.0]
        assert f(lib.zeros(2)).tolist() == [1.0, 1.0]


PRINTED = {"operators": _operators, "functions": _functions, "inplace": _inplace}


@pytest.mark.parametrize("name", sorted(PRINTED))
def test_printed_graph_equals_torchs(name: str) -> None:
    """``print_readable`` (normalised as PyTorch's own compile tests normalise it: comments
    stripped), ``str(graph)`` and ``code`` equal torch's once ``hookgrad.`` reads ``torch.``."""
    from torch._dynamo.testing import normalize_gm
    tg, *_ = _record(torch, PRINTED[name], 0)
    hg, *_ = _record(hookgrad, PRINTED[name], 0)
    tgm, hgm = tg[0][0], hg[0][0]

    def same(text: str) -> str:
        return text.replace("hookgrad.", "torch.")
    assert same(normalize_gm(hgm.print_readable(print_output=False))) == \
        normalize_gm(tgm.print_readable(print_output=False))
    assert same(str(hgm.graph)) == str(tgm.graph)
    assert same(hgm.code) == tgm.code


def test_built_in_backends_get_primitive_fx_graphs() -> None:
    """One IR: the graph the built-in backends and the codegen read is a ``hookgrad.fx`` graph
    too (primitive level: one node per primitive `bind` ran, hook operators, hook bodies as
    child GraphModules); the user-level graph custom backends get is a second fx graph made
    from it by the `to_fx` pass, as dynamo's and AOT's graphs are two graphs in PyTorch."""
    from hookgrad.compile.backends.backends import internal
    from hookgrad.compile.backends.to_fx import to_fx

    seen: list = []

    @internal
    def recording(gm: Any, example_inputs: list) -> Any:
        seen.append(gm)
        return gm.forward

    def f(x: Any) -> Any:
        y = x * 2
        y.register_hook(lambda g: g * 3)
        return hookgrad.tanh(y).sum()
    x = hookgrad.ones(3, requires_grad=True)
    compiled = hookgrad.compile(f, backend=recording)
    for _ in range(2):
        x.grad = None
        compiled(x).backward()
        np.testing.assert_allclose(x.grad.numpy(), 6 * (1 - np.tanh(2.0) ** 2) * np.ones(3),
                                   rtol=1e-6)
    (gm,) = seen
    assert isinstance(gm, hookgrad.fx.GraphModule) and isinstance(gm.graph, hookgrad.fx.Graph)
    gm.graph.lint()
    ops = [n.op for n in gm.graph.nodes]
    assert ops[0] == "placeholder" and ops[-1] == "output"
    names = [n.name for n in gm.graph.nodes]
    assert "register_hook" in names and "mul" in names and "tanh" in names
    body = gm.get_submodule("hook_body_0")
    assert isinstance(body, hookgrad.fx.GraphModule)
    body.graph.lint()
    assert "class hook_body_0(torch.nn.Module)" in gm.print_readable(print_output=False)
    # fx's use lists hold on compile's graph: the hooked value feeds tanh
    hook = next(n for n in gm.graph.nodes if n.name == "register_hook")
    assert [u.name for u in hook.users] == ["tanh"]
    # an fx Interpreter runs the primitive graph as well
    out = hookgrad.fx.Interpreter(gm).run(hookgrad.ones(3, requires_grad=True))
    np.testing.assert_allclose(out[0].item(), 3 * np.tanh(2.0), rtol=1e-6)
    user = to_fx(gm)
    user.graph.lint()
    assert user.graph is not gm.graph and isinstance(user, hookgrad.fx.GraphModule)
    assert [n.target for n in user.graph.nodes if n.op == "call_function"][:1] == [operator.mul]
