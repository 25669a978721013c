"""Scenarios for uneven inputs (`Join`, ``ddp.join()``), the c10d ProcessGroup methods comm
hooks call, and DDP's logging data; registered in `scenarios.SCENARIOS` (so they run on the
threads backend, under mpiexec and, where marked, against PyTorch/gloo)."""

from __future__ import annotations

import importlib

import numpy as np

from tests.distributed.scenarios import DDP, batch, init_params, loss_of, make_model, rounded, \
    scenario


def _train_uneven(lib, rank, world, **join_kw):
    """Rank r has r + 2 batches; SGD steps; returns final params and the last grads."""
    model = make_model(lib, rank)
    ddp = DDP(lib)(model)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    with ddp.join(**join_kw):
        for it in range(rank + 2):
            opt.zero_grad()
            x, y = batch(lib, rank, it)
            loss_of(lib, ddp, x, y).backward()
            opt.step()
    return {"params": rounded([p.detach().numpy() for p in model.parameters()]),
            "grads": rounded([p.grad.detach().numpy() for p in model.parameters()])}


@scenario()
def join_uneven_inputs(lib, rank, world):
    return _train_uneven(lib, rank, world)


@scenario()
def join_divide_by_active_ranks(lib, rank, world):
    return _train_uneven(lib, rank, world, divide_by_initial_world_size=False)


@scenario()
def join_context_manager_with_buffers(lib, rank, world):
    """`Join([ddp])` directly, a module with a buffer (broadcast from a training rank)."""
    join = importlib.import_module(f"{lib.__name__}.distributed.algorithms.join")
    model = init_params(lib, lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4)),
                        100 + rank)
    ddp = DDP(lib)(model)
    with join.Join([ddp]):
        for it in range(rank + 1):
            x = lib.tensor(np.random.default_rng(10 * it + rank).normal(size=(4, 3))
                           .astype(np.float32))
            ddp(x).sum().backward()
    bn = model[1]
    return {"mean": rounded([bn.running_mean.numpy()]),
            "weight": rounded([model[0].weight.detach().numpy()])}


@scenario()
def join_throw_on_early_termination(lib, rank, world):
    ddp = DDP(lib)(make_model(lib, rank))
    try:
        with ddp.join(throw_on_early_termination=True):
            for it in range(rank + 2):
                x, y = batch(lib, rank, it)
                loss_of(lib, ddp, x, y).backward()
    except RuntimeError as exc:
        return str(exc)
    return "no error"


@scenario()
def join_validation(lib, rank, world):
    join = importlib.import_module(f"{lib.__name__}.distributed.algorithms.join")
    try:
        join.Join([])
    except ValueError as exc:
        return str(exc)
    return "no error"


@scenario()
def process_group_methods(lib, rank, world):
    """The c10d methods comm hooks call on a ProcessGroup, each returning a Work/future."""
    dist = lib.distributed
    pg = dist.group.WORLD
    t = lib.tensor([rank + 1.0, 2.0])
    fut = pg.allreduce([t]).get_future()
    summed = fut.wait()[0].tolist()
    m = lib.tensor([float(rank)])
    opts = dist.AllreduceOptions()
    opts.reduceOp = dist.ReduceOp.MAX
    pg.allreduce([m], opts).wait()
    b = lib.tensor([float(rank), 5.0])
    bopts = dist.BroadcastOptions()
    bopts.rootRank = 1
    pg.broadcast([b], bopts).wait()
    b2 = lib.tensor([float(rank)])
    pg.broadcast(b2, 0).wait()  # the (tensor, root) overload
    outs = [lib.zeros(2) for _ in range(world)]
    pg.allgather([outs], [lib.tensor([rank, rank + 0.5])]).wait()
    pieces = [lib.tensor([float(rank + i)]) for i in range(world)]
    out = lib.zeros(1)
    pg.reduce_scatter([out], [pieces]).wait()
    pg.barrier().wait()
    return {"sum": summed, "max": m.tolist(), "bcast": b.tolist(), "bcast2": b2.tolist(),
            "gather": [o.tolist() for o in outs], "rs": out.tolist(), "size": pg.size()}


@scenario()
def ddp_logging_data(lib, rank, world):
    model = make_model(lib, rank)
    ddp = DDP(lib)(model)
    before = ddp._get_ddp_logging_data()
    for it in range(2):
        x, y = batch(lib, rank, it)
        loss_of(lib, ddp, x, y).backward()
    after = ddp._get_ddp_logging_data()
    keep = ("module_name", "num_parameter_tensors", "total_parameter_size_bytes", "rank",
            "world_size", "dtypes", "broadcast_buffers", "find_unused_parameters",
            "bucket_cap_bytes", "gradient_as_bucket_view", "output_device", "device_ids")
    return {"before": {k: before[k] for k in keep}, "iteration": after["iteration"],
            "num_buckets_reduced": after["num_buckets_reduced"],
            "has_rebuilt_buckets": after["has_rebuilt_buckets"],
            "ready_order": after["prev_iteration_grad_ready_order_indices"],
            "keys": sorted(set(after) - {"static_graph", "comm_hook"})}


@scenario()
def composite_collectives(lib, rank, world):
    """gather/scatter (tensor and object), all_gather_into_tensor, reduce_scatter(_tensor),
    all_to_all_single, monitored_barrier, bitwise reductions, rank translation."""
    dist = lib.distributed
    out = {}
    gl = [lib.zeros(2) for _ in range(world)] if rank == 0 else None
    dist.gather(lib.tensor([rank, rank + 0.5]), gl, dst=0)
    out["gather"] = [t.tolist() for t in gl] if gl else None
    s = lib.zeros(2)
    src = [lib.tensor([10.0 * i, 1.0]) for i in range(world)] if rank == world - 1 else None
    dist.scatter(s, src, src=world - 1)
    out["scatter"] = s.tolist()
    objs = [None] * world if rank == 0 else None
    dist.gather_object({"r": rank}, objs, dst=0)
    out["gather_object"] = objs
    got = [None]
    dist.scatter_object_list(got, [f"to{i}" for i in range(world)] if rank == 0 else None, src=0)
    out["scatter_object"] = got[0]
    big = lib.zeros(world * 2)
    dist.all_gather_single(big, lib.tensor([rank, -rank], dtype=lib.float32))
    out["agit"] = big.tolist()
    rs = lib.zeros(1)
    dist.reduce_scatter_single(rs, lib.arange(world, dtype=lib.float32) + rank)
    out["rst"] = rs.tolist()
    rs2 = lib.zeros(2)
    dist.reduce_scatter(rs2, [lib.tensor([1.0 * i, 2.0]) for i in range(world)])
    out["rs"] = rs2.tolist()
    a2a = lib.zeros(world)
    dist.all_to_all_single(a2a, lib.arange(world, dtype=lib.float32) + 10 * rank)
    out["a2a"] = a2a.tolist()
    bits = lib.tensor([rank + 1, 6], dtype=lib.int64)
    dist.all_reduce(bits, op=dist.ReduceOp.BOR)
    out["bor"] = bits.tolist()
    dist.monitored_barrier()
    out["ranks"] = dist.get_process_group_ranks(dist.group.WORLD)
    out["global"] = dist.get_global_rank(dist.group.WORLD, 1)
    return out
