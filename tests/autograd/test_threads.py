"""Per-thread autograd state and concurrent backward, compared with PyTorch (issue 10).

Each scenario takes the library as a parameter and runs unchanged on `torch` and `hookgrad`.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _run_threads(n: int, target) -> list:
    """Run ``target(i)`` in `n` threads; return their results, re-raising the first error."""
    results: list = [None] * n
    errors: list = []

    def body(i: int) -> None:
        try:
            results[i] = target(i)
        except BaseException as e:  # noqa: BLE001 - reported to the test thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, so races show up within a short test
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    if errors:
        raise errors[0]
    return results


def _hooked_passes(lib, seed: int, passes: int) -> list:
    """Forward+backward passes with tensor, node and post-accumulate hooks on one small graph."""
    rng = np.random.default_rng(seed)
    w = lib.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    log: list = []
    w.register_post_accumulate_grad_hook(lambda p: log.append(("acc", float(p.grad.sum()))))
    for _ in range(passes):
        x = lib.tensor(rng.standard_normal((5, 4)))
        h = (x @ w).tanh()
        h.register_hook(lambda g: g * 2)
        h.grad_fn.register_prehook(lambda go: log.append(("pre", float(go[0].sum()))))
        (h * h).sum().backward()
    return [log, w.grad.numpy().copy()]


def test_independent_graphs_in_four_threads_match_single_thread(torch):
    for lib in (torch, hookgrad):
        alone = _hooked_passes(lib, 7, 120)
        runs = _run_threads(4, lambda i, lib=lib: _hooked_passes(lib, 7, 120))
        for log, grad in runs:
            assert log == alone[0]
            np.testing.assert_array_equal(grad, alone[1])


def _shared_model_grads(lib, threads: int) -> np.ndarray:
    lib.manual_seed(0)
    # float64: the threads add the same terms in another order, which float32 rounding shows
    model = lib.nn.Sequential(lib.nn.Linear(8, 16), lib.nn.ReLU(), lib.nn.Linear(16, 1)).double()
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape))))
    xs = [lib.tensor(np.random.default_rng(i).standard_normal((16, 8))) for i in range(2)]

    def step(i: int) -> None:
        for _ in range(50):
            model(xs[i]).pow(2).mean().backward()

    if threads == 1:
        for i in range(2):
            step(i)
    else:
        _run_threads(threads, step)
    return np.concatenate([p.grad.numpy().ravel() for p in model.parameters()])


def test_shared_module_backward_from_two_threads_accumulates_exactly(torch):
    for lib in (torch, hookgrad):
        sequential = _shared_model_grads(lib, 1)
        threaded = _shared_model_grads(lib, 2)
        np.testing.assert_allclose(threaded, sequential, rtol=1e-10, atol=1e-12)


def _grad_mode_isolation(lib) -> tuple:
    stop = threading.Event()

    def toggler() -> None:
        while not stop.is_set():
            with lib.no_grad():
                pass

    t = threading.Thread(target=toggler)
    t.start()
    try:
        x = lib.ones(3, requires_grad=True)
        built = sum((x * 2).requires_grad for _ in range(3000))
    finally:
        stop.set()
        t.join()
    return built


def test_no_grad_in_one_thread_leaves_other_threads_recording(torch):
    assert _grad_mode_isolation(torch) == _grad_mode_isolation(hookgrad) == 3000


def _defaults_seen_by_new_thread(lib) -> dict:
    seen: dict = {}

    def probe() -> None:
        seen["grad"] = lib.is_grad_enabled()
        seen["inference"] = lib.is_inference_mode_enabled()
        a = lib.ones(2, requires_grad=True)
        packed: list = []
        (a * a).sum()
        seen["packed"] = packed
        seen["dtype"] = str(lib.get_default_dtype())
        seen["anomaly"] = lib.is_anomaly_enabled()

    lib.set_default_dtype(lib.float64)
    pack_log: list = []
    try:
        with lib.no_grad(), lib.autograd.graph.saved_tensors_hooks(
                lambda t: pack_log.append(1) or t, lambda t: t):
            thread = threading.Thread(target=probe)
            thread.start()
            thread.join()
    finally:
        lib.set_default_dtype(lib.float32)
    seen["packs_in_thread"] = len(pack_log)
    return seen


def test_new_thread_starts_with_pytorch_defaults(torch):
    # grad mode, inference mode and saved-tensor hooks are per thread; the default dtype and
    # anomaly mode are process-wide (as in PyTorch)
    assert _defaults_seen_by_new_thread(hookgrad) == _defaults_seen_by_new_thread(torch)


def test_recorder_stack_is_per_thread():
    from hookgrad._config import STATE, recording

    class Passive:
        sees_backward = False

        def __init__(self) -> None:
            self.names: list = []

        def record(self, prim, inputs, params, outputs, cast=None) -> None:
            self.names.append(prim.name)

        def record_inplace(self, prim, inputs, params, out, target, cast=None) -> None:
            self.names.append(prim.name + "_")

        def rebase(self, target, out) -> None:
            return None

        def record_write(self, target) -> None:
            self.names.append("write")

        def record_function(self, fn_cls, inputs, outputs) -> None:
            self.names.append(fn_cls.__name__)

    rec = Passive()
    before = STATE.recorders
    with recording(rec) as level:
        assert level == len(before)
        _run_threads(1, lambda i: (hookgrad.ones(2) * 3).sum())  # another thread: not seen
        assert rec.names == []
        (hookgrad.ones(2) * 3).sum()
    assert rec.names == ["mul", "sum"]
    assert STATE.recorders == before


def _anomaly_nan(lib) -> tuple:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the "has been enabled" and traceback warnings
        with lib.autograd.detect_anomaly():
            on = lib.is_anomaly_enabled()
            b = lib.tensor([-1.0], requires_grad=True)
            try:
                b.sqrt().sum().backward()
                err = None
            except RuntimeError as e:
                err = str(e)
    return on, err, lib.is_anomaly_enabled()


def test_anomaly_mode_reports_nan_gradients_like_pytorch(torch):
    assert _anomaly_nan(hookgrad) == _anomaly_nan(torch)
