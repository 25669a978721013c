"""``torch._C`` names, autograd extras and the fixes PyTorch's own hook tests needed."""

from __future__ import annotations

import gc
import warnings

import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _both(torch, fn):
    return fn(torch), fn(hookgrad)


def test_current_graph_task_id_and_will_engine_execute_node(torch):
    def scenario(L):
        a = L.ones(2, requires_grad=True)
        b = L.ones(2, requires_grad=True)
        out = (a * 2).sum() + (b * 3).sum()
        seen = []

        def hook(grad):
            seen.append((L._C._current_graph_task_id() != -1,
                         L._C._will_engine_execute_node(a.grad_fn if a.grad_fn else
                                                        (a * 1).grad_fn)))
            return grad

        mul_a = (a * 2)
        node_b = (b * 3).grad_fn
        y = mul_a.sum() + (b * 3).sum()
        mul_a.register_hook(lambda g: seen.append(
            ("exec", L._C._will_engine_execute_node(mul_a.grad_fn),
             L._C._will_engine_execute_node(node_b))))
        L.autograd.grad(y, [a])
        with pytest.raises(RuntimeError):
            L._C._will_engine_execute_node(mul_a.grad_fn)
        out.backward()
        return L._C._current_graph_task_id(), seen

    ref, got = _both(torch, scenario)
    assert got == ref


def test_saved_tensors_hooks_is_enabled(torch):
    def scenario(L):
        before = L._C._autograd._saved_tensors_hooks_is_enabled()
        with L.autograd.graph.disable_saved_tensors_hooks("no"):
            inside = L._C._autograd._saved_tensors_hooks_is_enabled()
        return before, inside, L._C._autograd._saved_tensors_hooks_is_enabled()

    ref, got = _both(torch, scenario)
    assert got == ref


def test_weak_tensor_ref_and_is_grad_enabled(torch):
    def scenario(L):
        t = L.ones(2)
        ref = L._C._WeakTensorRef(t)
        alive = ref.expired()
        del t
        gc.collect()
        with L.no_grad():
            off = L._C.is_grad_enabled()
        return alive, ref.expired(), off, L._C.is_grad_enabled()

    ref, got = _both(torch, scenario)
    assert got == ref


def test_delayed_error(torch):
    def scenario(L):
        x = L.rand(2, requires_grad=True)
        y = L.rand(2, requires_grad=True)
        y_safe = L._C._functions.DelayedError("Boom!", 1)(y)
        out = x.clone().view(-1)
        out += y_safe
        msgs = []
        for run in (lambda: out.sum().backward(retain_graph=True),
                    lambda: L.autograd.grad(out.sum(), y, retain_graph=True)):
            try:
                run()
            except RuntimeError as e:
                msgs.append(str(e))
        ok = L.autograd.grad(out.sum(), x)[0].tolist()
        return (y_safe.requires_grad, y_safe.grad_fn is not None, msgs, ok,
                L.equal(y_safe, y))

    ref, got = _both(torch, scenario)
    assert got == ref


def test_saved_tensor_class_and_multithreading_flag(torch):
    def scenario(L):
        x = L.ones(2, requires_grad=True)
        raw = (x * x).grad_fn._raw_saved_self
        with L.autograd.set_multithreading_enabled(False):
            inside = L._C._is_multithreading_enabled()
        return isinstance(raw, L.autograd.SavedTensor), inside, L._C._is_multithreading_enabled()

    ref, got = _both(torch, scenario)
    assert got == ref


def test_checkpoint_early_stop(torch):
    """With early stop off, recomputation runs the whole function (later hooks fire again)."""
    def scenario(L):
        from importlib import import_module

        ckpt = import_module(f"{L.__name__}.utils.checkpoint")
        counts = []
        for early in (True, False):
            lin1, lin2 = L.nn.Linear(2, 2), L.nn.Linear(2, 2)
            calls = []
            lin2.register_forward_hook(lambda *a: calls.append(1))

            def fn(x, lin1=lin1, lin2=lin2):
                return lin2(lin1(x).exp()).sum()

            x = L.ones(1, 2, requires_grad=True)
            with ckpt.set_checkpoint_early_stop(early):
                y = ckpt.checkpoint(lambda t: lin1(t).exp() * 1.0, x, use_reentrant=False)
                z = lin2(y).sum()
            z.backward()
            counts.append(len(calls))
            calls.clear()
            with ckpt.set_checkpoint_early_stop(early):
                w = ckpt.checkpoint(fn, x, use_reentrant=False)
            w.backward()
            counts.append(len(calls))
        return counts

    ref, got = _both(torch, scenario)
    assert got == ref


def test_gradcheck_warns_before_failing_undefined_grad_check(torch):
    def scenario(L):
        class NoUndefined(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                if g is None:  # an undefined output gradient is refused
                    raise RuntimeError("undefined gradient")
                return g * 2

        x = L.ones(2, dtype=L.float64, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                L.autograd.gradcheck(NoUndefined.apply, (x,), raise_exception=True)
                raised = None
            except Exception as e:  # noqa: BLE001
                raised = type(e).__name__
        msgs = [str(m.message)[:40] for m in w if m.category is UserWarning]
        return raised, msgs

    ref, got = _both(torch, scenario)
    assert got[1] == ref[1] and ref[1]
    assert got[0] == ref[0] == "GradcheckError"


def test_global_forward_hooks_always_called_reads(torch):
    def scenario(L):
        from importlib import import_module

        mod = import_module(f"{L.__name__}.nn.modules.module")
        h1 = L.nn.modules.module.register_module_forward_hook(lambda *a: None, always_call=True)
        h2 = L.nn.modules.module.register_module_forward_hook(lambda *a: None)
        try:
            return (list(mod._global_forward_hooks_always_called.values()),
                    h1.id in mod._global_forward_hooks_always_called,
                    h2.id in mod._global_forward_hooks_always_called)
        finally:
            h1.remove()
            h2.remove()

    ref, got = _both(torch, scenario)
    assert got == ref
