"""``hookgrad.utils.checkpoint`` against ``torch.utils.checkpoint`` (both variants).

Every scenario takes the library as ``lib`` and runs unchanged on torch and hookgrad; it
returns plain data (call counts, forward-hook logs, rounded gradients) so the two runs compare
with ``==``.
"""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import hookgrad
from hookgrad.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

VARIANTS = pytest.mark.parametrize("reentrant", [False, True], ids=["non_reentrant", "reentrant"])


def _cp(lib):
    return importlib.import_module(f"{lib.__name__}.utils.checkpoint")


def _x(lib, requires_grad=True):
    data = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3)
    return lib.tensor(data, requires_grad=requires_grad)


def _w(lib):
    data = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    return lib.tensor(data, requires_grad=True)


def _g(t):
    return None if t is None else np.round(t.detach().numpy().astype(np.float64), 5).tolist()


def _fixed_params(lib, module):
    """Deterministic weights: the two libraries' initialisers draw different numbers."""
    with lib.no_grad():
        for i, p in enumerate(module.parameters()):
            n = int(np.prod(p.shape))
            values = np.cos(np.arange(n, dtype=np.float32) + i).reshape(tuple(p.shape)) / 2
            p.copy_(lib.tensor(values))
    return module


def both(torch, scenario, **kw):
    """Run `scenario(lib, **kw)` on torch and hookgrad; assert equal; return hookgrad's result."""
    expected = scenario(torch, **kw)
    got = scenario(hookgrad, **kw)
    assert got == expected
    return got


# ------------------------------------------------------------------ gradients and call counts
def s_grads_and_calls(lib, reentrant, retain=False):
    calls = []
    w = _w(lib)
    x = _x(lib)

    def f(a):
        calls.append("f")
        return (a @ w).tanh().sin()

    y = _cp(lib).checkpoint(f, x, use_reentrant=reentrant)
    after_forward = len(calls)
    y.sum().backward(retain_graph=retain)
    if retain:
        y.sum().backward()
    return after_forward, len(calls), _g(x.grad), _g(w.grad)


@pytest.mark.oracle
@VARIANTS
def test_checkpoint_grads_and_forward_calls_match_torch(torch, reentrant):
    assert both(torch, s_grads_and_calls, reentrant=reentrant)[:2] == (1, 2)


@pytest.mark.oracle
@VARIANTS
def test_checkpoint_recomputes_per_backward_pass_with_retain_graph(torch, reentrant):
    assert both(torch, s_grads_and_calls, reentrant=reentrant, retain=True)[:2] == (1, 3)


def test_checkpoint_grads_equal_plain_run_without_oracle():
    def run(use_cp):
        w, x = _w(hookgrad), _x(hookgrad)
        f = lambda a: (a @ w).tanh().sin()  # noqa: E731
        y = checkpoint(f, x, use_reentrant=False) if use_cp else f(x)
        y.sum().backward()
        return _g(x.grad), _g(w.grad), _g(y)

    assert run(True) == run(False)


def s_nothing_saved(lib, reentrant):
    calls = []

    def f(a):
        calls.append("f")
        return a + 1

    x = _x(lib)
    _cp(lib).checkpoint(f, x, use_reentrant=reentrant).sum().backward()
    return len(calls), _g(x.grad)


@pytest.mark.oracle
@VARIANTS
def test_checkpoint_nothing_saved_recomputes_only_reentrant(torch, reentrant):
    assert both(torch, s_nothing_saved, reentrant=reentrant)[0] == (2 if reentrant else 1)


def test_checkpoint_unpacked_tensor_released_after_backward():
    """Recomputed activations do not outlive the pass (the graph here is still referenced)."""
    kept = []

    def f(a):
        y = a.sin()
        kept.append(y)
        return y.exp()

    x = _x(hookgrad)
    y = checkpoint(f, x, use_reentrant=False)
    y.sum().backward(retain_graph=True)
    import gc
    import weakref

    recomputed = weakref.ref(kept.pop())
    gc.collect()
    assert recomputed() is None and y.grad_fn is not None


# ------------------------------------------------------------------ outputs, kwargs, modes
def s_tuple_output(lib, reentrant):
    calls = []

    def f(a):
        calls.append("f")
        return a.sin(), a.cos() * 2

    x = _x(lib)
    a, b = _cp(lib).checkpoint(f, x, use_reentrant=reentrant)
    (a * b).sum().backward()
    return len(calls), _g(x.grad)


@pytest.mark.oracle
@VARIANTS
def test_checkpoint_tuple_output_matches_torch(torch, reentrant):
    both(torch, s_tuple_output, reentrant=reentrant)


def s_kwargs(lib, reentrant):
    x = _x(lib)
    y = _cp(lib).checkpoint(lambda a, scale=1.0: (a * scale).sin(), x, scale=3.0,
                            use_reentrant=reentrant)
    y.sum().backward()
    return _g(x.grad)


@pytest.mark.oracle
def test_checkpoint_kwargs_passed_to_function_non_reentrant(torch):
    both(torch, s_kwargs, reentrant=False)


@pytest.mark.oracle
def test_checkpoint_kwargs_rejected_reentrant(torch):
    for lib in (torch, hookgrad):
        with pytest.raises(ValueError, match="^Unexpected keyword arguments: scale$"):
            s_kwargs(lib, reentrant=True)


def s_autograd_grad(lib, reentrant):
    calls = []

    def f(a):
        calls.append("f")
        return a.sin().exp()

    x = _x(lib)
    y = _cp(lib).checkpoint(f, x, use_reentrant=reentrant)
    (gx,) = lib.autograd.grad(y.sum(), x)
    return len(calls), _g(gx)


@pytest.mark.oracle
def test_checkpoint_autograd_grad_works_non_reentrant(torch):
    assert both(torch, s_autograd_grad, reentrant=False)[0] == 2


@pytest.mark.oracle
def test_checkpoint_autograd_grad_refused_reentrant(torch):
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError, match="When use_reentrant=True, torch.utils.checkpoint "
                                               "is incompatible with .grad()"):
            s_autograd_grad(lib, reentrant=True)


def s_params_only(lib, reentrant):
    lin = _fixed_params(lib, lib.nn.Linear(3, 2))
    x = _x(lib, requires_grad=False)
    y = _cp(lib).checkpoint(lambda a: lin(a).tanh(), x, use_reentrant=reentrant)
    if y.requires_grad:
        y.sum().backward()
    return y.requires_grad, lin.weight.grad is not None


@pytest.mark.oracle
def test_checkpoint_params_get_grads_without_input_grad_non_reentrant(torch):
    assert both(torch, s_params_only, reentrant=False) == (True, True)


@pytest.mark.oracle
def test_checkpoint_inputs_without_grad_warn_reentrant(torch):
    for lib in (torch, hookgrad):
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            assert s_params_only(lib, reentrant=True) == (False, False)


def s_under_no_grad(lib, reentrant):
    calls = []
    x = _x(lib)
    with lib.no_grad():
        y = _cp(lib).checkpoint(lambda a: calls.append("f") or a.sin(), x,
                                use_reentrant=reentrant)
    return len(calls), y.requires_grad


@pytest.mark.oracle
def test_checkpoint_under_no_grad_runs_once(torch):
    assert both(torch, s_under_no_grad, reentrant=False) == (1, False)


def s_nested(lib):
    calls = {"outer": 0, "inner": 0}

    def inner(a):
        calls["inner"] += 1
        return a.sin().exp()

    def outer(a):
        calls["outer"] += 1
        return _cp(lib).checkpoint(inner, a.cos(), use_reentrant=False).tanh()

    x = _x(lib)
    _cp(lib).checkpoint(outer, x, use_reentrant=False).sum().backward()
    return calls, _g(x.grad)


@pytest.mark.oracle
def test_checkpoint_nested_matches_torch(torch):
    assert both(torch, s_nested)[0] == {"outer": 2, "inner": 3}


def s_double_backward(lib):
    x = _x(lib)
    y = _cp(lib).checkpoint(lambda a: a.sin() * a, x, use_reentrant=False)
    (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    g.sum().backward()
    return _g(x.grad)


@pytest.mark.oracle
def test_checkpoint_double_backward_matches_torch(torch):
    both(torch, s_double_backward)


@pytest.mark.oracle
@VARIANTS
def test_checkpoint_second_backward_without_retain_raises_like_torch(torch, reentrant):
    for lib in (torch, hookgrad):
        y = _cp(lib).checkpoint(lambda a: a.sin().exp(), _x(lib), use_reentrant=reentrant)
        y.sum().backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
            y.sum().backward()


def test_checkpoint_unpack_twice_in_one_pass_raises_checkpoint_error():
    class Twice(hookgrad.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            ctx.saved_tensors  # noqa: B018 - the first unpack
            return g * 2 * ctx.saved_tensors[0].sign().abs()

    x = _x(hookgrad)
    y = checkpoint(lambda a: Twice.apply(a.sin()), x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="already unpacked once"):
        y.sum().backward()
    assert issubclass(CheckpointError, RuntimeError)


# ------------------------------------------------------------------ warnings
@pytest.mark.oracle
def test_checkpoint_warns_when_use_reentrant_omitted(torch):
    messages = []
    for lib in (torch, hookgrad):
        with pytest.warns(UserWarning, match="use_reentrant parameter should be passed") as rec:
            y = _cp(lib).checkpoint(lambda a: a.sin(), _x(lib))
        assert len(rec) == 1
        messages.append(str(rec[0].message))
        assert type(y.grad_fn).__name__ == "CheckpointFunctionBackward"  # reentrant default
    assert messages[0] == messages[1]


@pytest.mark.oracle
def test_checkpoint_sequential_warns_once_when_use_reentrant_omitted(torch):
    messages = []
    for lib in (torch, hookgrad):
        lib.manual_seed(0)
        seq = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.Tanh(), lib.nn.Linear(3, 3))
        with pytest.warns(UserWarning) as rec:
            _cp(lib).checkpoint_sequential(seq, 2, _x(lib))
        messages.append([str(r.message) for r in rec])
    assert messages[0] == messages[1] and len(messages[0]) == 1
    assert messages[0][0].startswith("torch.utils.checkpoint.checkpoint_sequential:")


def test_checkpoint_explicit_use_reentrant_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for reentrant in (False, True):
            checkpoint(lambda a: a.sin(), _x(hookgrad), use_reentrant=reentrant)


# ------------------------------------------------------------------ RNG and dropout
def s_dropout(lib, reentrant, use_cp=True, preserve=True):
    lib.manual_seed(0)
    x = lib.tensor(np.linspace(-1, 1, 40, dtype=np.float32).reshape(4, 10), requires_grad=True)
    drop = lib.nn.Dropout(0.5)
    f = lambda a: drop(a.sin()).exp()  # noqa: E731
    if use_cp:
        y = _cp(lib).checkpoint(f, x, use_reentrant=reentrant, preserve_rng_state=preserve)
    else:
        y = f(x)
    y.sum().backward()
    return _g(y), _g(x.grad)


@pytest.mark.oracle
@VARIANTS
def test_checkpoint_dropout_preserve_rng_state_matches_plain_run(torch, reentrant):
    """The masks themselves differ between the libraries (different generators); within each
    library the checkpointed run equals the plain one, output and gradient."""
    for lib in (torch, hookgrad):
        assert s_dropout(lib, reentrant) == s_dropout(lib, reentrant, use_cp=False)


@pytest.mark.oracle
@VARIANTS
def test_checkpoint_dropout_without_preserve_rng_state_changes_mask(torch, reentrant):
    for lib in (torch, hookgrad):
        plain = s_dropout(lib, reentrant, use_cp=False)
        unpreserved = s_dropout(lib, reentrant, preserve=False)
        assert unpreserved[0] == plain[0] and unpreserved[1] != plain[1]


def test_checkpoint_restores_outer_rng_state_after_recompute():
    hookgrad.manual_seed(3)
    x = _x(hookgrad)
    y = checkpoint(lambda a: hookgrad.nn.functional.dropout(a.sin(), 0.5), x,
                   use_reentrant=False)
    state = hookgrad.get_rng_state()
    y.sum().backward()
    assert hookgrad.equal(hookgrad.get_rng_state(), state)


# ------------------------------------------------------------------ forward hooks, sequential
def s_sequential(lib, n_layers, segments):
    lib.manual_seed(0)
    log = []
    layers = []
    for i in range(n_layers):
        m = _fixed_params(lib, lib.nn.Linear(3, 3)) if i % 2 == 0 else lib.nn.Tanh()
        m.register_forward_hook(lambda mod, args, out, i=i: log.append(i))
        layers.append(m)
    seq = lib.nn.Sequential(*layers)
    x = _x(lib)
    y = _cp(lib).checkpoint_sequential(seq, segments, x, use_reentrant=False)
    y.sum().backward()
    return log, _g(x.grad), _g(layers[0].weight.grad)


@pytest.mark.oracle
@pytest.mark.parametrize(("n_layers", "segments"), [(10, 2), (7, 2), (6, 3), (5, 1), (9, 4)])
def test_checkpoint_sequential_chunks_and_hook_log_match_torch(torch, n_layers, segments):
    """Same chunking, and forward hooks fire again in recompute only up to torch's early stop."""
    both(torch, s_sequential, n_layers=n_layers, segments=segments)


def s_forward_hooks(lib, reentrant):
    lib.manual_seed(0)
    log = []
    seq = _fixed_params(lib, lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(),
                                               lib.nn.Linear(4, 2)))
    for name, m in seq.named_children():
        m.register_forward_hook(lambda mod, args, out, name=name: log.append(("fwd", name)))
        for pname, p in m.named_parameters():
            p.register_post_accumulate_grad_hook(lambda p, n=f"{name}.{pname}": log.append(n))
    x = _x(lib)
    x.register_hook(lambda g: log.append("x.grad"))
    y = _cp(lib).checkpoint(seq, x, use_reentrant=reentrant)
    log.append("backward")
    y.sum().backward()
    return log, _g(x.grad)


@pytest.mark.oracle
@VARIANTS
def test_checkpoint_module_hook_order_matches_torch(torch, reentrant):
    both(torch, s_forward_hooks, reentrant=reentrant)


def test_checkpoint_sequential_unexpected_kwarg_raises():
    seq = hookgrad.nn.Sequential(hookgrad.nn.Linear(3, 3))
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: foo$"):
        checkpoint_sequential(seq, 1, _x(hookgrad), use_reentrant=False, foo=1)
