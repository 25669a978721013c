"""Saved-tensor hooks (spec §6.2-6.5; scenarios 54-58)."""

from __future__ import annotations

import pytest

from tests.hooks._scenario import check, needs

pytestmark = pytest.mark.oracle


def _pair(lib, log, tag=""):
    def pack(t):
        log.append((tag + "pack", t.tolist(), lib.is_grad_enabled()))
        return t.detach()

    def unpack(t):
        log.append((tag + "unpack", t.tolist()))
        return t

    return pack, unpack


def s_pack_unpack(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    c = lib.tensor([5.0, 6.0])
    with lib.autograd.graph.saved_tensors_hooks(*_pair(lib, log)):
        e = a.exp()
        m = a * b
        k = a * c
        d = a / b
        log.append("fwd-done")
    for y in (e, m, k, d):
        y.sum().backward(retain_graph=True)
        log.append("|")
    m.sum().backward()
    return a.grad, b.grad


def test_saved_tensors_pack_unpack_order_and_counts(torch):
    check(s_pack_unpack, torch)


def s_pow_example(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(*_pair(lib, log)):
        y = a.pow(2)
        log.append("fwd-done")
    y.sum().backward()
    return a.grad


def test_saved_tensors_pow_example(torch):
    needs("pow")
    check(s_pow_example, torch, log=[("pack", [1.0, 2.0], False), "fwd-done",
                                     ("unpack", [1.0, 2.0])])


def s_saved_attr_unpacks(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(*_pair(lib, log)):
        y = a.exp()
    r1 = y.grad_fn._saved_result
    r2 = y.grad_fn._saved_result
    pack_arg = []
    with lib.autograd.graph.saved_tensors_hooks(lambda t: pack_arg.append(t) or {"k": 1},
                                                lambda p: (log.append(p), a.detach())[1]):
        z = a * 2
        w = a * a
    w.sum().backward()
    return r1, r2, r1 is r2, pack_arg[0] is a, z.grad_fn.name()


def test_saved_attribute_reads_unpack_and_pack_gets_original_object(torch):
    check(s_saved_attr_unpacks, torch)


def s_nesting(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    outer = _pair(lib, log, "outer-")
    inner = _pair(lib, log, "inner-")
    with lib.autograd.graph.saved_tensors_hooks(*outer):
        y = a.exp()
        with lib.autograd.graph.saved_tensors_hooks(*inner):
            z = y.exp()
        w = z * 1.5
    with lib.autograd.graph.saved_tensors_hooks(*_pair(lib, log, "late-")):
        w.sum().backward()
    return a.grad


def test_saved_tensors_nesting_innermost_wins_and_pack_time_pair_used_for_unpack(torch):
    check(s_nesting, torch)


def s_not_called(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    c = lib.tensor([1.0, 2.0])
    with lib.autograd.graph.saved_tensors_hooks(*_pair(lib, log)):
        c.exp()
        c * c
        with lib.no_grad():
            a * a
        y = a * 2 + a / 4 - 1
        (a + a).sum()
    y.sum().backward()
    log.append("|")
    try:
        y.sum().backward()
    except RuntimeError as e:
        log.append(str(e)[:40])
    return a.grad


def test_saved_tensors_not_called_without_grad_or_for_scalars(torch):
    check(s_not_called, torch, log=["|", "Trying to backward through the graph a s"])


def s_unpack_non_tensor(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda p: 3):
        y = a.exp()
    y.sum().backward()


def s_pack_inplace(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1

    def pack(t):
        t.mul_(2)
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda p: p):
        b.exp()


@pytest.mark.parametrize("scenario,exc", [(s_unpack_non_tensor, "TypeError"),
                                          (s_pack_inplace, "RuntimeError")])
def test_saved_tensors_errors(torch, scenario, exc):
    check(scenario, torch, exc=exc)


def s_freed_read(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(*_pair(lib, log)):
        y = a.exp()
    y.sum().backward()
    return y.grad_fn._saved_result


def test_saved_tensor_read_after_free_raises(torch):
    check(s_freed_read, torch, exc="RuntimeError")


def s_disable(case):
    def scenario(lib, log):
        g = lib.autograd.graph
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        if case == "inside":
            with g.disable_saved_tensors_hooks("no hooks here"), g.saved_tensors_hooks(
                    lambda t: t, lambda t: t):
                pass
        elif case == "active":
            with g.saved_tensors_hooks(lambda t: t, lambda t: t), \
                    g.disable_saved_tensors_hooks("entered while active"):
                pass
        elif case == "ops-work":
            with g.disable_saved_tensors_hooks("off"):
                (a.exp() * a).sum().backward()
            return a.grad
        elif case == "nested":
            with g.disable_saved_tensors_hooks("outer msg"):
                with g.disable_saved_tensors_hooks("inner msg"):
                    try:
                        g.saved_tensors_hooks(lambda t: t, lambda t: t).__enter__()
                    except RuntimeError as e:
                        log.append(str(e))
                try:
                    with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                        pass
                except RuntimeError as e:
                    log.append(str(e))
            with g.saved_tensors_hooks(*_pair(lib, log)):
                y = a.exp()
            y.sum().backward()
        elif case == "save_on_cpu":
            with g.disable_saved_tensors_hooks("cpu off"), g.save_on_cpu():
                pass

    return scenario


@pytest.mark.parametrize("case", ["inside", "active", "ops-work", "nested", "save_on_cpu"])
def test_disable_saved_tensors_hooks_semantics(torch, case):
    check(s_disable(case), torch)


def s_register_hooks(case):
    def scenario(lib, log):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        if case == "default-packed":
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                y = a * b
        else:
            y = a * b
        raw = y.grad_fn._raw_saved_self
        raw.register_hooks(*_pair(lib, log))
        log.append("registered")
        log.append(y.grad_fn._saved_self.tolist())
        if case == "twice":
            raw.register_hooks(lambda t: t, lambda t: t)
        y.sum().backward()
        return a.grad, b.grad

    return scenario


@pytest.mark.parametrize("case", ["once", "twice", "default-packed"])
def test_saved_tensor_register_hooks(torch, case):
    check(s_register_hooks(case), torch)


def s_register_hooks_bad_args(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    y = a.exp()
    y.grad_fn._raw_saved_result.register_hooks(lambda t: t)


def test_saved_tensor_register_hooks_arity(torch):
    check(s_register_hooks_bad_args, torch, exc="TypeError", same_message=False)


def s_save_on_cpu(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    with lib.autograd.graph.save_on_cpu():
        y = (a * b).exp()
    with lib.autograd.graph.save_on_cpu(pin_memory=True):
        z = a.exp()
    (y.sum() + z.sum()).backward()
    return a.grad, b.grad, y.grad_fn._saved_result if False else y


def test_save_on_cpu_is_a_transparent_pack_unpack(torch):
    check(s_save_on_cpu, torch)


def s_mutation(allow):
    def scenario(lib, log):
        import contextlib

        a = lib.tensor([1.0, 2.0], requires_grad=True)
        ctx = (lib.autograd.graph.allow_mutation_on_saved_tensors() if allow
               else contextlib.nullcontext())
        with ctx:
            b = a.clone()
            out = (b * b).sum()
            b.mul_(10)
            e = b.exp()
            b.add_(1)
            out.backward()
            log.append(a.grad.tolist())
            (e.sum()).backward()
        return a.grad, b

    return scenario


@pytest.mark.parametrize("allow", [True, False])
def test_allow_mutation_on_saved_tensors(torch, allow):
    check(s_mutation(allow), torch)


def s_mutation_nested(lib, log):
    with lib.autograd.graph.allow_mutation_on_saved_tensors(), \
            lib.autograd.graph.allow_mutation_on_saved_tensors():
        pass


def test_allow_mutation_on_saved_tensors_cannot_nest(torch):
    check(s_mutation_nested, torch, exc="RuntimeError")


def s_mutation_outside(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.allow_mutation_on_saved_tensors():
        b = a.clone()
        out = (b * b).sum()
    out.backward()


def test_allow_mutation_backward_outside_context_fails(torch):
    check(s_mutation_outside, torch, exc="AssertionError")


def s_pack_in_custom_function(lib, log):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    a = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(*_pair(lib, log)):
        y = Square.apply(a)
    y.sum().backward()
    return a.grad


def test_saved_tensors_hooks_apply_to_custom_functions(torch):
    import hookgrad

    if not hasattr(hookgrad.autograd, "Function"):
        pytest.skip("hookgrad.autograd.Function not available yet")
    check(s_pack_in_custom_function, torch)


def s_register_hooks_after_free(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    y = a * a
    raw = y.grad_fn._raw_saved_self
    y.sum().backward()
    raw.register_hooks(lambda t: t, lambda t: t)


def s_register_hooks_values(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    y = a.exp()
    raw = y.grad_fn._raw_saved_result
    raw.register_hooks(
        lambda t: (log.append(("pack", t.tolist(), t.requires_grad)), 7)[1],
        lambda p: (log.append(("unpack", p)), lib.ones(2))[1])
    r = y.grad_fn._saved_result
    y.sum().backward()
    return r, a.grad


@pytest.mark.parametrize("scenario", [s_register_hooks_after_free, s_register_hooks_values])
def test_saved_tensor_register_hooks_after_free_and_values(torch, scenario):
    check(scenario, torch)


_SAVE_TABLE = {
    # spec §1.5: what each op saves, observed through pack hooks (and the second-backward error)
    "add": ("__add__", lambda lib, a, b, c: a + b),
    "sub": ("__sub__", lambda lib, a, b, c: a - b),
    "neg": ("__neg__", lambda lib, a, b, c: -a),
    "sum": ("sum", lambda lib, a, b, c: a.sum()),
    "mean": ("mean", lambda lib, a, b, c: a.mean()),
    "view": ("view", lambda lib, a, b, c: a.view(2, 1)),
    "t": ("t", lambda lib, a, b, c: a.view(2, 1).t()),
    "clone": ("clone", lambda lib, a, b, c: a.clone()),
    "cat": ("__add__", lambda lib, a, b, c: lib.cat([a, b])),
    "index": ("__getitem__", lambda lib, a, b, c: a[1:]),
    "mul": ("__mul__", lambda lib, a, b, c: a * b),
    "div": ("__truediv__", lambda lib, a, b, c: a / b),
    "matmul": ("__matmul__", lambda lib, a, b, c: a @ b),
    "mul-const": ("__mul__", lambda lib, a, b, c: a * c),
    "div-const": ("__truediv__", lambda lib, a, b, c: a / c),
    "matmul-const": ("__matmul__", lambda lib, a, b, c: a @ c),
    "mul-scalar": ("__mul__", lambda lib, a, b, c: a * 2),
    "div-scalar": ("__truediv__", lambda lib, a, b, c: a / 2),
    "exp": ("exp", lambda lib, a, b, c: a.exp()),
    "relu": ("relu", lambda lib, a, b, c: a.relu()),
    "sigmoid": ("sigmoid", lambda lib, a, b, c: a.sigmoid()),
    "tanh": ("tanh", lambda lib, a, b, c: a.tanh()),
    "sqrt": ("sqrt", lambda lib, a, b, c: a.sqrt()),
    "log": ("log", lambda lib, a, b, c: a.log()),
    "pow-scalar": ("__pow__", lambda lib, a, b, c: a ** 2),
}


def s_save_table(op):
    def scenario(lib, log):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        c = lib.tensor([5.0, 6.0])
        with lib.autograd.graph.saved_tensors_hooks(*_pair(lib, log)):
            y = _SAVE_TABLE[op][1](lib, a, b, c).sum()
        y.backward()
        log.append("second:")
        y.backward()

    return scenario


@pytest.mark.parametrize("op", list(_SAVE_TABLE))
def test_saved_values_per_op_and_second_backward(torch, op):
    needs(_SAVE_TABLE[op][0])
    if op == "cat":
        import hookgrad

        if not hasattr(hookgrad, "cat"):
            pytest.skip("hookgrad lacks cat")
    check(s_save_table(op), torch)
