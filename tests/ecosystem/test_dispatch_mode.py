"""TorchDispatchMode, torch.ops, FlopCounterMode and the profilers, compared with PyTorch."""

from __future__ import annotations

import importlib
import json

import pytest

import hookgrad
from hookgrad.utils import _python_dispatch as pd

pytestmark = pytest.mark.oracle


def _both(torch, fn):
    return fn(torch), fn(hookgrad)


def _log_mode(L):
    base = importlib.import_module(f"{L.__name__}.utils._python_dispatch").TorchDispatchMode

    class Log(base):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.names.append(str(func))
            return func(*args, **(kwargs or {}))

    return Log


# Ops whose ATen call sequence hookgrad reproduces exactly (PyTorch additionally shows an
# ``aten.detach`` after ops that save their own output; that is its implementation detail).
_SAME_SEQUENCE = {
    "mm": lambda L, x: x @ x.t(),
    "linear": lambda L, x: L.nn.functional.linear(x, x),
    "add": lambda L, x: x + x,
    "mul_scalar": lambda L, x: x * 2,
    "sum": lambda L, x: x.sum(),
    "sum_dim": lambda L, x: x.sum(1),
    "mean": lambda L, x: x.mean(),
    "view": lambda L, x: x.view(-1),
    "transpose": lambda L, x: x.transpose(0, 1),
    "cat": lambda L, x: L.cat([x, x]),
    "conv": lambda L, x: L.nn.functional.conv2d(x.view(1, 1, 3, 3), x.view(1, 1, 3, 3)),
    "max_pool": lambda L, x: L.nn.functional.max_pool2d(x.view(1, 1, 3, 3), 2),
    "bmm": lambda L, x: L.bmm(x.view(1, 3, 3), x.view(1, 3, 3)),
    "inplace": lambda L, x: x.clone().mul_(2),
    "mse": lambda L, x: L.nn.functional.mse_loss(x, x * 2),
    "layer_norm": lambda L, x: L.nn.functional.layer_norm(x, (3,)),
    "gelu": lambda L, x: L.nn.functional.gelu(x),
    "slice": lambda L, x: x[1:],
    "compare_scalar": lambda L, x: [x > 0, x == 1.5, x.ne(2), x < x],
    "where": lambda L, x: L.where(x > 0, x, -x),
}


@pytest.mark.parametrize("name", sorted(_SAME_SEQUENCE))
def test_mode_sees_the_aten_calls_pytorch_makes(torch, name):
    def scenario(L):
        x = L.arange(9.0).view(3, 3).requires_grad_()
        with _log_mode(L)() as mode:
            _SAME_SEQUENCE[name](L, x)
        return mode.names

    ref, got = _both(torch, scenario)
    assert got == ref


def test_mode_sees_backward_matmuls(torch):
    def scenario(L):
        x = L.ones(3, 3, requires_grad=True)
        w = L.ones(2, 3, requires_grad=True)
        with _log_mode(L)() as mode:
            L.nn.functional.linear(x, w).sum().backward()
        return [n for n in mode.names if n.startswith("aten.mm")]

    ref, got = _both(torch, scenario)
    assert got == ref and len(got) == 3


def test_mode_can_replace_results_and_nest():
    class Double(pd.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            return out * 2 if func is hookgrad.ops.aten.mm.default else out

    outer = _log_mode(hookgrad)()
    with outer, Double():
        y = hookgrad.ones(2, 2) @ hookgrad.ones(2, 2)
    assert y.tolist() == [[4.0, 4.0], [4.0, 4.0]]
    # the inner mode's own ops (mm, then its mul) reach the outer mode
    assert outer.names == ["aten.mm.default", "aten.mul.Tensor"]
    assert not pd.is_in_torch_dispatch_mode() and pd.ACTIVE[0] == 0


def test_mode_is_popped_inside_its_handler_and_restored_on_error():
    class Boom(pd.TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            assert pd._get_current_dispatch_mode() is None
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"), Boom():
        hookgrad.ones(2) + 1
    assert pd._get_current_dispatch_mode_stack() == [] and pd.ACTIVE[0] == 0
    assert (hookgrad.ones(2) + 1).tolist() == [2.0, 2.0]


def test_op_objects_look_like_pytorchs(torch):
    def scenario(L):
        mm = L.ops.aten.mm.default
        s = L.ops.aten.sum
        return (str(mm), repr(mm), mm.name(), mm.__name__, str(mm.overloadpacket), repr(s),
                L.ops.aten.sum.dim_IntList.name(), L.ops.aten.mm.default is mm,
                L.ops.aten.add.Tensor(L.ones(2), L.ones(2)).tolist())

    ref, got = _both(torch, scenario)
    assert got == ref


def test_unknown_op_raises_attribute_error():
    with pytest.raises(AttributeError):
        hookgrad.ops.aten.not_an_op  # noqa: B018


def test_any_namespace_exists_and_extension_libraries_are_refused(torch, tmp_path):
    """``torch.ops.<any name>`` is an (empty) namespace, as PyTorch's; ``load_library`` of a
    library that cannot be loaded raises ``OSError``, which torchvision-style loaders catch."""
    def scenario(L):
        space = L.ops.some_extension
        with pytest.raises(AttributeError) as missing:
            space.some_op  # noqa: B018
        with pytest.raises(OSError) as refused:
            L.ops.load_library(str(tmp_path / "absent.so"))
        return (L.ops.some_extension is space, type(missing.value).__name__,
                type(refused.value).__name__, set(L.ops.loaded_libraries))

    ref, got = _both(torch, scenario)
    assert got == ref


# ----------------------------------------------------------------------------- flop counter
def _flops(L, build, *shapes, backward=True):
    fc_mod = importlib.import_module(f"{L.__name__}.utils.flop_counter")
    model = build(L)
    inputs = [L.ones(*s, requires_grad=True) for s in shapes]
    fc = fc_mod.FlopCounterMode(display=False)
    with fc:
        out = model(*inputs)
        if backward:
            out.sum().backward()
    per_module = {m: {str(op): n for op, n in c.items()} for m, c in fc.get_flop_counts().items()}
    return fc.get_total_flops(), per_module


_MODELS = {
    "mlp": (lambda L: L.nn.Sequential(L.nn.Linear(3, 5), L.nn.ReLU(),
                                      L.nn.Sequential(L.nn.Linear(5, 2))), (4, 3)),
    "mlp_3d_input": (lambda L: L.nn.Sequential(L.nn.Linear(3, 5), L.nn.Linear(5, 2)), (2, 4, 3)),
    "conv": (lambda L: L.nn.Sequential(L.nn.Conv2d(2, 4, 3, padding=1), L.nn.ReLU(),
                                       L.nn.Conv2d(4, 4, 3)), (2, 2, 7, 7)),
    "conv_stride_groups": (lambda L: L.nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2),
                           (2, 4, 9, 9)),
    "conv1d": (lambda L: L.nn.Conv1d(3, 5, 4, dilation=2), (2, 3, 20)),
    "conv_transpose": (lambda L: L.nn.ConvTranspose2d(3, 2, 3, stride=2), (1, 3, 5, 5)),
    "bmm": (lambda L: (lambda a: L.bmm(a, a.transpose(1, 2))), (3, 4, 5)),
    "matmul": (lambda L: (lambda a: a @ a.transpose(-1, -2)), (2, 3, 4)),
}


@pytest.mark.parametrize("name", sorted(_MODELS))
@pytest.mark.parametrize("backward", [False, True])
def test_flop_counts_match_pytorch(torch, name, backward):
    build, shape = _MODELS[name]
    ref = _flops(torch, build, shape, backward=backward)
    got = _flops(hookgrad, build, shape, backward=backward)
    assert got == ref and ref[0] > 0


def test_attention_flops_are_pytorchs_sdpa_formula(torch):
    from torch.utils.flop_counter import sdpa_flop_count

    q = hookgrad.ones(2, 3, 5, 8)
    k = hookgrad.ones(2, 3, 7, 8)
    v = hookgrad.ones(2, 3, 7, 4)
    fc = hookgrad.utils.flop_counter.FlopCounterMode(display=False)
    with fc:
        hookgrad.nn.functional.scaled_dot_product_attention(q, k, v)
    assert fc.get_total_flops() == sdpa_flop_count(q.shape, k.shape, v.shape)


def test_flop_table_and_display(capsys):
    lin = hookgrad.nn.Sequential(hookgrad.nn.Linear(3, 5))
    with hookgrad.utils.flop_counter.FlopCounterMode(depth=1):
        lin(hookgrad.ones(4, 3))
    out = capsys.readouterr().out
    assert "Global" in out and "Sequential" in out and "aten.addmm" in out
    assert "Sequential.0" not in out  # below depth 1


def test_custom_flop_formula():
    fcm = hookgrad.utils.flop_counter

    def relu_flop(x_shape, out_shape=None, **kw):
        return x_shape[0] * x_shape[1]

    with fcm.FlopCounterMode(display=False, custom_mapping={hookgrad.ops.aten.relu: relu_flop}) as fc:
        hookgrad.ones(3, 4).relu()
    assert fc.get_total_flops() == 12


# ------------------------------------------------------------------------------- profilers
def test_autograd_profiler_events_match_pytorchs_ops(torch):
    def scenario(L):
        prof_mod = importlib.import_module(f"{L.__name__}.autograd.profiler")
        x = L.ones(2, 3)
        w = L.ones(4, 3)
        with prof_mod.profile() as prof:
            with prof_mod.record_function("block"):
                L.nn.functional.linear(x, w)
                L.nn.functional.linear(x, w)
        avg = {e.key: e.count for e in prof.key_averages()}
        table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10)
        block = next(e for e in prof.function_events if e.name == "block")
        children_ok = block.cpu_time_total >= block.self_cpu_time_total >= 0
        return ({k: avg[k] for k in ("block", "aten::t") if k in avg},
                "Self CPU time total" in table, "# of Calls" in table, children_ok)

    ref, got = _both(torch, scenario)
    assert got == ref
    assert got[0] == {"block": 1, "aten::t": 2}


def test_profiler_schedule_and_trace(tmp_path):
    from hookgrad.profiler import ProfilerActivity, profile, record_function, schedule

    ready = []
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=2),
                 on_trace_ready=lambda p: ready.append(sorted(e.key for e in p.key_averages()))
                 ) as p:
        for _ in range(5):
            with record_function("step"):
                hookgrad.ones(2) @ hookgrad.ones(2)
            p.step()
    assert ready == [["aten::dot", "step"]]
    assert [e.count for e in p.key_averages()] == [2, 2]
    path = tmp_path / "trace.json"
    p.export_chrome_trace(str(path))
    assert {e["name"] for e in json.loads(path.read_text())["traceEvents"]} == {"step", "aten::dot"}


def test_torch_profiler_schedule_matches_pytorch(torch):
    def scenario(L):
        prof = importlib.import_module(f"{L.__name__}.profiler")
        fn = prof.schedule(wait=1, warmup=2, active=2, repeat=2, skip_first=1)
        return [fn(i).name for i in range(14)]

    ref, got = _both(torch, scenario)
    assert got == ref


def test_profiler_results_before_exit_raise():
    prof = hookgrad.autograd.profiler.profile()
    with pytest.raises(RuntimeError):
        prof.key_averages()


def test_registry_keys_composite_packets_and_disable_dispatch(torch):
    def scenario(L):
        fc_mod = importlib.import_module(f"{L.__name__}.utils.flop_counter")
        fc = fc_mod.FlopCounterMode(display=False)
        aten = L.ops.aten
        keys = (aten.mm in fc.flop_registry, aten.convolution_backward in fc.flop_registry,
                aten.relu in fc.flop_registry, aten.mm.default._overloadpacket is aten.mm,
                str(aten.matmul), str(aten._convolution))
        a = L.ones(2)
        with _log_mode(L)() as mode:
            with L._C._DisableTorchDispatch():
                a + a
            a * a
        return keys, mode.names

    ref, got = _both(torch, scenario)
    assert got == ref


def test_composite_packets_cannot_be_called():
    with pytest.raises(NotImplementedError, match="not a hookgrad primitive"):
        hookgrad.ops.aten.matmul(hookgrad.ones(2, 2), hookgrad.ones(2, 2))
