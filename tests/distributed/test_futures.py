"""hookgrad.futures against torch.futures (contracts/distributed.md §3), same scenario on both."""

from __future__ import annotations

import threading

import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _scenario(lib):
    F = lib.futures.Future
    log = []
    out = {}
    fut = F()
    out["done_before"] = fut.done()
    fut.add_done_callback(lambda f: log.append(("cb1", f.value())))
    child = fut.then(lambda f: f.value() * 2)
    grandchild = child.then(lambda f: f.value() + 1)
    fut.add_done_callback(lambda f: log.append(("cb2", f.value())))
    fut.set_result(5)
    out["chain"] = grandchild.wait()
    out["log"] = log
    try:
        fut.set_result(6)
    except RuntimeError as exc:
        out["twice"] = str(exc)
    bad = F()
    failing = bad.then(lambda f: 1 / 0)
    bad.set_result(1)
    try:
        failing.wait()
    except RuntimeError as exc:
        out["callback_error"] = str(exc).split("\n")[0]  # torch appends a traceback
    err = F()
    err.set_exception(ValueError("boom"))
    try:
        err.value()
    except ValueError as exc:
        out["exception"] = repr(exc)
    late = F()
    late.set_result(3)
    late.add_done_callback(lambda f: log.append(("late", f.value())))
    a, b = F(), F()
    both = lib.futures.collect_all([a, b])
    a.set_result(1)
    out["partial"] = both.done()
    b.set_result(2)
    out["collect"] = [f.value() for f in both.wait()]
    c, d = F(), F()
    c.set_result("x")
    d.set_result("y")
    out["wait_all"] = lib.futures.wait_all([c, d])
    return out


def test_future_api_matches_torch(torch):
    assert _scenario(hookgrad) == _scenario(torch)


def test_wait_blocks_until_another_thread_sets_the_result():
    fut = hookgrad.futures.Future()
    timer = threading.Timer(0.05, lambda: fut.set_result("late"))
    timer.start()
    assert fut.wait() == "late"
    timer.join()


def test_set_exception_needs_an_exception():
    # PyTorch 2.13 asserts: AssertionError("3 is of type <class 'int'>, not an Exception.")
    with pytest.raises(AssertionError, match="not an Exception"):
        hookgrad.futures.Future().set_exception("not an exception")


def test_messages_name_torch_futures_under_the_alias():
    from hookgrad.futures import future_type_name
    from hookgrad.testing._as_torch import as_torch
    from hookgrad.testing.distributed import run_ranks

    def ddp_with_bad_hook(rank, world):
        ddp = hookgrad.nn.parallel.DistributedDataParallel(hookgrad.nn.Linear(2, 1))
        ddp.register_comm_hook(None, lambda state, bucket: bucket.buffer())
        try:
            ddp(hookgrad.ones(1, 2)).sum().backward()
        except RuntimeError as exc:
            return str(exc)
        return "no error"

    assert future_type_name() == "hookgrad.futures.Future"
    with pytest.raises(TypeError, match="hookgrad.futures.Future"):
        hookgrad.futures.collect_all([1])
    with as_torch():
        assert future_type_name() == "torch.futures.Future"
        with pytest.raises(TypeError, match=r"sequence of torch\.futures\.Future objects"):
            hookgrad.futures.collect_all([1])
        messages = run_ranks(ddp_with_bad_hook, 2)
    assert messages == ["DDP communication hook's callback must return a torch.futures.Future "
                        "object, but got hookgrad._tensor.Tensor"] * 2
