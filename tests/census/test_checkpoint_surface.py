"""torch.utils.checkpoint's helpers and keyword arguments (context_fn, determinism_check) vs PyTorch."""

from __future__ import annotations

import contextlib
import warnings

import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _outcome(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the type is compared
        return type(e).__name__, str(e).split("\n")[0]


@pytest.mark.parametrize("kw", [dict(use_reentrant=True, context_fn=lambda: (None, None)),
                                dict(use_reentrant=True, debug=True),
                                dict(use_reentrant=False, determinism_check="x")])
def test_bad_keywords(torch, kw):
    def run(lib):
        x = lib.ones(2, requires_grad=True)
        return _outcome(lambda: lib.utils.checkpoint.checkpoint(lambda a: a * 2, x, **kw))
    assert run(hookgrad) == run(torch)


def test_context_fn_wraps_forward_and_recompute(torch):
    def run(lib):
        log = []

        @contextlib.contextmanager
        def tag(name):
            log.append(f"enter {name}")
            yield
            log.append(f"exit {name}")

        def fn(a):
            log.append("run")
            return (a.sin() * a).sum()

        x = lib.tensor([0.5, 1.5], requires_grad=True)
        y = lib.utils.checkpoint.checkpoint(fn, x, use_reentrant=False,
                                            context_fn=lambda: (tag("fwd"), tag("re")))
        y.backward()
        return log, x.grad.tolist()
    h, t = run(hookgrad), run(torch)
    assert h[0] == t[0]
    assert h[1] == pytest.approx(t[1])


def test_determinism_check(torch):
    def run(lib, check):
        calls = [0]

        def fn(a):
            calls[0] += 1
            return (a[:calls[0]] * 2).sin().sum()
        y = lib.utils.checkpoint.checkpoint(fn, lib.ones(3, requires_grad=True),
                                            use_reentrant=False, determinism_check=check)
        return _outcome(lambda: y.backward())
    assert run(hookgrad, "default") == run(torch, "default")
    assert run(hookgrad, "default")[0] == "CheckpointError"


def test_helpers(torch):
    def run(lib):
        C = lib.utils.checkpoint
        x = lib.ones(2, requires_grad=True)
        d = C.detach_variable((x * 2, 3))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            C.check_backward_validity([lib.ones(1), 2])
            C.check_backward_validity([x])
        ctx = C.noop_context_fn()
        with C.set_checkpoint_debug_enabled(True):
            pass
        C.set_device_states([], [])
        return (d[0].requires_grad, d[0].grad_fn is None, d[1],
                _outcome(lambda: C.detach_variable([x])), [str(m.message) for m in w],
                [type(c).__name__ for c in ctx], C.get_device_states(x, [lib.ones(1)]),
                C.DefaultDeviceType.get_device_type(),
                [(n, m.value) for n, m in C.CheckpointPolicy.__members__.items()],
                C.SelectiveCheckpointContext(is_recompute=True).is_recompute)
    assert run(hookgrad) == run(torch)
