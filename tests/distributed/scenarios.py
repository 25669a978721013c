"""DDP scenarios written once against a library ``lib`` (hookgrad or torch), run per rank.

Each scenario is ``fn(lib, rank, world_size) -> JSON-able result``. Scenarios check their own
invariants (assertions: every rank compares against a single-process reference it computes
itself from every rank's data) and return values that the oracle test compares with PyTorch
(gloo) and that the MPI test compares across ranks. They run on the threads backend
(`run_ranks`), under ``mpiexec -n 2`` (`mpi_runner.py`) and, for torch, under gloo
(`torch_runner.py`): contracts/distributed.md §11.5.
"""

from __future__ import annotations

import copy
import importlib
import re

import numpy as np

SCENARIOS: dict[str, object] = {}
# Scenarios whose results must match PyTorch's (others use hookgrad-only decisions).
ORACLE: set[str] = set()


def scenario(oracle: bool = True):
    def deco(fn):
        SCENARIOS[fn.__name__] = fn
        if oracle:
            ORACLE.add(fn.__name__)
        return fn
    return deco


def error_types(checks):
    """``{name: type name of the exception call() raised, or None}`` for ``{name: call}``."""
    errors = {}
    for name, call in checks.items():
        try:
            call()
            errors[name] = None
        except Exception as e:  # noqa: BLE001 - the type is the result
            errors[name] = type(e).__name__
    return errors


def hooks(lib, name):
    return importlib.import_module(f"{lib.__name__}.distributed.algorithms.ddp_comm_hooks.{name}")


def DDP(lib):  # noqa: N802
    return lib.nn.parallel.DistributedDataParallel


def make_model(lib, rank, sizes=(6, 8, 4)):
    """A small MLP whose initial weights differ per rank (DDP must broadcast rank 0's)."""
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [lib.nn.Linear(a, b), lib.nn.Tanh()]
    return init_params(lib, lib.nn.Sequential(*layers[:-1]), 100 + rank)


def init_params(lib, model, seed):
    """Deterministic weights from NumPy (the global RNG is shared by threads-backend ranks)."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in model.parameters():
            bound = 1 / np.sqrt(p.shape[-1])
            p.copy_(lib.tensor(rng.uniform(-bound, bound, size=tuple(p.shape))
                               .astype(np.float32)))
    return model


def batch(lib, rank, it=0, n=5, dim=6, out=4):
    rng = np.random.default_rng(1000 * it + rank)
    x = lib.tensor(rng.normal(size=(n, dim)).astype(np.float32))
    y = lib.tensor(rng.normal(size=(n, out)).astype(np.float32))
    return x, y


def loss_of(lib, model, x, y):
    return ((model(x) - y) ** 2).mean()


def reference_grads(lib, module, world_size, it=0, reduce="mean"):
    """Per-parameter mean (or local, reduce=rank) over ranks of single-process gradients."""
    ref = copy.deepcopy(module)
    per_rank = []
    for r in range(world_size):
        ref.zero_grad(set_to_none=True)
        x, y = batch(lib, r, it)
        loss_of(lib, ref, x, y).backward()
        per_rank.append([p.grad.detach().numpy().copy() for p in ref.parameters()])
    if isinstance(reduce, int):
        return per_rank[reduce]
    return [np.mean([g[i] for g in per_rank], axis=0) for i in range(len(per_rank[0]))]


def grads(model):
    return [p.grad.detach().numpy().copy() for p in model.parameters()]


def close(a, b, tol=1e-5):
    for u, v in zip(a, b, strict=True):
        np.testing.assert_allclose(u, v, rtol=tol, atol=tol)


def rounded(arrays, digits=5):
    return [np.round(np.asarray(a, dtype=np.float64), digits).tolist() for a in arrays]


# ------------------------------------------------------------------------------ collectives
@scenario(oracle=False)
def collectives_basics(lib, rank, world):
    """Results equal PyTorch/gloo's (compared while writing it; `expectations._collectives`
    holds them), but under load gloo hung in the barrier after this scenario in ~1 of 4 runs,
    so it is not part of the oracle run."""
    dist = lib.distributed
    t = lib.tensor([rank + 1.0, 2.0])
    dist.all_reduce(t)
    m = lib.tensor([float(rank)])
    dist.all_reduce(m, op=dist.ReduceOp.MAX)
    avg = lib.tensor([rank * 2.0])
    work = dist.all_reduce(avg, op=dist.ReduceOp.AVG, async_op=True)
    fut = work.get_future().then(lambda f: f.value()[0] * 10)
    chained = fut.wait().tolist()
    assert work.is_completed() and work.is_success() and work.exception() is None
    b = lib.tensor([float(rank)] * 3)
    dist.broadcast(b, src=world - 1)
    parts = [lib.zeros(2) for _ in range(world)]
    dist.all_gather(parts, lib.tensor([rank, rank + 0.5]))
    objs = [None] * world
    dist.all_gather_object(objs, {"rank": rank})
    lst = [rank, "x"]
    dist.broadcast_object_list(lst, src=0)
    dist.barrier()
    return {"sum": t.tolist(), "max": m.tolist(), "chained": chained, "bcast": b.tolist(),
            "gather": [p.tolist() for p in parts], "objs": objs, "lst": lst,
            "rank": dist.get_rank(), "size": dist.get_world_size()}


@scenario(oracle=False)
def integer_avg_fails(lib, rank, world):
    """PyTorch/gloo gives this error too (checked once by hand), but running it inside the
    oracle run made gloo hang in the next barrier in ~1 of 3 runs, so it is not an oracle
    scenario; the expected text is PyTorch's."""
    try:
        lib.distributed.all_reduce(lib.tensor([1, 2]), op=lib.distributed.ReduceOp.AVG)
    except RuntimeError as exc:
        return str(exc)
    return "no error"


@scenario()
def init_twice(lib, rank, world):
    try:
        lib.distributed.init_process_group(lib.distributed.get_backend())
    except ValueError as exc:
        return str(exc)
    return "no error"


# ------------------------------------------------------------------------------ construction
@scenario()
def construction_broadcast(lib, rank, world):
    model = make_model(lib, rank)
    model.register_buffer("counter", lib.tensor([10.0 * (rank + 1)]))
    ddp = DDP(lib)(model)
    w = model[0].weight.detach().numpy().copy()
    got = [np.zeros_like(w) for _ in range(world)]
    everyone = [None] * world
    lib.distributed.all_gather_object(everyone, w.tolist())
    for other in everyone:
        np.testing.assert_array_equal(np.array(other, dtype=np.float32), w)
    del got
    after_ctor = model.counter.item()
    with lib.no_grad():
        model.counter.fill_(20.0 if rank == 1 else 10.0)
    ddp(batch(lib, rank)[0])
    return {"ctor_buffer": after_ctor, "fwd_buffer": model.counter.item(),
            "keys": sorted(ddp.state_dict())[:2]}


@scenario()
def frozen_param_excluded(lib, rank, world):
    model = make_model(lib, rank)
    model[0].weight.requires_grad_(False)
    ddp = DDP(lib)(model)
    log = observe_buckets(lib, ddp, model)
    x, y = batch(lib, rank)
    loss_of(lib, ddp, x, y).backward()
    return {"frozen_grad_none": model[0].weight.grad is None, "buckets": log[0]}


def observe_buckets(lib, ddp, model):
    """Register an all-reduce hook that records, per iteration, each bucket's parameter
    indices (positions in ``model.parameters()``) in launch order."""
    dh = hooks(lib, "default_hooks")
    index = {id(p): i for i, p in enumerate(model.parameters())}
    log = [[]]

    def hook(state, bucket):
        log[-1].append([index[id(p)] for p in bucket.parameters()])
        if bucket.is_last():
            log.append([])
        return dh.allreduce_hook(state, bucket)

    ddp.register_comm_hook(None, hook)
    return log


@scenario()
def no_trainable_params(lib, rank, world):
    model = init_params(lib, lib.nn.Linear(2, 2), 0).requires_grad_(False)
    try:
        DDP(lib)(model)
    except RuntimeError as exc:
        return str(exc)
    return "no error"


# ------------------------------------------------------------------------------ reduction
def _train_with_hook(lib, rank, world, hook=None, state=None, iters=1, **ddp_kw):
    model = make_model(lib, rank)
    ddp = DDP(lib)(model, **ddp_kw)
    if hook is not None:
        ddp.register_comm_hook(state, hook)
    results = []
    for it in range(iters):
        ref = reference_grads(lib, model, world, it)
        model.zero_grad(set_to_none=True)
        x, y = batch(lib, rank, it)
        loss_of(lib, ddp, x, y).backward()
        results.append((grads(model), ref))
    return ddp, model, results


@scenario()
def default_equals_allreduce_hook_equals_mean(lib, rank, world):
    _, _, plain = _train_with_hook(lib, rank, world, iters=2)
    dh = hooks(lib, "default_hooks")
    _, _, hooked = _train_with_hook(lib, rank, world, dh.allreduce_hook, None, iters=2)
    for (g, ref), (h, _) in zip(plain, hooked, strict=True):
        close(g, ref)
        close(h, ref)
        close(g, h, 0)
    return rounded(plain[-1][0])


@scenario()
def noop_hook_is_local(lib, rank, world):
    dbg = hooks(lib, "debugging_hooks")
    _, model, res = _train_with_hook(lib, rank, world, dbg.noop_hook, None)
    local = reference_grads(lib, model, world, 0, reduce=rank)
    close(res[0][0], local)
    return rounded(res[0][0])


@scenario()
def fp16_hook_close_to_mean(lib, rank, world):
    dh = hooks(lib, "default_hooks")
    _, _, res = _train_with_hook(lib, rank, world, dh.fp16_compress_hook, None)
    g, ref = res[0]
    close(g, ref, 1e-3)
    _, _, wrapped = _train_with_hook(lib, rank, world,
                                     dh.fp16_compress_wrapper(dh.allreduce_hook), None)
    close(wrapped[0][0], ref, 1e-3)
    return {"dtype": str(g[0].dtype), "max_err": float(max(np.abs(a - b).max()
                                                           for a, b in zip(g, ref)))}


@scenario(oracle=False)
def bf16_hook_close_to_mean(lib, rank, world):
    dh = hooks(lib, "default_hooks")
    _, _, res = _train_with_hook(lib, rank, world, dh.bf16_compress_hook, None)
    g, ref = res[0]
    for a, b in zip(g, ref, strict=True):  # a few bf16 ulps (8 mantissa bits) of the scale
        np.testing.assert_allclose(a, b, rtol=0, atol=3 * 2.0 ** -8 * np.abs(b).max())
    _, _, wrapped = _train_with_hook(lib, rank, world,
                                     dh.bf16_compress_wrapper(dh.allreduce_hook), None)
    for a, b in zip(*wrapped[0], strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=3 * 2.0 ** -8 * np.abs(b).max())
    return str(g[0].dtype)


# ------------------------------------------------------------------------------ buckets
@scenario()
def hook_sees_buckets_in_order(lib, rank, world):
    dh = hooks(lib, "default_hooks")
    seen = []

    def hook(state, bucket):
        grads_ = bucket.gradients()
        buf = bucket.buffer()
        assert sum(g.numel() for g in grads_) == buf.numel()
        before = float(buf[0])
        with lib.no_grad():  # views: writing a gradient writes the buffer
            grads_[0].view(-1)[0] = 123.0
        assert float(buf[0]) == 123.0
        with lib.no_grad():
            grads_[0].view(-1)[0] = before
        seen.append((bucket.index(), bucket.is_last(), [list(p.shape) for p in
                                                       bucket.parameters()]))
        return dh.allreduce_hook(state, bucket)

    _, _, res = _train_with_hook(lib, rank, world, hook, None, iters=2, bucket_cap_mb=0.0001)
    close(res[-1][0], res[-1][1])
    return seen


@scenario()
def buckets_default_caps_rebuild(lib, rank, world):
    model = make_model(lib, rank, sizes=(300, 300, 300, 10))  # 360 KB per weight
    ddp = DDP(lib)(model)
    log = observe_buckets(lib, ddp, model)
    for it in range(3):
        x = lib.tensor(np.random.default_rng(it + rank).normal(size=(2, 300)).astype(np.float32))
        ddp(x).sum().backward()
    return log[:3]


@scenario()
def buckets_given_cap_and_find_unused(lib, rank, world):
    out = {}
    for name, kw in (("cap", {}), ("find_unused", {"find_unused_parameters": True})):
        model = make_model(lib, rank, sizes=(200, 200, 200, 200))
        ddp = DDP(lib)(model, bucket_cap_mb=0.2, **kw)
        log = observe_buckets(lib, ddp, model)
        for it in range(3):
            x = lib.tensor(np.random.default_rng(it).normal(size=(2, 200)).astype(np.float32))
            with __import__("warnings").catch_warnings():
                __import__("warnings").simplefilter("ignore")
                ddp(x).sum().backward()
        out[name] = log[:3]
    return out


# ------------------------------------------------------------------------------ no_sync etc.
@scenario()
def no_sync_accumulates(lib, rank, world):
    calls = []
    dh = hooks(lib, "default_hooks")

    def hook(state, bucket):
        calls.append(bucket.index())
        return dh.allreduce_hook(state, bucket)

    model = make_model(lib, rank)
    ddp = DDP(lib)(model)
    ddp.register_comm_hook(None, hook)
    ref0 = reference_grads(lib, model, world, 0)
    ref1 = reference_grads(lib, model, world, 1)
    with ddp.no_sync():
        x, y = batch(lib, rank, 0)
        loss_of(lib, ddp, x, y).backward()
    inside = len(calls)
    local = grads(model)
    x, y = batch(lib, rank, 1)
    loss_of(lib, ddp, x, y).backward()
    close(grads(model), [a + b for a, b in zip(ref0, ref1, strict=True)])
    return {"calls_inside": inside, "calls_after": len(calls) - inside,
            "local_first": rounded(local[:1])}


def _two_branch(lib, rank):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Linear(2, 2, bias=False)
            self.b = lib.nn.Linear(2, 2, bias=False)

        def forward(self, x, use_b):
            return self.b(x) if use_b else self.a(x)

    return init_params(lib, Net(), 7 + rank)


@scenario()
def unused_parameter_error(lib, rank, world):
    ddp = DDP(lib)(_two_branch(lib, rank))
    ddp(lib.ones(1, 2), False).sum().backward()
    try:
        ddp(lib.ones(1, 2), False).sum().backward()
    except RuntimeError as exc:
        msg = str(exc)
        return {"starts": msg.startswith("Expected to have finished reduction in the prior "
                                         "iteration"),
                "indices": re.search(r"rank \d+: ([\d ]+)\n", msg).group(1)}
    return "no error"


@scenario()
def find_unused_grads(lib, rank, world):
    ddp = DDP(lib)(_two_branch(lib, rank), find_unused_parameters=True)
    net = ddp.module
    with lib.no_grad():
        net.a.weight.fill_(1.0)
    out = ddp(lib.ones(1, 2), rank == 0)  # rank 0 uses b only; others use a only
    out.sum().backward()
    a = None if net.a.weight.grad is None else net.a.weight.grad.tolist()
    b = None if net.b.weight.grad is None else net.b.weight.grad.tolist()
    ddp2 = DDP(lib)(_two_branch(lib, rank), find_unused_parameters=True)
    ddp2(lib.ones(1, 2), False).sum().backward()  # b unused on every rank
    return {"a": a, "b": b, "b_unused_everywhere": ddp2.module.b.weight.grad is None}


# ------------------------------------------------------------------------------ hook errors
@scenario()
def register_twice_and_validation(lib, rank, world):
    dh = hooks(lib, "default_hooks")
    ddp = DDP(lib)(make_model(lib, rank))
    out = {}
    try:
        ddp.register_comm_hook(None, 42)
    except TypeError as exc:
        out["not_callable"] = str(exc)

    def bad_bucket(state, bucket: int):
        return None

    def bad_return(state, bucket) -> int:
        return None

    for name, h in (("bad_bucket", bad_bucket), ("bad_return", bad_return)):
        try:
            ddp.register_comm_hook(None, h)
        except ValueError as exc:
            out[name] = str(exc)
    ddp.register_comm_hook(None, dh.allreduce_hook)
    try:
        ddp.register_comm_hook(None, dh.allreduce_hook)
    except RuntimeError as exc:
        out["twice"] = str(exc)
    return out


@scenario(oracle=False)
def hook_returns_non_future(lib, rank, world):
    ddp = DDP(lib)(make_model(lib, rank))
    ddp.register_comm_hook(None, lambda state, bucket: bucket.buffer())
    x, y = batch(lib, rank)
    try:
        loss_of(lib, ddp, x, y).backward()
    except RuntimeError as exc:
        return "must return a" in str(exc) and "futures.Future object" in str(exc)
    return "no error"


@scenario(oracle=False)
def hook_returns_wrong_size(lib, rank, world):
    fut_cls = lib.futures.Future

    def hook(state, bucket):
        fut = fut_cls()
        fut.set_result(lib.zeros(3))
        return fut

    ddp = DDP(lib)(make_model(lib, rank))
    ddp.register_comm_hook(None, hook)
    x, y = batch(lib, rank)
    try:
        loss_of(lib, ddp, x, y).backward()
    except RuntimeError as exc:
        return str(exc)
    return "no error"


@scenario()
def hook_raises_propagates(lib, rank, world):
    def hook(state, bucket):
        raise ValueError("hook failed on purpose")

    ddp = DDP(lib)(make_model(lib, rank))
    ddp.register_comm_hook(None, hook)
    x, y = batch(lib, rank)
    try:
        loss_of(lib, ddp, x, y).backward()
    except ValueError as exc:
        return str(exc)
    return "no error"


# ------------------------------------------------------------------------------ PowerSGD
@scenario(oracle=False)
def powersgd(lib, rank, world):
    ps = hooks(lib, "powerSGD_hook")
    try:
        ps.PowerSGDState(None, start_powerSGD_iter=1)
        ctor = "no error"
    except ValueError as exc:
        ctor = str(exc)
    state = ps.PowerSGDState(process_group=None, matrix_approximation_rank=1,
                             start_powerSGD_iter=2, min_compression_rate=2)
    model = make_model(lib, rank, sizes=(40, 40, 40))
    ddp = DDP(lib)(model)
    ddp.register_comm_hook(state, ps.powerSGD_hook)
    out = {"ctor": ctor, "ranks": []}
    for it in range(4):
        ref = reference_grads_sized(lib, model, world, it)
        model.zero_grad(set_to_none=True)
        x = _wide_batch(lib, rank, it)
        ddp(x).pow(2).sum().backward()
        g = grads(model)
        if it < 2:
            close(g, ref)
        else:
            close([g[1], g[3]], [ref[1], ref[3]])  # biases stay exact means
        out["ranks"].append([int(np.linalg.matrix_rank(g[0])), int(np.linalg.matrix_rank(g[2]))])
    out["error_keys"] = sorted(state.error_dict)
    out["p_sizes"] = sorted(int(v.numel()) for v in state.p_memory_dict.values())
    out["iter"] = state.iter
    out["rate"] = round(state.compression_stats()[0], 3)
    return out


def _wide_batch(lib, rank, it):
    rng = np.random.default_rng(10 * it + rank)
    return lib.tensor(rng.normal(size=(30, 40)).astype(np.float32))


def reference_grads_sized(lib, module, world, it):
    ref = copy.deepcopy(module)
    acc = None
    for r in range(world):
        ref.zero_grad(set_to_none=True)
        ref(_wide_batch(lib, r, it)).pow(2).sum().backward()
        g = [p.grad.detach().numpy().copy() for p in ref.parameters()]
        acc = g if acc is None else [a + b for a, b in zip(acc, g, strict=True)]
    return [a / world for a in acc]


# ------------------------------------------------------------------------------ faults
@scenario(oracle=False)
def mismatched_param_count(lib, rank, world):
    model = make_model(lib, rank, sizes=(6, 8, 4) if rank == 0 else (6, 8, 8, 4))
    try:
        DDP(lib)(model)
    except RuntimeError as exc:
        return str(exc)
    return "no error"


@scenario(oracle=False)
def mismatched_param_shape(lib, rank, world):
    model = init_params(lib, lib.nn.Linear(3 if rank == 0 else 4, 2), rank)
    try:
        DDP(lib)(model)
    except RuntimeError as exc:
        return str(exc)
    return "no error"


@scenario(oracle=False)
def collectives_out_of_order(lib, rank, world):
    dist = lib.distributed
    group = dist.new_group(list(range(world)))  # a mismatch leaves the group unusable
    try:
        if rank == 0:
            dist.all_reduce(lib.ones(3), group=group)
        else:
            dist.broadcast(lib.ones(3), src=0, group=group)
    except RuntimeError as exc:
        return str(exc)
    return "no error"


@scenario(oracle=False)
def powersgd_many_buckets(lib, rank, world):
    """Callbacks issue collectives (P, Q all-reduces): their order must be the same on every
    rank however early each rank notices a completion (a regression: it once depended on it)."""
    ps = hooks(lib, "powerSGD_hook")
    out = []
    for batched in (False, True):
        state = ps.PowerSGDState(None, matrix_approximation_rank=2, start_powerSGD_iter=2,
                                 batch_tensors_with_same_shape=batched)
        model = make_model(lib, rank, sizes=(40, 40, 40, 40, 40))
        ddp = DDP(lib)(model, bucket_cap_mb=0.008)
        ddp.register_comm_hook(state, ps.powerSGD_hook)
        for it in range(6):
            model.zero_grad(set_to_none=True)
            ddp(_wide_batch(lib, rank, it)).pow(2).sum().backward()
        g = grads(model)
        assert all(int(np.linalg.matrix_rank(w)) <= 2 for w in g[0::2])
        out.append({"buckets": len(state.error_dict), "sums": [round(float(x.sum()), 4)
                                                               for x in g]})
    assert out[0]["buckets"] >= 2
    return out


@scenario()
def gradient_as_bucket_view_accumulates(lib, rank, world):
    model = make_model(lib, rank)
    ddp = DDP(lib)(model, gradient_as_bucket_view=True)
    out = []
    for it in range(3):
        ref = reference_grads(lib, model, world, it)
        model.zero_grad(set_to_none=False)  # grads stay (bucket views), zeroed in place
        x, y = batch(lib, rank, it)
        loss_of(lib, ddp, x, y).backward()
        close(grads(model), ref)
        out.append(rounded([g.sum() for g in grads(model)]))
    return out


@scenario()
def builtin_hook_types(lib, rank, world):
    ch = importlib.import_module(f"{lib.__name__}.distributed.algorithms.ddp_comm_hooks")
    out = {}
    for name in ("ALLREDUCE", "FP16_COMPRESS", "NOOP"):
        model = make_model(lib, rank)
        ddp = DDP(lib)(model)
        ch.register_ddp_comm_hook(getattr(ch.DDPCommHookType, name), ddp)
        ref = reference_grads(lib, model, world, 0)
        x, y = batch(lib, rank)
        loss_of(lib, ddp, x, y).backward()
        if name != "NOOP":
            close(grads(model), ref, 1e-3)
        out[name] = sorted(m for m in dir(ch.DDPCommHookType) if m.isupper())[:3]
    return out


@scenario()
def static_graph_rebuilds(lib, rank, world):
    model = make_model(lib, rank, sizes=(300, 300, 300, 10))
    ddp = DDP(lib)(model, static_graph=True)
    log = observe_buckets(lib, ddp, model)
    for it in range(3):
        ref = reference_grads_sized_300(lib, model, world, it)
        model.zero_grad(set_to_none=True)
        ddp(_batch300(lib, rank, it)).sum().backward()
        close(grads(model), ref, 1e-4)
    return log[:3]


def _batch300(lib, rank, it):
    return lib.tensor(np.random.default_rng(it + 10 * rank).normal(size=(2, 300))
                      .astype(np.float32))


def reference_grads_sized_300(lib, module, world, it):
    ref = copy.deepcopy(module)
    acc = None
    for r in range(world):
        ref.zero_grad(set_to_none=True)
        ref(_batch300(lib, r, it)).sum().backward()
        g = [p.grad.detach().numpy().copy() for p in ref.parameters()]
        acc = g if acc is None else [a + b for a, b in zip(acc, g, strict=True)]
    return [a / world for a in acc]


@scenario(oracle=False)
def batched_powersgd(lib, rank, world):
    ps = hooks(lib, "powerSGD_hook")
    state = ps.PowerSGDState(None, matrix_approximation_rank=1, start_powerSGD_iter=2)
    model = make_model(lib, rank, sizes=(40, 40, 40))
    ddp = DDP(lib)(model)
    ddp.register_comm_hook(state, ps.batched_powerSGD_hook)
    errs = []
    for it in range(4):
        ref = reference_grads_sized(lib, model, world, it)
        model.zero_grad(set_to_none=True)
        ddp(_wide_batch(lib, rank, it)).pow(2).sum().backward()
        g = grads(model)
        if it < 2:
            close(g, ref)
        errs.append(float(sum(np.abs(a - b).sum() for a, b in zip(g, ref, strict=True))))
    before, after = state.compression_stats()[1:]
    side = int(np.ceil(np.sqrt(sum(p.numel() for p in model.parameters()))))
    assert after == 2 * side * 1 * 2 and errs[2] > 0  # two compressed calls, lossy
    return {"iter": state.iter, "before": before, "after": after}


@scenario()
def bucket_cap_mb_list_caps(lib, rank, world):
    model = make_model(lib, rank, sizes=(200, 200, 200, 200))
    ddp = DDP(lib)(model, bucket_cap_mb_list=[0.1, 0.2])
    log = observe_buckets(lib, ddp, model)
    for it in range(3):
        x = lib.tensor(np.random.default_rng(it).normal(size=(2, 200)).astype(np.float32))
        ddp(x).sum().backward()
    return log[:3]


from tests.distributed import scenarios_join  # noqa: E402,F401 - registers more scenarios
from tests.distributed import scenarios_functional  # noqa: E402,F401 - registers more scenarios
from tests.distributed import scenarios_p2p  # noqa: E402,F401 - registers more scenarios
