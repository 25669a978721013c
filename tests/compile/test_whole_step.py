"""A whole training step under ``hookgrad.compile``: forward, loss, ``backward()``,
``clip_grad_norm_``, ``optimizer.step()``, ``zero_grad()`` (NOTE [Resume after a backward break]
in hookgrad/compile/cache/resume.py).

Every step is compared with PyTorch's eager run and hookgrad's eager run: losses, gradient
norms, parameters and one log that every kind of hook writes to (module forward pre/post hooks,
full backward hooks, tensor hooks on parameters and on an intermediate, post-accumulate hooks,
optimizer step pre/post hooks), so the hooks' order is compared too.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import hookgrad
from hookgrad.compile.cache.frame import CACHES
from hookgrad.compile.cache.resume import split_at
from tests.compile.test_soundness import BACKENDS


def _model(lib: Any) -> Any:
    """Linear-Tanh-Linear with the same weights in both libraries."""
    model = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.Tanh(), lib.nn.Linear(6, 3))
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            n = p.numel()
            p.copy_(((lib.arange(n, dtype=lib.float32) * (0.37 + i) % 1.0) - 0.5).reshape(
                p.shape))
    return model


def _hooked(lib: Any, log: list, optimizer: str) -> tuple:
    model = _model(lib)
    for i, layer in enumerate(model):
        layer.register_forward_pre_hook(lambda m, a, i=i: log.append(f"pre{i}"))
        layer.register_forward_hook(lambda m, a, o, i=i: log.append(f"fwd{i}"))
    model[2].register_full_backward_hook(lambda m, gi, go: log.append("bwd2"))
    model[2].register_full_backward_pre_hook(lambda m, go: log.append("bwdpre2"))
    for name, p in model.named_parameters():
        p.register_hook(lambda g, name=name: log.append(f"g:{name}"))
        p.register_post_accumulate_grad_hook(lambda p, name=name: log.append(f"acc:{name}"))
    if optimizer == "adamw":
        opt = lib.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.1)
    else:
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    opt.register_step_pre_hook(lambda o, a, k: log.append("step_pre"))
    opt.register_step_post_hook(lambda o, a, k: log.append("step_post"))
    return model, opt


def _steps(lib: Any, backend: str | None, optimizer: str = "sgd", n: int = 4,
           out_hook: bool = True) -> list:
    log: list = []
    model, opt = _hooked(lib, log, optimizer)
    x = (lib.arange(20, dtype=lib.float32).reshape(5, 4) % 7 - 3) / 4
    y = lib.tensor([0, 2, 1, 1, 0])

    def train_step(x, y):
        out = model(x)
        if out_hook:  # (a hook on an intermediate writing a log breaks the graph first)
            out.register_hook(lambda g: log.append("g:out"))
        loss = lib.nn.functional.cross_entropy(out, y)
        loss.backward()
        norm = lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        opt.zero_grad()
        return loss, norm

    run = train_step if backend is None else lib.compile(train_step, backend=backend)
    seen = []
    for i in range(n):
        loss, norm = run(x + i / 10, y)
        seen.append((round(float(loss.detach()), 5), round(float(norm), 5), list(log),
                     [round(float(p.detach().sum()), 5) for p in model.parameters()],
                     [p.grad for p in model.parameters()]))
        log.clear()
    return seen


@pytest.mark.parametrize("optimizer", ["sgd", "adamw"])
@pytest.mark.parametrize("out_hook", [False, True])
def test_training_step_equals_eager_with_every_hook_in_order(torch: Any, optimizer: str,
                                                             out_hook: bool) -> None:
    want = _steps(hookgrad, None, optimizer, out_hook=out_hook)
    assert _steps(torch, None, optimizer, out_hook=out_hook) == want
    for backend in BACKENDS:
        assert _steps(hookgrad, backend, optimizer, out_hook=out_hook) == want, backend


def test_statements_before_backward_run_as_a_compiled_graph() -> None:
    hookgrad._dynamo.reset()
    _steps(hookgrad, "inductor", out_hook=False)
    entries = [e for es in CACHES.values() for e in es]
    outer = [e for e in entries if e.split is not None]
    assert len(outer) == 1 and outer[0].eager
    head = CACHES[outer[0].split.head._orig_fn.__code__]
    assert len(head) == 1 and not head[0].eager and head[0].artifact is not None


def _fn_with_conditional_name(flag):
    import hookgrad as lib
    x = lib.ones(2, requires_grad=True)
    if flag:
        y = x * 2
    (x * 3).sum().backward()
    return y


def _fn_with_cell():
    import hookgrad as lib
    x = lib.ones(2, requires_grad=True)
    (x * 3).sum().backward()
    return lambda: x


def _fn_plain(a):
    import hookgrad as lib
    x = a * 2
    if a.sum() > 100:  # a statement the rest never reads from
        z = 1
    x.sum().backward()
    return x, a.grad


@pytest.mark.parametrize("fn, line, split", [
    (_fn_with_conditional_name, 5, False),  # `y` may be unbound at the backward line
    (_fn_with_cell, 3, False),  # `x` is a cell of the returned lambda
    (_fn_plain, 5, True),
    (_fn_plain, 1, False),  # nothing before the first statement
])
def test_split_refuses_what_could_differ(fn: Any, line: int, split: bool) -> None:
    at = fn.__code__.co_firstlineno + line
    assert (split_at(fn, at, lambda head: head) is not None) == split


def test_split_function_gives_the_function_results() -> None:
    at = _fn_plain.__code__.co_firstlineno + 5
    parts = split_at(_fn_plain, at, lambda head: head)
    a = hookgrad.ones(3, requires_grad=True)
    x, g = parts((a,), {})
    assert x.tolist() == [2.0] * 3 and g.tolist() == [2.0] * 3
    assert parts.rest.__name__ == f"hookgrad_resume_in__fn_plain_at_{at}"


class _Trainer:
    """A training step as a method with keyword-only and ``**`` parameters."""

    def __init__(self) -> None:
        hookgrad.manual_seed(0)
        self.lin = hookgrad.nn.Linear(3, 2)
        self.opt = hookgrad.optim.SGD(self.lin.parameters(), lr=0.1)

    def step(self, x, *, scale=2.0, **extra):
        out = self.lin(x) * scale
        loss = out.pow(2).mean()
        loss.backward()
        self.opt.step()
        self.opt.zero_grad()
        return loss.detach(), extra


def test_a_method_step_splits_and_keeps_its_arguments() -> None:
    got = []
    for compiled in (False, True):
        t = _Trainer()
        run = hookgrad.compile(t.step, backend="inductor") if compiled else t.step
        got.append([(float(loss), extra) for loss, extra in
                    (run(hookgrad.ones(4, 3) * i, scale=1.5, tag="a") for i in range(4))])
    assert got[0] == got[1]
    (outer,) = CACHES[_Trainer.step.__code__]
    head = CACHES[outer.split.head._orig_fn.__code__]
    assert len(head) == 1 and head[0].artifact is not None


def _from_source(text: str, shown: str) -> Any:
    """A function compiled from `text` whose file (for `inspect.getsource`) reads `shown`."""
    import linecache

    name = f"<hookgrad whole-step test {abs(hash(shown))}>"
    ns: dict = {}
    exec(compile(text, name, "exec"), ns)  # noqa: S102
    linecache.cache[name] = (len(shown), None, shown.splitlines(True), name)
    return ns["f"]


_STEP = "def f(a):\n    x = a * 2\n    x.sum().backward()\n    return x, a.grad\n"


def test_split_refuses_source_that_is_not_the_running_code() -> None:
    assert split_at(_from_source(_STEP, _STEP), 3, lambda head: head) is not None
    edited = _STEP.replace("a * 2", "a * 3")  # the file changed after the import
    assert split_at(_from_source(_STEP, edited), 3, lambda head: head) is None


def test_a_decorated_step_splits_at_its_own_lines() -> None:
    log = []

    @hookgrad.compile(backend="inductor")
    def step(a):
        x = (a * 2).tanh()
        log.append("forward")
        x.sum().backward()
        return x.detach(), a.grad

    for i in range(3):
        a = hookgrad.full((3,), float(i), requires_grad=True)
        x, g = step(a)
        t = float(np.tanh(2.0 * i))
        assert x.tolist() == pytest.approx([t] * 3, rel=1e-5)
        assert g.tolist() == pytest.approx([2 * (1 - t * t)] * 3, abs=1e-6)
    (outer,) = CACHES[step._orig_fn.__code__]
    assert outer.split is not None and log == ["forward"] * 3
