"""Scenarios for point-to-point communication, the coalesced/``_single`` collectives and group
splitting; registered in `scenarios.SCENARIOS` (threads backend, mpiexec, and PyTorch/gloo as
the oracle where gloo runs them: it cannot split or shrink groups)."""

from __future__ import annotations

import numpy as np

from tests.distributed.scenarios import error_types, scenario


def _arr(lib, values, dtype="float32"):
    return lib.tensor(np.asarray(values, dtype=dtype))


@scenario()
def p2p_send_recv(lib, rank, world):
    """Tags matched out of order, several messages per tag in order, a receive from any rank
    (returns the sender), integer and float64 payloads, a batch_isend_irecv ring, and object
    lists."""
    dist, other = lib.distributed, 1 - rank
    out = {}
    if rank == 0:
        dist.send(_arr(lib, [1, 2]), 1, tag=3)
        dist.send(_arr(lib, [5, 6]), 1, tag=4)
        dist.send(_arr(lib, [7, 8]), 1, tag=4)
        work = dist.isend(_arr(lib, [[1, 2, 3], [4, 5, 6]], "int64"), 1)
        work.wait()
        dist.send(_arr(lib, [0.5, 0.25], "float64"), 1, tag=9)
        anyone = lib.zeros(3)
        out["sender"] = dist.recv(anyone)
        out["anyone"] = anyone.tolist()
        dist.send_object_list(["foo", 12, {1: 2}, None], dst=1)
        dist.send_object_list([[1.5] * 3], dst=1, use_batch=True)
        dist.group.WORLD.send([_arr(lib, [4, 4])], 1, 11).wait()  # the c10d methods
    else:
        b, a, c = lib.zeros(2), lib.zeros(2), lib.zeros(2)
        wb = dist.irecv(b, 0, tag=4)
        wa = dist.irecv(a, 0, tag=3)
        wc = dist.irecv(c, 0, tag=4)
        for w in (wc, wa, wb):
            w.wait()
        out["tags"] = [a.tolist(), b.tolist(), c.tolist()]
        ints = lib.zeros(2, 3, dtype=lib.int64)
        out["int_sender"] = dist.recv(ints, src=0)
        out["ints"] = ints.tolist()
        wide = lib.zeros(2, dtype=lib.float64)
        dist.recv(wide, 0, tag=9)
        out["float64"] = wide.tolist()
        dist.send(_arr(lib, [3, 2, 1]), 0)
        objs = [None] * 4
        out["objs_from"] = dist.recv_object_list(objs, src=0)
        out["objs"] = [repr(o) for o in objs]
        one = [None]
        dist.recv_object_list(one, src=0, use_batch=True)
        out["batched_obj"] = one
        got = lib.zeros(2)
        work = dist.group.WORLD.recv_anysource([got], 11)
        work.wait()
        out["pg_recv"] = [got.tolist(), work._source_rank()]
    send, recv = _arr(lib, [0, 1]) + 2 * rank, lib.zeros(2)
    ops = [dist.P2POp(dist.irecv, recv, other), dist.P2POp(dist.isend, send, other)]
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    out["ring"] = recv.tolist()
    out["op_peer"] = [ops[0].peer, ops[0].group_peer, ops[0].tag]
    return out


@scenario()
def p2p_errors(lib, rank, world):
    """Exception types of misuse, as PyTorch raises them before any transfer starts."""
    dist = lib.distributed
    t = lib.zeros(2)
    checks = {
        "send_to_self": lambda: dist.send(t, rank),
        "both_ranks": lambda: dist.isend(t, 1 - rank, group_dst=1 - rank),
        "no_rank": lambda: dist.isend(t),
        "bad_op": lambda: dist.P2POp(dist.send, t, 1 - rank),
        "bad_list": lambda: dist.batch_isend_irecv([t]),
        "objects_to_self": lambda: dist.send_object_list([1], dst=rank),
        "objects_without_src": lambda: dist.recv_object_list([None]),
        "non_contiguous": lambda: dist.isend(lib.zeros(2, 2)[:, 1], 1 - rank),
    }
    return error_types(checks)


@scenario()
def coalesced_and_single_collectives(lib, rank, world):
    """all_gather_coalesced (one list per rank), all_gather_single of 1-d and 2-d inputs (and
    gloo's error for a stacked output), reduce_scatter_single with SUM and MAX, and their
    deprecated old names."""
    dist = lib.distributed
    base = _arr(lib, [1, 2, 3, 4]) * (rank + 1)
    if True:  # FutureWarnings of the old names: tests filter them (rank threads share filters)
        outs = [[lib.zeros(2, 2), lib.zeros(1)] for _ in range(world)]
        dist.all_gather_coalesced(outs, [base.reshape(2, 2), _arr(lib, [10 * rank])])
        flat, rows = lib.zeros(2 * world), lib.zeros(2 * world, 2)
        dist.all_gather_single(flat, base[:2])
        work = dist.all_gather_single(rows, base.reshape(2, 2), async_op=True)
        work.wait()
        try:
            dist.all_gather_single(lib.zeros(world, 2), base[2:])
            stacked = None
        except RuntimeError as e:
            stacked = str(e)
        rs_sum, rs_max = lib.zeros(2), lib.zeros(2)
        dist.reduce_scatter_single(rs_sum, base)
        dist.reduce_scatter_single(rs_max, base * (-1) ** rank, op=dist.ReduceOp.MAX)
        old = lib.zeros(2 * world)
        dist.all_gather_into_tensor(old, base[:2])
        old_rs = lib.zeros(2)
        dist.reduce_scatter_tensor(old_rs, base)
    return {"coalesced": [[o.tolist() for o in lst] for lst in outs], "flat": flat.tolist(),
            "rows": rows.tolist(), "stacked": stacked, "rs_sum": rs_sum.tolist(), "rs_max": rs_max.tolist(),
            "old": [old.tolist(), old_rs.tolist()]}


@scenario(oracle=False)
def split_and_shrink_groups(lib, rank, world):
    """split_group into singletons and into the whole world; shrink_group of a sub-group by
    the other rank (only the remaining rank calls it); argument errors."""
    dist = lib.distributed
    out = {}
    alone = dist.split_group(split_ranks=[[0], [1]])
    t = _arr(lib, [rank + 1.0])
    dist.all_reduce(t, group=alone)
    out["alone"] = [t.item(), dist.get_world_size(alone), dist.get_process_group_ranks(alone)]
    both = dist.split_group(split_ranks=[[1, 0]], group_desc="pair")
    t = _arr(lib, [rank + 1.0])
    dist.all_reduce(t, group=both)
    out["both"] = [t.item(), dist.get_world_size(both), both.group_desc]
    only0 = dist.split_group(split_ranks=[[0]])
    out["only0_is_none"] = only0 is None
    pair = dist.new_group([0, 1])
    if rank == 0:
        small = dist.shrink_group([1], group=pair)
        t = _arr(lib, [5.0])
        dist.all_reduce(t, group=small)
        out["shrunk"] = [t.item(), dist.get_world_size(small), dist.get_rank(small)]
    out["errors"] = error_types({
        "empty_split": lambda: dist.split_group(split_ranks=[]),
        "dup_split": lambda: dist.split_group(split_ranks=[[0, 0]]),
        "not_list": lambda: dist.shrink_group((1,)),
        "empty": lambda: dist.shrink_group([]),
        "out_of_range": lambda: dist.shrink_group([7]),
        "all": lambda: dist.shrink_group([0, 1]),
        "self": lambda: dist.shrink_group([rank]),
        "flags": lambda: dist.shrink_group([1 - rank], shrink_flags=5),
    })
    dist.barrier()
    return out
