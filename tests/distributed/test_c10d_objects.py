"""The c10d objects and helper modules of ``torch.distributed`` beyond collectives: compared
with PyTorch where it defines behaviour without a process group (BackendConfig, ReduceOp,
``_remote_device``, ``utils``, rendezvous-free modules), and run on the threads engine where
they need ranks (ProcessGroupGloo, Reducer/Logger, breakpoint, record_comm)."""

from __future__ import annotations

import warnings
from datetime import timedelta

import numpy as np
import pytest

import hookgrad
import hookgrad.distributed as dist
from hookgrad.testing.distributed import run_ranks
from tests.conftest import load_torch
from tests.distributed.scenarios import batch, loss_of, make_model, reference_grads


def _outcome(call):
    try:
        return ("ok", repr(call()))
    except Exception as exc:  # noqa: BLE001 - the type is the result
        return ("raised", type(exc).__name__)


def test_backend_config_type_map_and_reduce_op_match_pytorch():
    td = load_torch().distributed
    for spec in ("gloo", "mpi", "cpu:gloo", "cpu:gloo,cuda:nccl", "undefined", "nccl",
                 "cpu:gloo:x", "cpu:gloo,cpu:mpi"):
        assert _outcome(lambda d=dist: d.BackendConfig(spec).get_device_backend_map()) == \
            _outcome(lambda d=td: d.BackendConfig(spec).get_device_backend_map()), spec
        if _outcome(lambda: td.BackendConfig(spec))[0] == "ok":
            assert repr(dist.BackendConfig(spec)) == repr(td.BackendConfig(spec))
    assert {k: (int(v), str(v)) for k, v in dist.Backend.backend_type_map.items()} == \
        {k: (int(v), str(v)) for k, v in td.Backend.backend_type_map.items()}
    assert dist.ProcessGroup.BackendType.GLOO == dist.Backend.backend_type_map["gloo"]
    for name in ("SUM", "MAX", "AVG"):
        ours, theirs = dist.ReduceOp(getattr(dist.ReduceOp, name)), \
            td.ReduceOp(getattr(td.ReduceOp, name))
        assert int(ours.op) == int(theirs.op) and str(ours.op) == str(theirs.op)
        assert _outcome(lambda o=ours: o.factor) == _outcome(lambda o=theirs: o.factor)
    assert isinstance(dist.ReduceOp.op, property) and isinstance(dist.ReduceOp.factor, property)


@pytest.mark.parametrize("text", ["rank:0/cpu", "trainer0", "ps0/cuda:1", "cpu", "a/b/c",
                                  "rank:x/cpu", "/cpu", "w:1:2/cpu", "rank:3"])
def test_remote_device_parses_as_pytorch(text):
    td = load_torch().distributed

    def parse(cls):
        d = cls(text)
        return repr(d), d.rank(), d.worker_name(), str(d.device())

    assert _outcome(lambda: parse(dist._remote_device)) == \
        _outcome(lambda: parse(td._remote_device))
    assert dist.remote_device._remote_device is dist._remote_device


def test_utils_helpers_match_pytorch():
    torch = load_torch()
    tu, ou = torch.distributed.utils, dist.utils
    assert ou._pack_kwargs(1, 2, a=3, b=4) == tu._pack_kwargs(1, 2, a=3, b=4)
    assert ou._unpack_kwargs((1, 2, 3), ("a",)) == tu._unpack_kwargs((1, 2, 3), ("a",))
    assert ou._to_kwargs((), None, "cpu", False) == tu._to_kwargs((), None,
                                                                  torch.device("cpu"), False)

    def shape_of(lib, fn):
        args, kwargs = fn(lib)
        return [(type(a).__name__, str(getattr(a, "dtype", a))) for a in (*args, *kwargs.values())]

    def cast(lib):
        return lib.distributed.utils._cast_forward_inputs(
            lib.float16, lib.ones(1), 3, k=lib.ones(1, dtype=lib.int64))

    ours = [s.replace("hookgrad", "torch") for _, s in shape_of(hookgrad, cast)]
    assert ours == [s for _, s in shape_of(torch, cast)]
    moved = ou._to_kwargs((hookgrad.ones(1), [hookgrad.ones(2)]), {"k": hookgrad.ones(1)}, "cpu",
                          False)
    assert [type(x) for x in moved[0][0]] == [hookgrad.Tensor, list] and "k" in moved[1][0]
    sd = {"a.x": 1, "b.y": 2}
    ou._replace_by_prefix(sd, "a.", "z.")
    assert sd == {"b.y": 2, "z.x": 1}
    with pytest.raises(AssertionError, match="boom"):
        ou._p_assert(False, "boom")


def test_helper_modules_as_pytorch():
    td = load_torch().distributed
    assert dist.config.__all__ == td.config.__all__
    assert dist.config.use_torchcomms is False and dist.config.compile_on_one_rank is False
    assert set(dist.logging_handlers._log_handlers) == set(td.logging_handlers._log_handlers)
    logger = dist.c10d_logger._c10d_logger
    assert logger.name == td.c10d_logger._c10d_logger.name and not logger.propagate

    @dist.c10d_logger._exception_logger
    def fails():
        raise ValueError("x")

    with pytest.raises(ValueError):
        fails()
    assert dist.log.name == "hookgrad.distributed"
    assert callable(dist.rendezvous) and callable(dist.register_rendezvous_handler)


def test_deprecated_names_warn_as_pytorch():
    td = load_torch().distributed

    def messages(d, lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for call in (lambda: d.all_gather_into_tensor(lib.zeros(1), lib.zeros(1)),
                         lambda: d.reduce_scatter_tensor(lib.zeros(1), lib.zeros(1)),
                         lambda: d.all_gather_coalesced([[lib.zeros(1)]], [lib.zeros(1)])):
                try:
                    call()
                except Exception:  # noqa: BLE001 - torch: no process group; only warnings count
                    pass
        return [(w.category.__name__, str(w.message)) for w in caught]

    ours = run_ranks(lambda r, n: messages(dist, hookgrad), 1)[0]
    assert ours == messages(td, load_torch())


def test_process_group_gloo_runs_on_a_thread_store():
    store = dist.ThreadStore(2)

    def fn(rank, world):
        pg = dist.ProcessGroupGloo(store, rank, world, timedelta(seconds=30))
        t = hookgrad.tensor([rank + 1.0])
        dist.all_reduce(t, group=pg)
        return t.item(), pg.size(), dist.get_backend(pg), pg.options._timeout

    assert run_ranks(fn, 2) == [(3.0, 2, "gloo", timedelta(seconds=30))] * 2
    alone = dist.ProcessGroupGloo(dist.HashStore(), 0, 1)
    t = hookgrad.tensor([4.0])
    dist.all_reduce(t, group=alone)
    assert t.item() == 4.0 and alone.supports_splitting
    assert isinstance(dist.ProcessGroupGloo.create_device(hostname="127.0.0.1"),
                      dist.ProcessGroupGloo.Device)
    with pytest.raises(ValueError, match="mpiexec"):
        dist.ProcessGroupGloo(dist.HashStore(), 0, 2)


def test_reducer_averages_gradients_and_logger_reports():
    def fn(rank, world):
        model = make_model(hookgrad, 0)  # same start on every rank
        params = list(model.parameters())
        reducer = dist.Reducer(params, [list(range(len(params)))[::-1]], [1 << 20],
                               dist.group.WORLD)
        logger = dist.Logger(reducer)
        logger.set_construction_data_and_log("Seq", [], -1, True, False, False)
        reducer.set_logger(logger)
        reference = reference_grads(hookgrad, model, world)
        x, y = batch(hookgrad, rank)
        reducer.prepare_for_forward()
        loss = loss_of(hookgrad, model, x, y)
        reducer.prepare_for_backward([loss])
        loss.backward()
        ok = all(np.allclose(p.grad.numpy(), r, atol=1e-6)
                 for p, r in zip(params, reference, strict=True))
        data = logger._get_ddp_logging_data()
        reducer._remove_autograd_hooks()
        return ok, data["module_name"], data["world_size"], data["num_parameter_tensors"], \
            reducer._get_local_used_map().tolist()

    for ok, name, world, count, used in run_ranks(fn, 2):
        assert ok and name == "Seq" and world == 2 and count == 4 and used == [1, 1, 1, 1]
    with pytest.raises(ValueError, match="every parameter index"):
        run_ranks(lambda r, n: dist.Reducer(list(make_model(hookgrad, 0).parameters()), [[0]],
                                            [1], dist.group.WORLD), 1)


def test_breakpoint_skips_and_record_comm_names(monkeypatch):
    stops = []
    monkeypatch.setattr(dist._debug._DistributedPdb, "set_trace", lambda self, frame: stops.append(
        frame.f_code.co_name))

    def fn(rank, world):
        for _ in range(3):
            dist.breakpoint(rank=0, skip=2)  # the first two calls from here are skipped
        with dist.record_comm("phase"):
            inside = dist._debug._get_comm_profiling_name()
        return inside, dist._debug._get_comm_profiling_name()

    assert run_ranks(fn, 2) == [("phase", "")] * 2
    assert stops == ["fn"]  # once, on rank 0 only
