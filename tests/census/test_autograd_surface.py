"""torch.autograd's smaller names (profiler types, gradcheck helpers, graph utilities) vs PyTorch."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _mod(lib, name):
    return importlib.import_module(f"{lib.__name__}.autograd.{name}")


@pytest.mark.parametrize("path", ["autograd.ProfilerActivity", "autograd.ProfilerState",
                                  "autograd.DeviceType", "profiler.ProfilerActivity"])
def test_enum_members_match(torch, path):
    def members(lib):
        obj = lib
        for part in path.split("."):
            obj = getattr(obj, part)
        return sorted((n, int(m.value) if not isinstance(m.value, int) else m.value)
                      if hasattr(m, "value") else (n, int(m)) for n, m in obj.__members__.items())
    assert members(hookgrad) == members(torch)
    assert hookgrad.profiler.ProfilerActivity is hookgrad.autograd.ProfilerActivity


def _add(a, b):
    return a + b


class _Logs:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return (func.__name__, [t.__name__ for t in types], args)


def _outcome(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the type is compared
        return type(e).__name__, str(e).split("'")[0]


def test_queries_match(torch):
    def q(lib):
        A = lib.autograd
        t = lib.ones(2)
        return (A.kineto_available(), A.is_multithreading_enabled(), A.is_view_replay_enabled(),
                A.is_tensor_like(t), A.is_tensor_like(1.0), A.has_torch_function((1,)),
                _outcome(lambda: A.handle_torch_function(_add, (), 2, 3)),
                A.handle_torch_function(_add, (_Logs(),), 2, 3),
                _mod(lib, "profiler").MEMORY_EVENT_NAME,
                _mod(lib, "profiler").OUT_OF_MEMORY_EVENT_NAME,
                isinstance(A.Variable, _mod(lib, "variable").VariableMeta),
                isinstance(A.Variable._execution_engine, _mod(lib, "variable").ImperativeEngine),
                issubclass(A.NestedIOFunction, A.Function),
                A.graph.RemovableHandle is lib.utils.hooks.RemovableHandle,
                A.graph.Variable is A.Variable)
    assert q(hookgrad) == q(torch)


def test_set_multithreading_enabled_from_grad_mode(torch):
    def run(lib):
        with _mod(lib, "grad_mode").set_multithreading_enabled(False):
            inside = lib.autograd.is_multithreading_enabled()
        return inside, lib.autograd.is_multithreading_enabled()
    assert run(hookgrad) == run(torch) == (False, True)


def test_enforce_unique_and_step_tracker(torch):
    def run(lib):
        P = _mod(lib, "profiler")
        u = P.EnforceUnique()
        u.see("a", 1)
        u.see("a", 2)
        try:
            u.see("a", 1)
        except RuntimeError as e:
            err = str(e)
        K = P.KinetoStepTracker
        base = K.current_step()
        K.init_step_count("census2_a")
        steps = [K.increment_step("census2_a") - base, K.increment_step("census2_b") - base]
        erased = (K.erase_step_count("census2_a"), K.erase_step_count("census2_b"),
                  K.erase_step_count("census2_a"))
        return err, steps, erased
    assert run(hookgrad) == run(torch)


def test_increment_version(torch):
    def run(lib):
        t, u = lib.ones(2), lib.zeros(1)
        lib.autograd.graph.increment_version(t)
        lib.autograd.graph.increment_version([t, u, t])
        return t._version, u._version
    assert run(hookgrad) == run(torch) == (3, 1)


def test_increment_version_makes_saved_tensor_stale(torch):
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 1
        z = y.sin()
        lib.autograd.graph.increment_version(y)
        try:
            z.sum().backward()
        except RuntimeError as e:
            return "modified by an inplace operation" in str(e)
        return None
    assert run(hookgrad) == run(torch) is True


def test_emit_nvtx_needs_cuda(torch):
    def run(lib):
        P = _mod(lib, "profiler")
        with P.emit_nvtx(enabled=False) as off:
            pass
        try:
            with P.emit_nvtx():
                pass
        except Exception as e:  # noqa: BLE001 - the type is compared
            return off, type(e).__name__, str(e)
    assert run(hookgrad) == run(torch)


def test_mem_records_in_interval(torch):
    class Rec:
        def __init__(self, ns):
            self.ns = ns

        def start_ns(self):
            return self.ns

    records = [(Rec(30), "c"), (Rec(10), "a"), (Rec(20), "b"), (Rec(40), "d")]

    def run(lib):
        acc = importlib.import_module(f"{lib.__name__}.autograd.profiler_util").MemRecordsAcc
        return [r[1] for r in acc(records).in_interval(15, 30)], list(acc([]).in_interval(0, 9))
    assert run(hookgrad) == run(torch) == (["b", "c"], [])


def _gc(lib):
    return importlib.import_module(f"{lib.__name__}.autograd.gradcheck")


def _inputs(lib):
    rng = np.random.RandomState(0)
    x = lib.tensor(rng.randn(3), dtype=lib.float64, requires_grad=True)
    y = lib.tensor(rng.randn(2), dtype=lib.float64, requires_grad=True)
    return x, y


def _assert_same(a, b):
    assert len(a) == len(b)
    for p, q in zip(a, b):
        assert tuple(p.shape) == tuple(q.shape) and str(p.dtype) == str(q.dtype)
        np.testing.assert_allclose(np.array(p.tolist()), np.array(q.tolist()), atol=1e-6)


def test_numerical_and_analytical_jacobians(torch):
    def run(lib):
        x, y = _inputs(lib)
        f = lambda inps: (inps[0][:2] * inps[1]).exp() + inps[0].sum()  # noqa: E731
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            num = _gc(lib).get_numerical_jacobian(f, (x, y), eps=1e-6)
            ana = _gc(lib).get_analytical_jacobian((x, y), f((x, y)))
        spec = _gc(lib).get_numerical_jacobian_wrt_specific_input(
            lambda a, b: (a[:2] * b, a.sum()), 0, (x, y), (x[:2] * y, x.sum()), 1e-6)
        return num, ana, spec, sorted({c.category.__name__ for c in w})
    h, t = run(hookgrad), run(torch)
    _assert_same(h[0], t[0])
    _assert_same(h[1][0], t[1][0])
    assert h[1][1:] == t[1][1:] == (True, True, True)
    _assert_same(h[2], t[2])
    assert h[3] == t[3] == ["FutureWarning"]


def test_numerical_jacobian_rejects_grad_out(torch):
    def run(lib):
        x, y = _inputs(lib)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for call in (lambda: _gc(lib).get_numerical_jacobian(lambda i: i[0], (x,), grad_out=2.0),
                         lambda: _gc(lib).get_analytical_jacobian((x,), x * 2, grad_out=2.0)):
                try:
                    call()
                except ValueError as e:
                    yield str(e)
    assert list(run(hookgrad)) == list(run(torch))


def test_gradcheck_messages_match(torch):
    for name in ("FAILED_BATCHED_GRAD_MSG", "FAILED_BATCHED_GRAD_MSG_FWD_AD", "FAILED_NONDET_MSG",
                 "FAST_FAIL_SLOW_OK_MSG"):
        assert getattr(_gc(hookgrad), name) == getattr(_gc(torch), name)


def test_overrides_wrap_torch_function(torch):
    def run(lib):
        @lib.overrides.wrap_torch_function(lambda a: (a,))
        def double(a):
            return a * 2
        out = double(lib.ones(2))
        return out.tolist(), double.__name__
    assert run(hookgrad) == run(torch)


def test_warn_if_has_hooks(torch):
    def run(lib):
        H = lib.utils.hooks
        t = lib.ones(1, requires_grad=True)
        H.warn_if_has_hooks(t)  # no hooks: silent
        t.register_hook(lambda g: g)
        t.register_hook(H.unserializable_hook(lambda g: g))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            H.warn_if_has_hooks(t)
        return ([(x.category.__name__, str(x.message).split("}")[-1][-60:]) for x in w],
                H.BackwardHook.__module__.split(".", 1)[1],
                sorted(vars(H.BackwardHook(None, [], []))))
    assert run(hookgrad) == run(torch)
