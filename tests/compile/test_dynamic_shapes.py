"""Automatic dynamic shapes (spec compile.md §6.3), checked against ``torch.compile``.

Every scenario runs on PyTorch 2.13 and on hookgrad and compares frame counts, values and
gradients. Where the two op counts differ the test says why.
"""

from __future__ import annotations

from typing import Any

import pytest

import hookgrad
from tests.compile._libs import both, dynamo, plain

pytestmark = pytest.mark.filterwarnings("ignore:The .grad attribute:UserWarning:torch.*")


def _frames(lib: Any, fn: Any, calls: list, **kw: Any) -> dict:
    """Frame counts and outputs of `fn` compiled with a counter, called with each of `calls`."""
    cnt = dynamo(lib).testing.CompileCounter()
    opt = lib.compile(fn, backend=cnt, **kw)
    frames, outs = [], []
    for make in calls:
        args = make(lib)
        out = opt(*args)
        ref = fn(*args)
        outs.append(_obs(out))
        assert _obs(out) == _obs(ref)
        frames.append(cnt.frame_count)
    return {"frames": frames, "outs": outs}


def _obs(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_obs(v) for v in value)
    if hasattr(value, "detach"):
        return plain(value)
    return (type(value).__name__, value)


def _vec(n: int) -> Any:
    return lambda lib: (lib.arange(n, dtype=lib.float32),)


def _mat(*shape: int) -> Any:
    return lambda lib: (lib.arange(_prod(shape), dtype=lib.float32).reshape(*shape),)


def _prod(shape: tuple) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _affine(x: Any) -> Any:
    return x * 2 + 1


@pytest.mark.parametrize("sizes, dynamic, frames", [
    ((3, 4, 5), None, [1, 2, 2]),
    ((3, 4, 5), True, [1, 1, 1]),
    ((3, 4, 5), False, [1, 2, 3]),
    ((3, 4, 1, 0, 7), None, [1, 2, 3, 4, 4]),  # sizes 0 and 1 are specialised
    ((1, 2, 3), None, [1, 2, 2]),
])
def test_automatic_dynamic_vector(torch, sizes, dynamic, frames):
    def scenario(lib: Any) -> dict:
        return _frames(lib, _affine, [_vec(n) for n in sizes], dynamic=dynamic)
    ref, got = both(torch, scenario)
    assert got == ref and got["frames"] == frames


def test_each_changed_dim_becomes_dynamic(torch):
    def scenario(lib: Any) -> dict:
        return _frames(lib, _affine, [_mat(3, 4), _mat(5, 4), _mat(5, 6), _mat(7, 8)])
    ref, got = both(torch, scenario)
    assert got == ref and got["frames"] == [1, 2, 3, 3]


def test_dtype_and_rank_changes_still_recompile(torch):
    def scenario(lib: Any) -> dict:
        def double(n: int) -> Any:
            return lambda lib: (lib.arange(n, dtype=lib.float64),)
        a = _frames(lib, _affine, [_vec(3), _vec(4), double(5), double(6)])
        dynamo(lib).reset()
        b = _frames(lib, _affine, [_vec(3), _vec(4), _mat(5, 2), _mat(6, 3)])
        return {"dtype": a, "rank": b}
    ref, got = both(torch, scenario)
    assert got == ref and got["dtype"]["frames"] == got["rank"]["frames"] == [1, 2, 3, 3]


def test_config_switches(torch):
    def scenario(lib: Any) -> dict:
        calls = [_vec(3), _vec(4), _vec(5)]
        with dynamo(lib).config.patch(automatic_dynamic_shapes=False):
            off = _frames(lib, _affine, calls)["frames"]
        dynamo(lib).reset()
        with dynamo(lib).config.patch(assume_static_by_default=False):
            eager_dyn = _frames(lib, _affine, calls)["frames"]
        return {"off": off, "all_dynamic": eager_dyn}
    ref, got = both(torch, scenario)
    assert got == ref == {"off": [1, 2, 3], "all_dynamic": [1, 1, 1]}


def test_mark_dynamic_and_mark_static(torch):
    def scenario(lib: Any) -> dict:
        def marked(n: int, how: str) -> Any:
            def make(lib: Any) -> tuple:
                x = lib.arange(n, dtype=lib.float32)
                getattr(dynamo(lib), how)(x, 0)
                return (x,)
            return make
        a = _frames(lib, _affine, [marked(3, "mark_dynamic"), _vec(4), _vec(5)])
        dynamo(lib).reset()
        b = _frames(lib, _affine, [_vec(3), _vec(4), marked(5, "mark_static")])
        return {"dynamic": a["frames"], "static": b["frames"]}
    ref, got = both(torch, scenario)
    assert got == ref == {"dynamic": [1, 1, 1], "static": [1, 2, 3]}


@pytest.mark.parametrize("values, dynamic, frames", [
    ((2, 3, 4), None, [1, 2, 2]),
    ((2, 3, 1, 0), None, [1, 2, 2, 2]),  # int arguments: 0 and 1 are not specialised
    ((2, 3), True, [1, 1]),
    ((2, 3, 4), False, [1, 2, 3]),
    ((2.0, 3.0, 4.0), None, [1, 2, 2]),  # PyTorch 2.13 makes float arguments dynamic too
])
def test_scalar_arguments_become_dynamic(torch, values, dynamic, frames):
    def scenario(lib: Any) -> dict:
        def fn(x: Any, n: Any) -> Any:
            return x * n, n * 2
        calls = [lambda lib, v=v: (lib.ones(3), v) for v in values]
        return _frames(lib, fn, calls, dynamic=dynamic)
    ref, got = both(torch, scenario)
    assert got == ref and got["frames"] == frames


def test_returned_symbolic_int_is_a_plain_int():
    opt = hookgrad.compile(lambda x, n: (x + n, n * 2), backend="eager")
    for n in (2, 3, 4):
        _, m = opt(hookgrad.ones(2), n)
        assert type(m) is int and m == 2 * n


def test_control_flow_on_a_size_specialises(torch):
    def scenario(lib: Any) -> dict:
        def fn(x: Any) -> Any:
            if x.shape[0] > 4:
                return x * 2
            return x * 3
        return _frames(lib, fn, [_vec(n) for n in (3, 4, 5, 6, 2)])
    ref, got = both(torch, scenario)
    assert got == ref and got["frames"] == [1, 2, 3, 3, 3]


def test_control_flow_on_an_int_specialises(torch):
    def scenario(lib: Any) -> dict:
        def fn(x: Any, n: int) -> Any:
            if n > 3:
                return x * 2
            return x * 3
        calls = [lambda lib, v=v: (lib.ones(3), v) for v in (2, 3, 4, 5, 1)]
        return _frames(lib, fn, calls)
    ref, got = both(torch, scenario)
    assert got == ref and got["frames"] == [1, 2, 3, 3, 3]


def test_sizes_flow_into_shape_arguments(torch):
    def scenario(lib: Any) -> dict:
        def view(x: Any) -> Any:
            return x.view(x.shape[0], -1).sum(1)

        def sliced(x: Any) -> Any:
            return x[: x.shape[0] // 2]

        def factory(x: Any) -> Any:
            return lib.ones(x.shape[0]) + x

        def int_view(x: Any, n: int) -> Any:
            return x.view(n, -1)
        return {
            "view": _frames(lib, view, [_mat(3, 2, 2), _mat(4, 2, 2), _mat(5, 2, 2)]),
            "slice": _frames(lib, sliced, [_vec(4), _vec(6), _vec(8)]),
            "factory": _frames(lib, factory, [_vec(3), _vec(4), _vec(5)]),
            "int_view": _frames(lib, int_view, [
                lambda lib, n=n: (lib.ones(n, 6), n) for n in (2, 3, 4)]),
        }
    ref, got = both(torch, scenario)
    assert got == ref
    assert {k: v["frames"] for k, v in got.items()} == {
        "view": [1, 2, 2], "slice": [1, 2, 2], "factory": [1, 2, 2], "int_view": [1, 2, 2]}


def test_dynamic_graph_runs_sizes_it_never_traced():
    """The dynamic frame's graph (not a retrace) computes the new sizes: ops counted once."""
    cnt = hookgrad._dynamo.testing.CompileCounter()

    def fn(x: Any) -> Any:
        return x.flatten(1).view(x.shape[0] * 2, -1).mean(0)
    opt = hookgrad.compile(fn, backend=cnt)
    for b in (2, 3, 5, 8, 13):
        x = hookgrad.arange(b * 12, dtype=hookgrad.float32).reshape(b, 3, 4)
        assert plain(opt(x)) == plain(fn(x))
    assert cnt.frame_count == 2
    entry = next(e for e in opt._hookgrad_cache if e.dynamic)
    assert any("size()[0]" in str(src) for src in entry.sources)


def _mlp_scenario(lib: Any, backend: str) -> dict:
    nn = lib.nn
    mod = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    with lib.no_grad():
        for p in mod.parameters():
            p.copy_(lib.linspace(-1, 1, p.numel()).reshape(p.shape))
    cnt = dynamo(lib).testing.CompileCounter()

    def fn(x: Any, scale: float) -> Any:
        h = mod(x)
        h.register_hook(lambda g: g * 2)
        y = h.flatten().view(x.shape[0], -1) * scale
        return y.mean(), y.shape[0] + 1
    opt = lib.compile(fn, backend=cnt if backend == "counter" else backend)
    outs = []
    for b, s in [(3, 2.0), (5, 3.0), (7, 4.0), (2, 1.5)]:
        x = (lib.arange(b * 4, dtype=lib.float32).reshape(b, 4) / 10).requires_grad_()
        out, n = opt(x, s)
        out.backward()
        outs.append((plain(out), n, plain(x.grad), plain(mod[0].weight.grad)))
        mod.zero_grad()
    return {"outs": outs, "frames": cnt.frame_count if backend == "counter" else None}


def test_mlp_with_hook_changing_batch_size(torch):
    ref, got = both(torch, lambda lib: _mlp_scenario(lib, "counter"))
    assert got == ref and got["frames"] == 2


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_hookgrad_backends_run_dynamic_graphs(torch, backend):
    ref = _mlp_scenario(torch, "eager")
    got = _mlp_scenario(hookgrad, backend)
    assert got["outs"] == ref["outs"]


def test_compiled_module_batch_sizes(torch):
    def scenario(lib: Any) -> dict:
        lin = lib.nn.Linear(3, 2)
        with lib.no_grad():
            lin.weight.copy_(lib.linspace(-1, 1, 6).reshape(2, 3))
            lin.bias.fill_(0.5)
        cnt = dynamo(lib).testing.CompileCounter()
        opt = lib.compile(lin, backend=cnt)
        outs = [plain(opt(lib.ones(b, 3) * b)) for b in (2, 3, 4, 6)]
        return {"outs": outs, "frames": cnt.frame_count}
    ref, got = both(torch, scenario)
    assert got == ref and got["frames"] == 2


def test_symbolic_value_stored_into_the_world_is_plain():
    class Box:
        n = 0
    box = Box()

    def fn(x: Any, n: int) -> Any:
        box.n = n + 1
        return x * n
    opt = hookgrad.compile(fn, backend="eager")
    for n in (2, 3, 4, 5):
        opt(hookgrad.ones(2), n)
        assert type(box.n) is int and box.n == n + 1


def test_intermediate_size_in_control_flow_breaks_to_eager():
    cnt = hookgrad._dynamo.testing.CompileCounter()

    def fn(x: Any) -> Any:
        y = x.repeat(2)
        if y.shape[0] > 8:
            return y * 2
        return y * 3
    opt = hookgrad.compile(fn, backend=cnt)
    for n in (3, 4, 5, 6):
        x = hookgrad.arange(n, dtype=hookgrad.float32)
        assert plain(opt(x)) == plain(fn(x))
    assert cnt.frame_count == 1  # static first frame; the dynamic trace breaks (eager, D)


def test_python_uses_of_a_dynamic_int_specialise(torch):
    """``lst[n]``, ``d[n]`` and ``math.exp(f)`` read the concrete value: guarded, never baked."""
    import math

    def scenario(lib: Any) -> dict:
        lst, table = [10.0, 20.0, 30.0, 40.0], {0: 1.0, 1: 2.0, 2: 3.0, 3: 4.0}
        out = {}
        for name, fn in {"list": lambda x, n: x * lst[n], "dict": lambda x, n: x * table[n],
                         "math": lambda x, n: x * math.exp(n)}.items():
            dynamo(lib).reset()
            calls = [lambda lib, v=v: (lib.ones(1), v) for v in (0, 1, 2, 3, 1)]
            out[name] = _frames(lib, fn, calls)
        return out
    ref, got = both(torch, scenario)
    assert got == ref
    assert all(v["frames"] == [1, 2, 3, 4, 4] for v in got.values())


def test_shape_slices_and_sums_stay_symbolic(torch):
    def scenario(lib: Any) -> dict:
        def fn(x: Any) -> Any:
            return x.reshape(x.shape[1:] + x.shape[:1]) * x.shape[0]
        return _frames(lib, fn, [_mat(n, 2) for n in (2, 3, 4, 5)])
    ref, got = both(torch, scenario)
    assert got["outs"] == ref["outs"]
    # PyTorch's reshape decomposition guards ``x.size()[0] % 2 == 0`` (its recompile log says
    # so) and gives [1, 2, 3, 3]; hookgrad's reshape needs no such guard
    assert got["frames"] == [1, 2, 2, 2] and ref["frames"] == [1, 2, 3, 3]


def test_dynamic_scalar_captured_by_hooks(torch):
    """A hook closing over a dynamic float: on an input it runs after the trace (its cell gets
    the plain number); on an intermediate its body is speculated (the value is guarded)."""
    def scenario(lib: Any) -> dict:
        out = {}

        def on_input(x: Any, s: float) -> Any:
            x.register_hook(lambda g: g * s)
            return (x * 2).sum()

        def on_intermediate(x: Any, s: float) -> Any:
            y = x * 2
            y.register_hook(lambda g: g * s)
            return y.sum()
        for name, fn in (("input", on_input), ("intermediate", on_intermediate)):
            dynamo(lib).reset()
            cnt = dynamo(lib).testing.CompileCounter()
            opt = lib.compile(fn, backend=cnt)
            grads = []
            for s in (2.0, 3.0, 4.0, 3.0):
                x = lib.ones(2, requires_grad=True)
                opt(x, s).backward()
                grads.append(plain(x.grad))
            out[name] = grads
        return out
    ref, got = both(torch, scenario)
    assert got == ref
    assert got["input"][1] == [6.0, 6.0] and got["intermediate"][2] == [8.0, 8.0]


def test_static_entry_is_preferred_over_the_dynamic_one():
    """A ragged last batch makes a dynamic entry; full batches keep running the static graph
    (which a backend may have specialised further)."""
    ran: list = []

    def backend(gm: Any, example_inputs: list) -> Any:
        index = len(ran)
        ran.append([])
        return lambda *args: (ran[index].append(args[0].shape[0]), gm.forward(*args))[1]
    opt = hookgrad.compile(lambda x: x * 2, backend=backend)
    for n in (4, 3, 4, 5, 4):
        assert plain(opt(hookgrad.ones(n))) == [2.0] * n
    assert ran == [[4, 4], [5]]  # (a first call is the traced eager call)


def test_cnn_training_steps_with_changing_batch(torch):
    """Conv, batch norm (running stats are buffer mutations), pooling, a view on a symbolic
    batch size and cross entropy: one static and one dynamic frame, PyTorch's numbers."""
    def scenario(lib: Any) -> dict:
        nn, F = lib.nn, lib.nn.functional

        class Net(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.conv = nn.Conv2d(1, 2, 3, padding=1)
                self.bn = nn.BatchNorm2d(2)
                self.fc = nn.Linear(2 * 4 * 4, 3)

            def forward(self, x: Any) -> Any:
                h = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
                return self.fc(h.view(h.size(0), -1))
        net = Net()
        with lib.no_grad():
            for p in net.parameters():
                p.copy_(lib.linspace(-0.5, 0.5, p.numel()).reshape(p.shape))
        cnt = dynamo(lib).testing.CompileCounter()
        opt = lib.compile(net, backend=cnt)
        out = []
        for b in (4, 6, 3, 8):
            x = lib.linspace(-1, 1, b * 64).reshape(b, 1, 8, 8)
            loss = F.cross_entropy(opt(x), lib.arange(b) % 3)
            loss.backward()
            out.append((plain(loss), plain(net.conv.weight.grad), plain(net.bn.running_mean)))
            net.zero_grad()
        return {"out": out, "frames": cnt.frame_count}
    ref, got = both(torch, scenario)
    assert got == ref and got["frames"] == 2


def test_gru_and_split_with_changing_batch_and_length(torch):
    """hookgrad's own module code (a GRU builds its zero state from the batch size) runs as one
    node per module call in a dynamic trace; a ``split`` whose pieces the code iterates over
    specialises the sizes it depends on. Values and gradients equal PyTorch's."""
    def scenario(lib: Any) -> list:
        rnn = lib.nn.GRU(3, 4, batch_first=True)
        with lib.no_grad():
            for p in rnn.parameters():
                p.copy_(lib.linspace(-0.5, 0.5, p.numel()).reshape(p.shape))

        def fn(x: Any) -> Any:
            out, h = rnn(x)
            parts = lib.split(out, 2, dim=1)
            return lib.cat([p.mean(1) for p in parts], 1).sum() + h.sum()
        opt = lib.compile(fn, backend="eager")
        got = []
        for b, t in ((2, 4), (3, 4), (3, 6), (2, 8), (5, 4)):
            x = lib.linspace(-1, 1, b * t * 3).reshape(b, t, 3).requires_grad_()
            y = opt(x)
            y.backward()
            got.append((plain(y), plain(x.grad)))
        return got
    ref, got = both(torch, scenario)
    assert got == ref


def test_module_instances_share_a_dynamic_artifact():
    """The module of a composite ``forward`` node is a graph input: each instance runs its own
    parameters through the shared dynamic graph."""
    cnt = hookgrad._dynamo.testing.CompileCounter()
    layers = [hookgrad.nn.Linear(2, 1) for _ in range(3)]
    with hookgrad.no_grad():
        for i, layer in enumerate(layers):
            layer.weight.fill_(float(i + 1))
            layer.bias.fill_(0.0)
    for b in (2, 3, 4):
        for i, layer in enumerate(layers):
            out = hookgrad.compile(layer, backend=cnt)(hookgrad.ones(b, 2))
            assert plain(out) == [[2.0 * (i + 1)]] * b
    assert cnt.frame_count == 2
