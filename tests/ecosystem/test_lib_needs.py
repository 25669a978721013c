"""What real libraries (opacus, Lightning, backpack, ...) rely on at import and right after.

Each test is an oracle test of the hookgrad behaviour a library needed, run without the library
itself (tests/ecosystem/test_libs.py runs the libraries when they are installed).
"""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _w(L, shape=(7, 3), seed=0):
    rng = np.random.default_rng(seed)
    return L.tensor(rng.standard_normal(shape)).requires_grad_()


_BAGS = [
    dict(input=[[1, 2, 3], [4, 0, 6]], mode="sum"),
    dict(input=[[1, 2, 3], [4, 0, 6]], mode="mean", padding_idx=0),
    dict(input=[[1, 2, 3], [4, 0, 0]], mode="max", padding_idx=0),
    dict(input=[1, 2, 4, 5, 6, 1], offsets=[0, 2, 2], mode="mean"),
    dict(input=[1, 2, 4, 5, 6, 1], offsets=[0, 3, 6], mode="sum", include_last_offset=True),
    dict(input=[1, 2, 4, 5, 6, 1], offsets=[0, 1, 4], mode="max"),
    dict(input=[1, 2, 4, 5], offsets=[0, 2], mode="sum", per_sample_weights=[.5, 2., -1., 3.]),
    dict(input=[3, 3, 0, 0], offsets=[0, 2], mode="mean", padding_idx=-7),
]


@pytest.mark.parametrize("case", range(len(_BAGS)))
def test_embedding_bag_values_and_grads(torch, case):
    def scenario(L):
        spec = dict(_BAGS[case])
        w = _w(L)
        kw = {k: v for k, v in spec.items() if k not in ("input", "offsets", "per_sample_weights")}
        offsets = L.tensor(spec["offsets"]) if "offsets" in spec else None
        psw = spec.get("per_sample_weights")
        psw = L.tensor(psw, dtype=L.float64).requires_grad_() if psw is not None else None
        out = L.nn.functional.embedding_bag(L.tensor(spec["input"]), w, offsets,
                                            per_sample_weights=psw, **kw)
        (out * L.arange(out.numel(), dtype=L.float64).reshape(out.shape)).sum().backward()
        return out.detach().numpy(), w.grad.numpy(), None if psw is None else psw.grad.numpy()

    ref, got = scenario(torch), scenario(hookgrad)
    for r, g in zip(ref, got):
        if r is None:
            assert g is None
        else:
            np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bad", [
    dict(input=[1, 2], offsets=None),
    dict(input=[[1, 2]], offsets=[0]),
    dict(input=[1, 2], offsets=[0], mode="mean", per_sample_weights=[1.0, 1.0]),
    dict(input=[1, 2], offsets=[0], mode="median"),
])
def test_embedding_bag_errors(torch, bad):
    def scenario(L):
        offsets = None if bad["offsets"] is None else L.tensor(bad["offsets"])
        psw = bad.get("per_sample_weights")
        try:
            L.nn.functional.embedding_bag(
                L.tensor(bad["input"]), _w(L), offsets, mode=bad.get("mode", "mean"),
                per_sample_weights=None if psw is None else L.tensor(psw, dtype=L.float64))
        except Exception as e:  # noqa: BLE001 - the type and message are compared
            return type(e).__name__, str(e).split(" of type ")[0]
        return None

    assert scenario(hookgrad) == scenario(torch) != None  # noqa: E711


def test_embedding_bag_module(torch):
    def scenario(L):
        L.manual_seed(0)
        bag = L.nn.EmbeddingBag(10, 3, mode="max", padding_idx=-1)
        pre = L.nn.EmbeddingBag.from_pretrained(L.ones(4, 2), mode="sum")
        return (repr(bag), repr(pre), bag.weight[9].tolist(), pre.weight.requires_grad,
                L.nn.modules.sparse.EmbeddingBag is L.nn.EmbeddingBag,
                L.nn.EmbeddingBag.__module__.split(".", 1)[1],
                pre(L.tensor([[0, 1], [2, 3]])).tolist())

    assert scenario(hookgrad) == scenario(torch)


# ----------------------------------------------------------------- torch.utils._pytree (Lightning)
def _pytree_report(p):
    import collections

    pt = collections.namedtuple("Pt", "x y")
    out = []
    for tree in [{"a": [1, (2, 3)], "b": None}, pt(1, [2]), collections.OrderedDict(a=1),
                 collections.defaultdict(list, a=1), collections.deque([1, 2], maxlen=3), 5, [],
                 {}]:
        leaves, spec = p.tree_flatten(tree)
        out.append((leaves, repr(spec), spec.num_nodes, spec.num_leaves, spec.num_children,
                    spec.is_leaf(), p.tree_unflatten(leaves, spec) == tree,
                    getattr(p._get_node_type(tree), "__name__", None),
                    p._get_node_type(tree) in p.SUPPORTED_NODES))
    s = p.tree_structure({"a": [1, (2, 3)]})
    out.append((s == p.tree_structure({"a": [0, (0, 0)]}),
                hash(s) == hash(p.tree_structure({"a": [0, (0, 0)]})), p.treespec_pprint(s),
                p.tree_map(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)]),
                p.tree_map_only(int, lambda x: -x, [1, "a"]), p.LeafSpec().num_leaves,
                p.tree_leaves([1, [2]], is_leaf=lambda x: isinstance(x, list) and len(x) == 1)))
    flatten = p.SUPPORTED_NODES[dict].flatten_fn
    out.append((flatten({"k": 1}), p.NodeDef._fields[:3]))
    for bad in (lambda: p.tree_unflatten([1, 2], s), lambda: p.tree_unflatten([1], 5)):
        try:
            bad()
        except (ValueError, TypeError) as e:
            out.append((type(e).__name__, str(e)))
    return out


@pytest.mark.filterwarnings("ignore::FutureWarning")  # PyTorch deprecates LeafSpec()
def test_pytree_matches(torch):
    import importlib

    ref = _pytree_report(importlib.import_module("torch.utils._pytree"))
    got = _pytree_report(importlib.import_module("hookgrad.utils._pytree"))
    assert got == ref


def test_pytree_flattens_size(torch):
    import importlib

    for lib in (torch, hookgrad):
        p = importlib.import_module(lib.__name__ + ".utils._pytree")
        assert p.tree_flatten(lib.Size([2, 3]))[0] == [2, 3]
        assert p.tree_unflatten([4, 5], p.tree_structure(lib.Size([2, 3]))) == lib.Size([4, 5])


# ------------------------------------------------------------- TorchFunctionMode (Lightning)
def _mode_log(L):
    import importlib

    ov = importlib.import_module(L.__name__ + ".overrides")
    log = []

    class Mode(ov.TorchFunctionMode):
        def __init__(self, tag):
            super().__init__()
            self.tag = tag

        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append((self.tag, func.__name__, func is L.add or func is L.Tensor.add))
            if func.__name__ == "mul" and self.tag == "outer":
                L.neg(args[0])  # both modes are off inside the outer handler: not logged
            if func.__name__ == "sum":
                return "replaced"
            return func(*args, **(kwargs or {}))

    x = L.ones(2, 2)
    with Mode("outer") as outer:
        with Mode("inner"):
            a = L.zeros(3)
            b = x * 2
            c = (x + 1, L.add(x, x), 1 - x, x[0], -x, x.add(1))
            r = x.sum(0)
            e = L.nn.functional.relu(x)
        log.append(ov._get_current_function_mode() is outer)
        y = L.tensor([1.0]) @ L.ones(1)
    log.append((ov._get_current_function_mode(), x.sum().item(), r))
    try:
        with type("Bare", (ov.TorchFunctionMode,), {})():
            L.ones(1)
    except NotImplementedError:
        log.append("NotImplementedError")
    log.append(ov.BaseTorchFunctionMode().__torch_function__(L.add, (), (x, x)).tolist())
    return log, a.tolist(), b.tolist(), [t.tolist() for t in c], e.tolist(), y.tolist()


def test_torch_function_mode_sees_calls_in_order(torch):
    assert _mode_log(hookgrad) == _mode_log(torch)


def test_torch_function_mode_leaves_no_wrapper_behind():
    before = (hookgrad.add, hookgrad.Tensor.add, hookgrad.Tensor.__add__,
              hookgrad.nn.functional.relu, hookgrad.nn.init.zeros_)
    with hookgrad.overrides.BaseTorchFunctionMode():
        assert hookgrad.add is not before[0]
    assert (hookgrad.add, hookgrad.Tensor.add, hookgrad.Tensor.__add__,
            hookgrad.nn.functional.relu, hookgrad.nn.init.zeros_) == before


# ------------------------------------------------------------ optim.swa_utils (Lightning's SWA)
def _swa_run(L):
    import importlib

    swa_utils = importlib.import_module(L.__name__ + ".optim.swa_utils")
    rng = np.random.default_rng(3)
    model = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.BatchNorm1d(4), L.nn.Linear(4, 1))
    with L.no_grad():
        for p in model.parameters():
            p.copy_(L.tensor(rng.standard_normal(tuple(p.shape))))
    model.double()
    swa = swa_utils.AveragedModel(model)
    ema = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9))
    ema1 = swa_utils.AveragedModel(model, avg_fn=swa_utils.get_ema_avg_fn(0.8),
                                   use_buffers=True)
    opt = L.optim.SGD(model.parameters(), lr=0.5)
    sched = swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3, anneal_strategy="cos")
    lrs, data = [], [L.tensor(rng.standard_normal((5, 3))) for _ in range(4)]
    for x in data:
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
        for avg in (swa, ema, ema1):
            avg.update_parameters(model)
    swa_utils.update_bn(data, swa)
    state = {k: v for k, v in sched.state_dict().items() if not k.startswith("_get")}
    out = [lrs, int(swa.n_averaged), sorted(state)]
    for avg in (swa, ema, ema1):
        out.append([t.detach().numpy() for t in avg.state_dict().values()])
    try:
        swa_utils.SWALR(opt, 0.1, anneal_strategy="exp")
    except ValueError as e:
        out.append(str(e))
    return out


def test_swa_utils_match(torch):
    ref, got = _swa_run(torch), _swa_run(hookgrad)
    assert got[:3] == ref[:3] and got[-1] == ref[-1]
    for r_list, g_list in zip(ref[3:-1], got[3:-1]):
        for r, g in zip(r_list, g_list):
            np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)


def test_profiler_names_lightning_imports(torch, tmp_path):
    import os

    for L in (torch, hookgrad):
        assert L.profiler.kineto_available() is True
        with L.autograd.profiler.emit_nvtx(enabled=False):
            pass
        with pytest.raises(AssertionError):
            with L.autograd.profiler.emit_nvtx():
                pass
        out = tmp_path / L.__name__
        with L.profiler.profile(on_trace_ready=L.profiler.tensorboard_trace_handler(
                str(out), "w0")):
            L.ones(2).add(1)
        (name,) = os.listdir(out)
        assert name.startswith("w0.") and name.endswith(".pt.trace.json")


# ------------------------------------------- devices and dtypes libraries name (accelerate, ...)
def test_device_compares_only_with_devices(torch):
    def scenario(L):
        d = L.device("cpu")
        out = [d == "cpu", d == "npu", d != "npu", d == 3, d == L.device("cpu"),
               str(L.device("meta")), L.device("cpu") != L.device("meta"), L.device("xla:1").index]
        try:
            L.device("npu")
        except RuntimeError as e:
            out.append(str(e))
        return out

    assert scenario(hookgrad) == scenario(torch)


def test_named_dtypes_exist_and_make_tensors(torch):
    for name in ("complex64", "complex128", "cfloat", "cdouble", "uint16", "uint32", "uint64"):
        ref, got = getattr(torch, name), getattr(hookgrad, name)
        assert (repr(got), got.is_complex, got.is_floating_point, got.is_signed, got.itemsize) \
            == (repr(ref), ref.is_complex, ref.is_floating_point, ref.is_signed, ref.itemsize)
    assert hookgrad.cfloat is hookgrad.complex64

    def scenario(lib):
        return [repr(t) for t in (lib.zeros(2, dtype=lib.complex64), lib.ones(2).to(lib.uint16),
                                  lib.tensor([1.0], dtype=lib.cdouble))]

    assert scenario(hookgrad) == scenario(torch)


def test_distributed_submodules_libraries_import(torch):
    import dataclasses
    import importlib

    for L in (torch, hookgrad):
        fsdp = importlib.import_module(L.__name__ + ".distributed.fsdp")
        fsdp_mod = importlib.import_module(
            L.__name__ + ".distributed.fsdp.fully_sharded_data_parallel")
        dtensor = importlib.import_module(L.__name__ + ".distributed.tensor")
        constants = importlib.import_module(L.__name__ + ".distributed.constants")
        assert fsdp_mod.FullyShardedDataParallel is fsdp.FullyShardedDataParallel
        assert not isinstance(L.nn.Linear(2, 2), (fsdp.FSDPModule, fsdp.FullyShardedDataParallel))
        assert type(L.ones(1)) is not dtensor.DTensor
        assert constants.default_pg_timeout.total_seconds() == 1800
    ref, got = importlib.import_module("torch.distributed.fsdp"), hookgrad.distributed.fsdp
    for name in ("MixedPrecision", "CPUOffload", "FullStateDictConfig", "MixedPrecisionPolicy",
                 "CPUOffloadPolicy"):
        assert [f.name for f in dataclasses.fields(getattr(got, name))] == \
            [f.name for f in dataclasses.fields(getattr(ref, name))]
    for name in ("ShardingStrategy", "BackwardPrefetch", "StateDictType", "OptimStateKeyType"):
        assert [(m.name, m.value) for m in getattr(got, name)] == \
            [(m.name, m.value) for m in getattr(ref, name)]
    with pytest.raises(NotImplementedError):
        got.fully_shard(hookgrad.nn.Linear(2, 2))
    with pytest.raises(NotImplementedError):
        hookgrad.distributed.tensor.distribute_tensor(hookgrad.ones(2))
    tref = importlib.import_module("torch.distributed.tensor")
    assert [repr(p) for p in (hookgrad.distributed.tensor.Shard(1),
                              hookgrad.distributed.tensor.Replicate(),
                              hookgrad.distributed.tensor.Partial())] == \
        [repr(p) for p in (tref.Shard(1), tref.Replicate(), tref.Partial())]


def test_pytorch_file_reader_reads_both_libraries_archives(torch, tmp_path):
    for writer in (torch, hookgrad):
        path = str(tmp_path / f"{writer.__name__}.pt")
        writer.save({"w": writer.arange(4.0)}, path)
        readers = [L.PyTorchFileReader(path) for L in (torch, hookgrad)]
        records = [set(r.get_all_records()) for r in readers]
        assert records[0] == records[1]
        assert readers[1].get_record("data.pkl") == readers[0].get_record("data.pkl")
        assert readers[1].has_record("data/0") and not readers[1].has_record("nope")
        assert readers[1].get_storage_from_record("data/0", 4, hookgrad.float32).tolist() == \
            [0.0, 1.0, 2.0, 3.0]
        with pytest.raises(RuntimeError):
            readers[1].get_record("nope")
        with pytest.raises(RuntimeError):
            readers[1].get_storage_from_record("data/0", 3, hookgrad.float32)


# ------------------------------------------------ torch._foreach_* (optimizer libraries call them)
_UNARY_FOREACH = ("abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac log log10 log1p "
                  "log2 neg reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc")
_BINARY_FOREACH = "add sub mul div maximum minimum clamp_max clamp_min pow"


def _foreach_report(L):
    def a():
        return [L.tensor([1., -2.]), L.tensor([0.5, 3., 4.])]

    def b():
        return [L.tensor([2., 2.]), L.tensor([3., 3., -1.])]

    out = []

    def rec(fn):
        try:
            r = fn()
            out.append((type(r).__name__, [t.tolist() for t in r]))
        except (RuntimeError, TypeError) as e:
            out.append((type(e).__name__, str(e).split(" - got")[0]))

    for n in _UNARY_FOREACH.split():
        for suffix in ("", "_"):
            rec(lambda: getattr(L, f"_foreach_{n}{suffix}")([t.abs() + 0.25 for t in a()]))
    for n in _BINARY_FOREACH.split():
        for other in (b(), 2.0, [2.0, 0.5], L.tensor(1.5), [1.0], L.ones(2)):
            for suffix in ("", "_"):
                rec(lambda: getattr(L, f"_foreach_{n}{suffix}")([t.abs() for t in a()], other))
    rec(lambda: L._foreach_add(a(), b(), alpha=2))
    rec(lambda: L._foreach_sub_(a(), b(), alpha=3))
    rec(lambda: L._foreach_pow(2.0, a()))
    for v in (1, 0.5, [1., 2.], L.tensor([1., 2.])):
        rec(lambda: L._foreach_addcmul(a(), a(), b(), v))
        rec(lambda: L._foreach_addcdiv_(a(), a(), b(), v))
    for w in (0.25, [0.5, 0.25], b()):
        rec(lambda: L._foreach_lerp(a(), b(), w))
        rec(lambda: L._foreach_lerp_(a(), b(), w))
    for fn in (lambda: L._foreach_max(a()), lambda: L._foreach_powsum(a(), 2),
               lambda: L._foreach_zero_(a()), lambda: L._foreach_copy_(a(), b()),
               lambda: L._foreach_clone(a()),
               lambda: L._foreach_mm([L.ones(2, 3)], [L.ones(3, 1)]),
               lambda: L._foreach_add([], []), lambda: L._foreach_add(a(), b()[:1])):
        rec(fn)
    x = [L.tensor([1., 2.], requires_grad=True)]
    L._foreach_mul(x, 3.0)[0].sum().backward()
    out.append(("grad", x[0].grad.tolist()))
    return out


def test_foreach_family_matches(torch):
    ref, got = _foreach_report(torch), _foreach_report(hookgrad)
    assert len(got) == len(ref)
    for r, g in zip(ref, got):
        assert g[0] == r[0], (r, g)
        if isinstance(r[1], str):
            assert g[1] == r[1]
        else:  # transcendental functions may differ in the last float32 bit
            for rt, gt in zip(r[1], g[1], strict=True):
                np.testing.assert_allclose(gt, rt, rtol=1e-6, atol=1e-7)


def test_fill_diagonal_matches(torch):
    def scenario(L):
        out = []
        for shape, wrap in [((3, 3), False), ((5, 2), False), ((7, 3), True), ((2, 5), True),
                            ((3, 3, 3), False), ((4, 2), True)]:
            t = L.zeros(shape)
            out.append((t.fill_diagonal_(1.5, wrap=wrap) is t, t.nonzero().tolist(),
                        t.sum().item(), t._version))
        for bad in (lambda: L.zeros(3).fill_diagonal_(1), lambda: L.zeros(2, 3, 3).fill_diagonal_(1)):
            try:
                bad()
            except RuntimeError as e:
                out.append(str(e))
        x = L.ones(3, 3, requires_grad=True)
        y = x * 2
        y.fill_diagonal_(0)
        y.sum().backward()
        out.append(x.grad.tolist())
        return out

    assert scenario(hookgrad) == scenario(torch)


# ------------------------------------------------ names transformers reaches for at import time
def test_transformers_import_time_names(torch):
    import importlib

    for L in (torch, hookgrad):
        assert L.version.cuda is None and L.version.hip is None
        assert L.finfo(L.float8_e4m3fn).max == 448.0
        pl = importlib.import_module(L.__name__ + ".distributed.tensor.placement_types")
        s = pl._StridedShard(1, split_factor=2)
        assert (repr(s), str(s), s.is_shard(), s == pl._StridedShard(1, sf=2)) == (
            "_StridedShard(dim=1, sf=2)", "_S(1, 2)", False, True)
        fc = importlib.import_module(L.__name__ + ".distributed._functional_collectives")
        t = L.ones(2)
        assert fc.wait_tensor(t) is t
        with pytest.raises(RuntimeError, match="dummy base class CUDAGraph"):
            L.cuda.CUDAGraph()
        with L.cuda.StreamContext(None):
            pass
        assert L.cuda.default_generators == ()
        mesh = importlib.import_module(L.__name__ + ".distributed.device_mesh")
        assert not isinstance(L.ones(1), mesh.DeviceMesh)
        p = importlib.import_module(L.__name__ + ".utils._pytree")
        keyed, ctx = p._dict_flatten_with_keys({"a": 1, "b": 2})
        assert ([(str(k), v) for k, v in keyed], ctx) == ([("['a']", 1), ("['b']", 2)],
                                                         ["a", "b"])
    for name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                 "float8_e8m0fnu", "bfloat16"):
        ref, got = torch.finfo(getattr(torch, name)), hookgrad.finfo(getattr(hookgrad, name))
        assert (got.bits, got.max, got.min, got.eps, got.tiny, got.resolution, repr(got)) == \
            (ref.bits, ref.max, ref.min, ref.eps, ref.tiny, ref.resolution, repr(ref))
        assert getattr(hookgrad, name).is_signed == getattr(torch, name).is_signed


def test_transform_getitem_to_index_under_vmap(torch):
    import importlib

    def scenario(L):
        mode = importlib.import_module(L.__name__ + "._dynamo._trace_wrapped_higher_order_op")
        x = L.arange(12.0).reshape(3, 4)
        with mode.TransformGetItemToIndex():
            return [L.func.vmap(lambda i: x[i])(L.tensor([1, 2])).tolist(),
                    L.func.vmap(lambda i, j: x[i, j])(L.tensor([1, 2]),
                                                      L.tensor([0, -1])).tolist(),
                    x[L.tensor(2)].tolist(), x[1:3].tolist(),
                    x[L.tensor([[0], [2]]), L.tensor([1, 3])].tolist()]

    assert scenario(hookgrad) == scenario(torch)


def test_more_import_time_modules(torch):
    import importlib

    for L in (torch, hookgrad):
        types = importlib.import_module(L.__name__ + ".types")
        assert isinstance(3.0, types._Number) and types._size is not None
        assert isinstance(L.__config__.show(), str) and isinstance(L.__config__.parallel_info(), str)

        class Iface:
            pass

        assert L.jit.interface(Iface) is not None
        zero = importlib.import_module(L.__name__ + ".distributed.optim").ZeroRedundancyOptimizer
        assert not isinstance(L.optim.SGD([L.zeros(1, requires_grad=True)], lr=0.1), zero)
    with pytest.raises(NotImplementedError):
        hookgrad.distributed.optim.ZeroRedundancyOptimizer([hookgrad.zeros(1)], hookgrad.optim.SGD)


def test_numpy_keyword_aliases(torch):
    def scenario(L):
        x = L.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
        idx = L.tensor([[0, 1, 0]])
        calls = [
            lambda: L.cat([x, x], axis=1), lambda: L.stack([x, x], axis=0),
            lambda: L.concat([x, x], axis=0), lambda: L.concatenate([x, x], axis=-1),
            lambda: L.unsqueeze(x, axis=1), lambda: L.squeeze(x[:1], axis=0),
            lambda: L.diff(x, axis=1), lambda: L.cummax(x, axis=1).values,
            lambda: L.median(x, axis=1, keepdims=True).values,
            lambda: L.count_nonzero(x, axis=0), lambda: L.narrow(x, axis=1, start=1, length=2),
            lambda: L.select(x, axis=1, index=2), lambda: L.gather(x, axis=0, index=idx),
            lambda: L.unbind(x, axis=1)[2], lambda: L.cross(L.eye(3), L.ones(3, 3), axis=1),
            lambda: L.nn.functional.cosine_similarity(x, x + 1, axis=1),
            lambda: x.diff(axis=0), lambda: x.cummin(axis=1).indices,
            lambda: x.kthvalue(2, axis=1).values, lambda: x.quantile(0.5, axis=0),
            lambda: x.repeat_interleave(2, axis=0), lambda: x.logcumsumexp(axis=1),
        ]
        return [c().tolist() for c in calls]

    ref, got = scenario(torch), scenario(hookgrad)
    for r, g in zip(ref, got, strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-6)
