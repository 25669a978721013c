"""Compiled autograd as a graph (spec §10): hooks, sizes and scalars as runtime inputs.

Every scenario runs under ``compiled_autograd._enable(<compiler>)`` on PyTorch and on hookgrad
and compares gradients, hook logs (order and arguments) and the captures counter. PyTorch's
compiler is ``torch.compile(backend="eager")`` (its aot_eager and inductor do not import in
this environment); fullgraph is left off where PyTorch's own hooks (``retain_grad``) are C++
functions dynamo cannot trace.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

import numpy as np
import pytest

import hookgrad
from tests.compile._libs import both, compiled_autograd, dynamo, is_torch, plain

# PyTorch's compiled autograd warns about non-leaf .grad reads while faking tensors, and dynamo
# warns on the graph breaks its C++ hooks (retain_grad) cause; neither is hookgrad's.
pytestmark = [pytest.mark.filterwarnings("ignore:The .grad attribute:UserWarning:torch.*"),
              pytest.mark.filterwarnings("ignore::UserWarning:torch._dynamo.*")]


@pytest.fixture(autouse=True)
def _fresh_counters(torch):
    torch._dynamo.utils.counters.clear()  # conftest resets torch's caches, not its counters
    from torch._dynamo import compiled_autograd as torch_ca
    torch_ca.reset()


def _ca(lib: Any, compiler: Any = None) -> Any:
    return compiled_autograd(lib)._enable(compiler or lib.compile(backend="eager"))


def _captures(lib: Any) -> int:
    return dynamo(lib).utils.counters["compiled_autograd"]["captures"]


def _val(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, (tuple, list)):
        return [_val(x) for x in v]
    return plain(v)


def test_hook_order_and_arguments(torch):
    """Tensor pre-hooks, node pre/post hooks, post-accumulate hooks: one log, eager's order."""
    def scenario(lib: Any) -> dict:
        log: list = []
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: log.append(("x_pre", _val(g))))
        x.register_post_accumulate_grad_hook(lambda t: log.append(("x_post", _val(t.grad))))
        w.register_hook(lambda g: g * 2)
        y = x * w
        y.register_hook(lambda g: (log.append(("y1", _val(g))), g + 1)[1])
        y.register_hook(lambda g: log.append(("y2", _val(g))))
        z = y.sin()
        z.grad_fn.register_prehook(lambda go: log.append(("sin_pre", _val(go))))
        z.grad_fn.register_hook(lambda gi, go: (log.append(("sin_post", _val(gi), _val(go))),
                                                (gi[0] * 3,))[1])
        with _ca(lib):
            (z * z).sum().backward()
        return {"log": log, "x": plain(x.grad), "w": plain(w.grad), "captures": _captures(lib)}
    ref, got = both(torch, scenario)
    assert got == ref and got["captures"] == 1 and len(got["log"]) == 6


def test_new_hook_objects_do_not_recapture(torch):
    def scenario(lib: Any) -> dict:
        grads = []
        with _ca(lib):
            for k in range(4):
                x = lib.tensor([1.0, -2.0], requires_grad=True)
                y = x * 2
                y.register_hook(functools.partial(lambda g, k: g * k, k=k))
                y.sum().backward()
                grads.append(plain(x.grad))
        return {"grads": grads, "captures": _captures(lib)}
    ref, got = both(torch, scenario)
    assert got == ref == {"grads": [[0.0, 0.0], [2.0, 2.0], [4.0, 4.0], [6.0, 6.0]],
                          "captures": 1}


def test_different_shapes_and_scalars_hit_the_cache(torch):
    def scenario(lib: Any) -> dict:
        grads = []
        with _ca(lib):
            for n, p in ((2, 2.0), (3, 3.0), (5, 0.5)):
                x = lib.linspace(0.5, 1.5, n).requires_grad_()
                y = (x.pow(2.0) * p).view(n, 1).expand(n, 2).sum(0)
                y.sum().backward()
                grads.append(plain(x.grad))
        return {"grads": grads, "captures": _captures(lib)}
    ref, got = both(torch, scenario)
    assert got == ref and got["captures"] == 1


def test_float_node_attributes_are_part_of_the_key(torch):
    """PyTorch keys a node's saved Scalar (pow's exponent): one capture per exponent."""
    def scenario(lib: Any) -> dict:
        grads = []
        with _ca(lib):
            for p in (2.0, 3.0, 0.5, 3.0):
                x = lib.tensor([0.5, 1.5], requires_grad=True)
                x.pow(p).sum().backward()
                grads.append(plain(x.grad))
        return {"grads": grads, "captures": _captures(lib)}
    ref, got = both(torch, scenario)
    assert got == ref and got["captures"] == 3


def test_structure_or_hook_layout_change_recaptures(torch):
    def scenario(lib: Any) -> list:
        seen = []
        with _ca(lib):
            for layout in ("plain", "plain", "hooked", "hooked", "deeper"):
                x = lib.ones(3, requires_grad=True)
                y = x * 2
                if layout == "hooked":
                    y.register_hook(lambda g: g * 2)
                if layout == "deeper":
                    y = y.exp()
                y.sum().backward()
                seen.append((plain(x.grad), _captures(lib)))
        return seen
    ref, got = both(torch, scenario)
    assert got == ref and [c for _, c in got] == [1, 1, 2, 2, 3]


def test_grad_none_or_set_is_part_of_the_key(torch):
    def scenario(lib: Any) -> list:
        x = lib.ones(3, requires_grad=True)
        out = []
        with _ca(lib):
            for _ in range(3):
                (x * 2).sum().backward()
                out.append((plain(x.grad), _captures(lib)))
        return out
    ref, got = both(torch, scenario)
    assert got == ref and [c for _, c in got] == [1, 2, 2]


def test_post_accumulate_hooks_see_the_accumulated_grad(torch):
    def scenario(lib: Any) -> dict:
        log: list = []
        ws = [lib.tensor([1.0, 2.0], requires_grad=True) for _ in range(2)]
        for i, w in enumerate(ws):
            def hook(t: Any, i: int = i) -> None:
                log.append((i, plain(t.grad)))
                t.grad.mul_(10)
            w.register_post_accumulate_grad_hook(hook)
        with _ca(lib):
            for step in range(2):
                (ws[0] * ws[1] * (step + 1)).sum().backward()
        return {"log": log, "grads": [plain(w.grad) for w in ws], "captures": _captures(lib)}
    ref, got = both(torch, scenario)
    assert got == ref and got["captures"] == 2


def test_retain_grad(torch):
    def scenario(lib: Any) -> dict:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with _ca(lib):
            y = x * 2
            y.retain_grad()
            z = y * y
            z.retain_grad()
            z.sum().backward()
            first = [plain(y.grad), plain(z.grad), plain(x.grad)]
            y2 = x * 2
            y2.retain_grad()
            (y2 * y2 * y2).sum().backward()
        return {"first": first, "second": [plain(y2.grad), plain(x.grad)],
                "captures": _captures(lib)}
    ref, got = both(torch, scenario)
    assert got == ref


def test_saved_tensor_hooks(torch):
    def scenario(lib: Any) -> dict:
        log: list = []

        def pack(t: Any) -> Any:
            log.append(("pack", plain(t)))
            return t * 1

        def unpack(t: Any) -> Any:
            log.append(("unpack", plain(t)))
            return t
        grads = []
        with _ca(lib):
            for scale in (1.0, 2.0):
                x = lib.tensor([0.5, 1.0], requires_grad=True)
                with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
                    y = (x * scale).sin()
                y.register_hook(lambda g: (log.append(("hook", plain(g))), g)[1])
                y.sum().backward()
                grads.append(plain(x.grad))
        return {"log": log, "grads": grads, "captures": _captures(lib)}
    ref, got = both(torch, scenario)
    assert got == ref and got["captures"] == 1


def test_multiple_roots_and_queue_callback(torch):
    def scenario(lib: Any) -> dict:
        log: list = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)

        def hook(g: Any) -> None:
            lib.autograd.Variable._execution_engine.queue_callback(
                lambda: log.append(("callback", x.grad * 1)))
            log.append(("hook", g * 1))  # a tensor: tolist() does not trace under fullgraph
        x.register_hook(hook)
        with _ca(lib, lib.compile(backend="eager", fullgraph=True)):  # PyTorch needs fullgraph
            a = x * 3
            b = x.exp()
            lib.autograd.backward([a.sum(), b.sum()])
        log = [(k, v if isinstance(v, list) else plain(v)) for k, v in log]
        return {"log": log, "grad": plain(x.grad), "captures": _captures(lib)}
    ref, got = both(torch, scenario)
    assert got == ref and got["captures"] == 1


def test_module_full_backward_hooks(torch):
    def scenario(lib: Any) -> dict:
        lib.manual_seed(0)
        log: list = []
        lin = lib.nn.Linear(3, 2)
        with lib.no_grad():
            lin.weight.copy_(lib.tensor([[1.0, -1.0, 0.5], [0.25, 2.0, -0.5]]))
            lin.bias.fill_(0.1)
        lin.register_full_backward_pre_hook(lambda m, go: log.append(("pre", _val(go))))
        lin.register_full_backward_hook(lambda m, gi, go: log.append(("bw", _val(gi),
                                                                        _val(go))))
        with _ca(lib):
            for _ in range(2):
                x = lib.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
                lin(x).tanh().sum().backward()
        return {"log": log, "x": plain(x.grad), "w": plain(lin.weight.grad)}
    ref, got = both(torch, scenario)
    assert got == ref


def test_backward_twice_raises_as_eager(torch):
    def scenario(lib: Any) -> list:
        out = []
        with _ca(lib):
            x = lib.ones(2, requires_grad=True)
            y = (x * x).sum()
            y.backward()
            try:
                y.backward()
            except RuntimeError as e:
                out.append("second time" in str(e))
        return out
    ref, got = both(torch, scenario)
    assert got == ref == [True]


def test_hook_results_are_validated_as_in_eager():
    """PyTorch's compiled autograd accepts a hook's wrongly shaped gradient; hookgrad keeps
    eager's checks (hooks.md §1.4), so a compiled pass never computes what eager would refuse."""
    x = hookgrad.ones(2, requires_grad=True)
    with _ca(hookgrad):
        z = x.exp()
        z.register_hook(lambda g: g.sum())
        with pytest.raises(RuntimeError, match="has changed the size of value"):
            z.sum().backward()
        w = x.exp()
        w.register_hook(lambda g: 3)
        with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
            w.sum().backward()


def test_retain_graph_runs_twice(torch):
    def scenario(lib: Any) -> list:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with _ca(lib):
            y = (x.exp() * x).sum()
            y.backward(retain_graph=True)
            y.backward()
        return plain(x.grad)
    ref, got = both(torch, scenario)
    assert got == ref


def test_hook_code_frames_under_a_counting_compiler(torch):
    """Spec §10.3: hooks are inputs (1 capture), the compiler recompiles per hook code."""
    def scenario(lib: Any) -> dict:
        cnt = dynamo(lib).testing.CompileCounter()
        hooks = [lambda g: g * 2, lambda g: g + 1, lambda g: g - 3]
        grads = []
        with _ca(lib, lib.compile(backend=cnt, fullgraph=True)):
            for hook in hooks + hooks[:1]:
                x = lib.tensor([1.0, 2.0], requires_grad=True)
                y = x.sin()
                y.register_hook(hook)
                y.sum().backward()
                grads.append(plain(x.grad))
        return {"grads": grads, "frames": cnt.frame_count, "captures": _captures(lib)}
    ref, got = both(torch, scenario)
    assert got == ref and got["frames"] == 3 and got["captures"] == 1


def test_reentrant_backward_in_a_hook_runs_eagerly(torch):
    def scenario(lib: Any) -> dict:
        inner = lib.tensor([2.0], requires_grad=True)
        x = lib.tensor([1.0, 3.0], requires_grad=True)

        def hook(g: Any) -> None:
            with lib.enable_grad():  # hooks run with grad mode off, eager or compiled
                (inner * inner).sum().backward()
        x.register_hook(hook)
        with _ca(lib):
            (x * x).sum().backward()
        return {"x": plain(x.grad), "inner": plain(inner.grad)}
    ref, got = both(torch, scenario)
    assert got == ref


def test_custom_function_backward_is_called_by_the_graph(torch):
    """A custom Function's node is a runtime input the graph calls (``call_backward``)."""
    def scenario(lib: Any) -> dict:
        log: list = []

        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx: Any, x: Any, k: float) -> Any:
                ctx.save_for_backward(x)
                ctx.k = k
                return x * k

            @staticmethod
            def backward(ctx: Any, g: Any) -> Any:
                (x,) = ctx.saved_tensors
                log.append(("backward", ctx.k))
                return g * ctx.k + x * 0, None
        grads = []
        with _ca(lib):
            for k in (2.0, 3.0):
                x = lib.tensor([1.0, 2.0], requires_grad=True)
                y = Scale.apply(x, k)
                y.register_hook(lambda g: (log.append(("hook", plain(g))), g)[1])
                y.sin().sum().backward()
                grads.append(plain(x.grad))
        return {"log": log, "grads": grads, "captures": _captures(lib)}
    ref, got = both(torch, scenario)
    assert got == ref and got["captures"] == 1


@pytest.mark.filterwarnings("ignore:Anomaly Detection has been enabled:UserWarning")
def test_anomaly_mode_falls_back_to_eager():
    x = hookgrad.tensor([1.0, 2.0], requires_grad=True)
    with _ca(hookgrad), hookgrad.autograd.detect_anomaly():
        (x * x).sum().backward()
    assert plain(x.grad) == [2.0, 4.0]
    counters = hookgrad._dynamo.utils.counters
    assert counters["compiled_autograd"]["captures"] == 0
    assert "anomaly" in next(iter(counters["compiled_autograd_fallback"]))


def test_inputs_argument_falls_back_to_eager():
    x = hookgrad.ones(2, requires_grad=True)
    w = hookgrad.ones(2, requires_grad=True)
    with _ca(hookgrad):
        (x * w).sum().backward(inputs=[x])
    assert plain(x.grad) == [1.0, 1.0] and w.grad is None
    assert "inputs=" in next(iter(hookgrad._dynamo.utils.counters["compiled_autograd_fallback"]))


def test_graph_structure_matches_pytorch(torch):
    """The captured graph: five placeholders; hook calls of each kind where PyTorch puts them."""
    def scenario(lib: Any) -> list:
        graphs: list = []

        def compiler(gm: Any) -> Any:
            graphs.append(gm)
            return gm
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: None)
        y = x * x
        y.register_hook(lambda g: g * 2)
        with _ca(lib, compiler):
            (y * 3).sum().backward()
        nodes = list(graphs[0].graph.nodes)
        kinds = [n.kwargs["hook_type"] for n in nodes if n.kwargs.get("hook_type")]
        holders = [n.name for n in nodes if n.op == "placeholder"]
        return [holders, kinds]
    ref, got = both(torch, scenario)
    assert got == ref == [["inputs", "sizes", "scalars", "hooks", "packed_data"],
                          ["tensor_pre_hook", "post_acc_grad_hook"]]


def test_graph_code_runs_without_the_engine(monkeypatch):
    """The compiled callable computes the pass itself: the eager engine is never entered."""
    from hookgrad.autograd import engine

    def no_engine(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the eager engine ran")
    x = hookgrad.tensor([1.0, 2.0], requires_grad=True)
    ref = (x.exp() * x).sum()
    want = plain(hookgrad.autograd.grad(ref, x)[0])
    monkeypatch.setattr(engine, "execute", no_engine)
    graphs: list = []
    with _ca(hookgrad, lambda gm: graphs.append(gm) or gm):
        (x.exp() * x).sum().backward()
    assert plain(x.grad) == want
    ops = [getattr(n.target, "__name__", "") for n in graphs[0].graph.nodes]
    assert "MulBackward0" in ops and "ExpBackward0" in ops and "mul_backward0" in graphs[0].code
    assert not is_torch(hookgrad)


def test_grad_kept_by_a_hook_is_not_aliased_by_accumulation(torch):
    """A gradient a hook keeps must not become ``.grad``'s memory (accumulation is in place)."""
    def scenario(lib: Any) -> dict:
        kept: list = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: kept.append(g * 2) or kept[-1])
        with _ca(lib):
            for _ in range(3):
                (x * x).sum().backward()
        return {"kept": [plain(k) for k in kept], "grad": plain(x.grad)}
    ref, got = both(torch, scenario)
    assert got == ref and got["kept"] == [[4.0, 8.0]] * 3


def test_multi_grad_hooks(torch):
    """Multi-grad hooks keep per-pass state on the running graph task: CA provides one."""
    def scenario(lib: Any) -> dict:
        log: list = []
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0], requires_grad=True)
        graph = lib.autograd.graph
        graph.register_multi_grad_hook((a, b), lambda gs: log.append([_val(g) for g in gs]))
        graph.register_multi_grad_hook((a, b), lambda g: log.append(("any", _val(g))),
                                       mode="any")
        with _ca(lib):
            (a * 2).sum().backward()
            ((a * b).sum() + b.sum()).backward()
        return {"log": log, "a": plain(a.grad), "b": plain(b.grad), "captures": _captures(lib)}
    ref, got = both(torch, scenario)
    assert got == ref and len(got["log"]) == 4


def test_training_steps_with_an_optimizer(torch):
    def scenario(lib: Any) -> dict:
        model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 3))
        with lib.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(lib.linspace(-1, 1, p.numel()).reshape(p.shape) * (0.3 + 0.1 * i))
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x = lib.linspace(-2, 2, 20).reshape(5, 4)
        y = lib.tensor([0, 1, 2, 1, 0])
        losses = []
        with _ca(lib):
            for _ in range(4):
                opt.zero_grad()
                loss = lib.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                losses.append(round(loss.item(), 5))
        return {"losses": losses, "w": plain(model[0].weight), "captures": _captures(lib)}
    ref, got = both(torch, scenario)
    assert got == ref and got["captures"] == 1


def test_cache_is_keyed_by_structure_not_by_compiler(torch):
    """A later context with another compiler reuses the first capture until ``reset()``."""
    def scenario(lib: Any) -> dict:
        called: list = []
        for i in range(3):
            if i == 2:
                compiled_autograd(lib).reset()
            with _ca(lib, lambda gm, i=i: called.append(i) or gm):
                x = lib.ones(3, requires_grad=True)
                (x * 2).sum().backward()
        return {"called": called, "captures": _captures(lib), "grad": plain(x.grad)}
    ref, got = both(torch, scenario)
    assert got == ref == {"called": [0, 2], "captures": 2, "grad": [2.0, 2.0, 2.0]}


def test_in_place_on_a_view_and_node_hooks_on_it(torch):
    """CopySlices (an in-place write through a view) and hooks on that node."""
    def scenario(lib: Any) -> dict:
        log: list = []
        x = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
        with _ca(lib):
            for _ in range(2):
                y = x * 1
                y[1:].mul_(x[:2])
                y.grad_fn.register_prehook(lambda go: log.append(("pre", _val(go))))
                y.exp().sum().backward()
        return {"log": log, "grad": plain(x.grad), "captures": _captures(lib)}
    ref, got = both(torch, scenario)
    assert got == ref and got["captures"] == 2


def test_backward_in_threads():
    """Per-thread state: concurrent passes under compiled autograd each get their gradients."""
    import threading

    results: dict = {}

    def work(k: int) -> None:
        for _ in range(20):
            x = hookgrad.tensor([1.0, 2.0], requires_grad=True)
            y = x * k
            y.register_hook(lambda g: g * k)
            y.sum().backward()
        results[k] = plain(x.grad)
    with _ca(hookgrad):
        threads = [threading.Thread(target=work, args=(k,)) for k in (2, 3, 5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert results == {2: [4.0, 4.0], 3: [9.0, 9.0], 5: [25.0, 25.0]}


def test_config_switch_with_compiled_forward_matches_eager():
    """``config.compiled_autograd`` with ``compile(model)``: the optimised forward's
    ``CompiledFunctionBackward`` node runs inside the CA graph (``call_backward``)."""
    def run(ca: bool) -> list:
        hookgrad.manual_seed(0)
        model = hookgrad.nn.Sequential(hookgrad.nn.Linear(4, 16), hookgrad.nn.ReLU(),
                                       hookgrad.nn.Linear(16, 3))
        opt = hookgrad.optim.SGD(model.parameters(), lr=0.5)
        x = hookgrad.randn(32, 4)
        y = hookgrad.randint(0, 3, (32,))
        step_model = hookgrad.compile(model) if ca else model
        losses = []
        with hookgrad._dynamo.config.patch(compiled_autograd=ca):
            for _ in range(4):
                opt.zero_grad()
                loss = hookgrad.nn.functional.cross_entropy(step_model(x), y)
                loss.backward()
                opt.step()
                losses.append(loss.item())
        return losses
    assert run(True) == run(False)
    counters = hookgrad._dynamo.utils.counters
    assert counters["compiled_autograd"]["captures"] == 2 and not counters[
        "compiled_autograd_fallback"]


def test_ddp_under_compiled_autograd_equals_eager():
    """DDP's readiness (post-accumulate hooks), final callback and polling inside CA graphs."""
    from hookgrad.nn.parallel import DistributedDataParallel
    from hookgrad.testing.distributed import run_ranks
    from tests.distributed.scenarios import batch, loss_of, make_model

    def fn(rank: int, world: int) -> list:
        ddp = DistributedDataParallel(make_model(hookgrad, rank))
        out = []
        for it in range(2):
            ddp.zero_grad()
            x, y = batch(hookgrad, rank, it)
            loss_of(hookgrad, ddp, x, y).backward()
            out.append([p.grad.numpy().tolist() for p in ddp.parameters()])
        return out
    eager = run_ranks(fn, 2)
    with _ca(hookgrad, lambda gm: gm):
        compiled = run_ranks(fn, 2)
    assert compiled == eager and compiled[0] == compiled[1]
    counters = hookgrad._dynamo.utils.counters
    assert counters["compiled_autograd"]["captures"] >= 1
    assert not counters["compiled_autograd_fallback"]


def test_hooks_are_collected_when_the_pass_starts(torch):
    """Like PyTorch's compiled autograd (and unlike the eager engine), a hook registered during
    the pass does not fire in it and a hook removed during the pass still fires."""
    def scenario(lib: Any) -> list:
        log: list = []
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y = a * 2
        z = y * 3
        late = a.register_hook(lambda g: log.append("a-early"))

        def on_z(g: Any) -> None:
            log.append("z")
            late.remove()
            a.register_hook(lambda g: log.append("a-late"))
        z.register_hook(on_z)
        with _ca(lib):
            z.sum().backward()
        return log
    ref, got = both(torch, scenario)
    assert got == ref == ["z", "a-early"]


@pytest.mark.parametrize("backend", ["eager", "inductor"])
def test_data_dependent_rules_under_a_tracing_compiler(backend):
    """relu's and max's backward depend on the data: every step under ``hookgrad.compile``
    (the compiler traces the CA graph once) must still follow this step's values."""
    def run(ca: bool) -> list:
        hookgrad.manual_seed(0)
        w = hookgrad.randn(6, 6, requires_grad=True)
        out = []
        ctx = _ca(hookgrad, hookgrad.compile(backend=backend, fullgraph=True)) if ca else \
            contextlib.nullcontext()
        with ctx:
            for step in range(4):
                x = hookgrad.randn(5, 6) * (step - 1.5)
                (x.mm(w).relu().amax(1) * 2).sum().backward()
                out.append(w.grad.numpy().copy())
        return out
    for a, b in zip(run(False), run(True), strict=True):
        np.testing.assert_array_equal(a, b)


def _eager_and_ca(scenario: Any) -> tuple:
    eager = scenario()
    with _ca(hookgrad):
        ca = scenario()
    return eager, ca


def test_saved_values_are_freed_node_by_node_as_in_eager():
    """A node's saved values are freed right after it runs (not at the end of the pass)."""
    def scenario() -> list:
        log: list = []
        x = hookgrad.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        z = y * y

        def on_leaf(g: Any) -> None:
            try:
                z.grad_fn._saved_self  # noqa: B018 - the access is the test
                log.append("still saved")
            except RuntimeError as e:
                log.append("second time" in str(e))
        x.register_hook(on_leaf)
        z.sum().backward()
        return log
    eager, ca = _eager_and_ca(scenario)
    assert ca == eager == [True]


def test_a_failed_pass_frees_only_the_nodes_that_ran():
    """A hook raising before any node ran leaves the graph intact: the retry works, as eager."""
    def scenario() -> list:
        calls: list = []
        x = hookgrad.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).exp()

        def flaky(g: Any) -> None:
            calls.append(len(calls))
            if len(calls) == 1:
                raise ValueError("first call fails")
        y.register_hook(flaky)
        with pytest.raises(ValueError, match="first call fails"):
            y.sum().backward()
        y.sum().backward()
        return [calls, plain(x.grad)]
    eager, ca = _eager_and_ca(scenario)
    assert ca == eager and ca[0] == [0, 1]


def test_hook_trace_sees_hooks_run_by_the_graph():
    from hookgrad.hooktools import HookTrace

    def scenario() -> tuple:
        x = hookgrad.ones(2, requires_grad=True)
        with HookTrace() as trace:
            y = x * 2
            y.register_hook(lambda g: g * 3)
            x.register_post_accumulate_grad_hook(lambda t: None)
            y.sum().backward()
        return [(e.kind, e.target) for e in trace.events], plain(x.grad)
    eager, ca = _eager_and_ca(scenario)
    assert ca == eager and len(ca[0]) == 2
    assert hookgrad._dynamo.utils.counters["compiled_autograd"]["captures"] == 1


def test_compiler_fn_gets_an_fx_graph_module(torch):
    """As in PyTorch, the compiler function receives an fx ``GraphModule``: it can print and
    lint it and return any callable, here an fx ``Interpreter`` running the graph."""
    def scenario(lib: Any) -> dict:
        seen: list = []

        def compiler(gm: Any) -> Any:
            gm.graph.lint()
            readable = gm.print_readable(print_output=False)
            seen.append({
                "fx": isinstance(gm, lib.fx.GraphModule) and isinstance(gm.graph, lib.fx.Graph),
                "signature": "def forward(self, inputs, sizes, scalars, hooks, packed_data" in
                             gm.code,
                "class": readable.split("(")[0],
                "graph": str(gm.graph).split("\n")[0],
            })
            interp = lib.fx.Interpreter(gm)
            return lambda *args: list(interp.run(*args))  # PyTorch wants a list back
        log: list = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: log.append(("acc", plain(t.grad))))
        y = x * x
        y.register_hook(lambda g: log.append(("y", plain(g))) or g * 2)
        with _ca(lib, compiler):
            for _ in range(2):
                x.grad = None
                (y * 3).sum().backward(retain_graph=True)
        return {"seen": seen, "log": log, "grad": plain(x.grad)}
    ref, got = both(torch, scenario)
    # (PyTorch numbers its classes from 0 per process, hookgrad per capture from 1)
    for s in ref["seen"] + got["seen"]:
        s["class"] = s["class"].rstrip("0123456789")
    assert got == ref
    assert got["seen"] == [{"fx": True, "signature": True, "class": "class CompiledAutograd",
                            "graph": "graph():"}]
    assert got["grad"] == [12.0, 24.0]
