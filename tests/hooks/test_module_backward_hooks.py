"""Module backward hooks against the oracle: spec §8, scenarios 70-81 of §15."""

from __future__ import annotations

import pytest

import tests.nn._reset  # noqa: F401  (resets global module hooks after each test)
from tests.hooks._scenario import L, check

pytestmark = pytest.mark.oracle


def _glob(lib):
    return lib.nn.modules.module


def _mul(lib):
    class Mul(lib.nn.Module):
        def forward(self, x, y, flag=None):
            return x * y * 2, x + y

    return Mul()


def _lin(lib, n_in=2, n_out=2):
    m = lib.nn.Linear(n_in, n_out)
    with lib.no_grad():
        m.weight.copy_(lib.arange(n_in * n_out, dtype=lib.float32).reshape(n_out, n_in) / 10)
        m.bias.fill_(0.5)
    return m


# ---------------------------------------------------------------- 70
def sc_grad_input_zero_vs_none(lib, log):
    m = _mul(lib)
    m.register_full_backward_pre_hook(lambda mod, go: log.append(("bpre", L(go))))
    m.register_full_backward_hook(lambda mod, gi, go: log.append(("bfull", L(gi), L(go))))
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = lib.tensor([3.0, 4.0])
    o1, o2 = m(x, y, "flag")
    (o1.sum() + o2.sum() * 10).backward()
    return log, x.grad


def test_full_backward_hook_grad_input_zero_vs_none(torch):
    check(sc_grad_input_zero_vs_none, torch, log=[
        ("bpre", [[1.0, 1.0], [10.0, 10.0]]),
        ("bfull", [[16.0, 18.0], [0.0, 0.0], None], [[1.0, 1.0], [10.0, 10.0]])])


# ---------------------------------------------------------------- 71
def sc_return_values(lib, log):
    m = _mul(lib)
    m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[1] * 0))
    m.register_full_backward_hook(
        lambda mod, gi, go: (log.append(("bfull", L(gi), L(go))), (gi[0] * 100, None))[1])
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = lib.tensor([3.0, 4.0], requires_grad=True)
    o1, o2 = m(x, y)
    (o1.sum() + o2.sum()).backward()
    return log, x.grad, y.grad is None


def test_full_backward_hook_and_pre_hook_return_values(torch):
    check(sc_return_values, torch, log=[("bfull", [[6.0, 8.0], [2.0, 4.0]], [[1.0, 1.0],
                                                                          [0.0, 0.0]])])


# ---------------------------------------------------------------- 72
@pytest.mark.parametrize("which", ["full", "pre"])
def test_full_backward_wrong_length_errors(torch, which):
    def sc(lib, log):
        m = _mul(lib)
        if which == "full":
            m.register_full_backward_hook(lambda mod, gi, go: (gi[0],))
        else:
            m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[1], go[0]))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        o1, o2 = m(x, lib.ones(2))
        (o1.sum() + o2.sum()).backward()

    check(sc, torch, exc="RuntimeError")


def sc_hook_returns_wrong_shape(lib, log):
    m = _mul(lib)
    m.register_full_backward_hook(lambda mod, gi, go: (lib.ones(3), gi[1]))
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    o1, o2 = m(x, lib.ones(2))
    (o1.sum() + o2.sum()).backward()


def test_full_backward_hook_wrong_shape_uses_node_hook_validation(torch):
    check(sc_hook_returns_wrong_shape, torch, exc="RuntimeError")


# ---------------------------------------------------------------- 73
def sc_no_input_requires_grad(lib, log):
    m = _lin(lib, 2, 1)
    m.register_full_backward_pre_hook(lambda mod, go: log.append(("bpre", [g.shape for g in go])))
    m.register_full_backward_hook(
        lambda mod, gi, go: log.append(("bfull", gi, [tuple(g.shape) for g in go])))
    m(lib.ones(3, 2)).sum().backward()
    return log, m.weight.grad


def test_full_backward_no_input_requires_grad_warning(torch):
    mine = check(sc_no_input_requires_grad, torch)
    assert mine["warnings"] and mine["warnings"][0][1].startswith("Full backward hook is firing")


@pytest.mark.parametrize("ret", ["tensor", "none-tuple"])
def test_full_backward_no_input_requires_grad_return_rule(torch, ret):
    def sc(lib, log):
        m = _lin(lib, 2, 1)
        if ret == "tensor":
            m.register_full_backward_hook(lambda mod, gi, go: (lib.ones(3, 2),))
        else:
            m.register_full_backward_hook(lambda mod, gi, go: (None,))
        m(lib.ones(3, 2)).sum().backward()
        return m.weight.grad

    check(sc, torch)


# ---------------------------------------------------------------- 74
def sc_order_with_tensor_hooks_and_globals(lib, log):
    m = _lin(lib)
    g1 = _glob(lib).register_module_full_backward_pre_hook(lambda mod, go: log.append("G-bpre"))
    g2 = _glob(lib).register_module_full_backward_hook(lambda mod, gi, go: log.append("G-bfull"))
    m.register_full_backward_pre_hook(lambda mod, go: log.append("L-bpre"))
    m.register_full_backward_hook(lambda mod, gi, go: log.append("L-bfull"))
    x = lib.ones(1, 2, requires_grad=True)
    x.register_hook(lambda g: log.append("x-hook"))
    out = m(x)
    out.register_hook(lambda g: log.append("out-hook"))
    out.sum().backward()
    g1.remove()
    g2.remove()
    return log


def test_full_backward_order_with_tensor_hooks_and_globals(torch):
    check(sc_order_with_tensor_hooks_and_globals, torch, log=[
        "out-hook", "G-bpre", "L-bpre", "G-bfull", "L-bfull", "x-hook"])


def sc_prepend_backward_hooks(lib, log):
    m = lib.nn.Identity()
    m.register_full_backward_pre_hook(lambda mod, go: log.append("pre-A"))
    m.register_full_backward_pre_hook(lambda mod, go: log.append("pre-B"), prepend=True)
    m.register_full_backward_hook(lambda mod, gi, go: log.append("full-A"))
    m.register_full_backward_hook(lambda mod, gi, go: log.append("full-B"), prepend=True)
    m(lib.ones(2, requires_grad=True)).sum().backward()
    return log


def test_backward_hooks_prepend(torch):
    check(sc_prepend_backward_hooks, torch, log=["pre-B", "pre-A", "full-B", "full-A"])


def sc_hooks_inside_forward_vs_caller(lib, log):
    class M(lib.nn.Module):
        def forward(self, x):
            x.register_hook(lambda g: log.append("inner-x"))
            return x * 2

    m = M()
    m.register_full_backward_hook(lambda mod, gi, go: log.append("bfull"))
    x = lib.ones(2, requires_grad=True)
    x.register_hook(lambda g: log.append("caller-x"))
    y = m(x)
    y.retain_grad()
    y.sum().backward()
    return log, y.grad, y.grad_fn, y._is_view()


def test_tensor_hooks_inside_forward_run_before_full_hook(torch):
    check(sc_hooks_inside_forward_vs_caller, torch, log=["inner-x", "bfull", "caller-x"])


# ---------------------------------------------------------------- 75
def sc_nested_lifecycle(lib, log):
    class Outer(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = _lin(lib)
            self.b = _lin(lib)

        def forward(self, x):
            return self.b(self.a(x))

    o = Outer()
    for name, mod in (("outer", o), ("a", o.a), ("b", o.b)):
        mod.register_forward_pre_hook(lambda m, a, n=name: log.append(n + ".fpre"))
        mod.register_forward_hook(lambda m, a, r, n=name: log.append(n + ".fwd"))
        mod.register_full_backward_pre_hook(lambda m, go, n=name: log.append(n + ".bpre"))
        mod.register_full_backward_hook(lambda m, gi, go, n=name: log.append(n + ".bfull"))
    x = lib.ones(1, 2, requires_grad=True)
    o(x).sum().backward()
    return log, x.grad, o.a.weight.grad


def test_nested_modules_full_lifecycle_order(torch):
    check(sc_nested_lifecycle, torch, log=[
        "outer.fpre", "a.fpre", "a.fwd", "b.fpre", "b.fwd", "outer.fwd",
        "outer.bpre", "b.bpre", "b.bfull", "a.bpre", "a.bfull", "outer.bfull"])


# ---------------------------------------------------------------- 76
def sc_captured_at_forward_time(lib, log):
    m = lib.nn.Identity()
    h = m.register_full_backward_hook(lambda mod, gi, go: log.append("removed-after-forward"))
    m.register_full_backward_pre_hook(lambda mod, go: log.append("pre"))
    x = lib.ones(2, requires_grad=True)
    y1 = m(x)
    y2 = m(x * 2)
    h.remove()
    m.register_full_backward_hook(lambda mod, gi, go: log.append("added-after-forward"))
    (y1.sum() + y2.sum()).backward(retain_graph=True)
    log.append("|")
    y1.sum().backward()
    return log


def test_backward_hooks_captured_at_forward_time(torch):
    check(sc_captured_at_forward_time, torch)


# ---------------------------------------------------------------- 77
def sc_param_only_grad(lib, log):
    m = _lin(lib)
    m.register_full_backward_pre_hook(lambda mod, go: log.append("bpre"))
    m.register_full_backward_hook(lambda mod, gi, go: log.append("bfull"))
    x = lib.ones(1, 2, requires_grad=True)
    out = m(x)
    g = lib.autograd.grad(out.sum(), [m.weight])
    log.append("|")

    class Const(lib.nn.Module):
        def forward(self, x):
            return self.w * 1

    c = Const()
    c.w = lib.nn.Parameter(lib.ones(2))
    c.register_full_backward_pre_hook(lambda mod, go: log.append("c.bpre"))
    c.register_full_backward_hook(lambda mod, gi, go: log.append("c.bfull"))
    c(x).sum().backward()
    log.append("|")
    with lib.no_grad():
        m(x)
    return log, g


def test_full_backward_hook_not_fired_for_param_only_grad(torch):
    check(sc_param_only_grad, torch, log=["bpre", "|", "c.bpre", "|"])


# ---------------------------------------------------------------- 78
@pytest.mark.parametrize("kind", ["dict", "list"])
def test_module_output_dict_or_list_warns_and_no_hooks(torch, kind):
    def sc(lib, log):
        class M(lib.nn.Module):
            def forward(self, x):
                return {"out": x * 2} if kind == "dict" else [x * 2]

        m = M()
        m.register_full_backward_pre_hook(lambda mod, go: log.append("bpre"))
        m.register_full_backward_hook(lambda mod, gi, go: log.append("bfull"))
        x = lib.ones(2, requires_grad=True)
        r = m(x)
        (r["out"] if kind == "dict" else r[0]).sum().backward()
        return log, x.grad

    mine = check(sc, torch)
    assert mine["warnings"][0][1].startswith("For backward hooks to be called")


def sc_tuple_with_non_tensor_output(lib, log):
    class M(lib.nn.Module):
        def forward(self, x):
            return x * 2, "meta", x * 3

    m = M()
    m.register_full_backward_pre_hook(lambda mod, go: log.append(("bpre", L(go))))
    m.register_full_backward_hook(lambda mod, gi, go: log.append(("bfull", L(gi), L(go))))
    x = lib.ones(2, requires_grad=True)
    a, meta, b = m(x)
    (a.sum() * 5).backward()
    return log, meta, x.grad


def test_tuple_output_with_non_tensor_and_unused_output(torch):
    check(sc_tuple_with_non_tensor_output, torch)


# ---------------------------------------------------------------- 79
def _inplace_after_hooked(lib, log):
    seq = lib.nn.Sequential(_lin(lib), lib.nn.ReLU(inplace=True))
    seq[0].register_full_backward_hook(lambda *a: None)
    return seq(lib.ones(1, 2, requires_grad=True))


def _inplace_inside_hooked(lib, log):
    seq = lib.nn.Sequential(_lin(lib), lib.nn.ReLU(inplace=True))
    seq[1].register_full_backward_hook(lambda *a: None)
    return seq(lib.ones(1, 2, requires_grad=True))


def _inplace_on_output_of_leaf_input(lib, log):
    m = lib.nn.Identity()
    m.register_full_backward_pre_hook(lambda *a: None)
    return m(lib.ones(2, requires_grad=True)).mul_(2)


def _inplace_multi_output(lib, log):
    m = _mul(lib)
    m.register_full_backward_hook(lambda *a: None)
    a, b = m(lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True))
    return b.add_(1)


def _inplace_on_view_of_output(lib, log):
    m = lib.nn.Identity()
    m.register_full_backward_hook(lambda *a: None)
    z = m(lib.ones(2, requires_grad=True) * 1)
    return z[0].add_(1)


def _base_modified_after_forward(lib, log):
    m = lib.nn.Identity()
    m.register_full_backward_hook(lambda *a: None)
    x = lib.ones(2, requires_grad=True) * 1
    y = m(x)
    x.add_(1)
    return y.grad_fn


def _inplace_inside_forward_two_inputs(lib, log):
    class In(lib.nn.Module):
        def forward(self, x, y):
            return x.add_(1)

    m = In()
    m.register_full_backward_hook(lambda *a: None)
    return m(lib.ones(2, requires_grad=True) * 1, lib.ones(2, requires_grad=True) * 1)


@pytest.mark.parametrize("sc", [_inplace_after_hooked, _inplace_inside_hooked,
                                _inplace_on_output_of_leaf_input, _inplace_multi_output,
                                _inplace_on_view_of_output, _base_modified_after_forward,
                                _inplace_inside_forward_two_inputs])
def test_inplace_on_wrapped_tensor_raises_with_advice(torch, sc):
    from tests.hooks._scenario import outcome

    import hookgrad

    theirs = outcome(sc, torch)
    mine = outcome(sc, hookgrad)
    assert theirs["exc"][0] == mine["exc"][0] == "RuntimeError"
    # PyTorch's text first, then what to change (pytorch/pytorch#61519).
    assert mine["exc"][1].startswith(theirs["exc"][1])
    assert "inplace=False" in mine["exc"][1] and "clone" in mine["exc"][1]


def sc_inplace_ok_without_grad(lib, log):
    m = lib.nn.Identity()
    m.register_full_backward_hook(lambda *a: None)
    with lib.no_grad():
        y = m(lib.ones(2, requires_grad=True)).mul_(2)
    return y


def test_inplace_on_output_under_no_grad_is_allowed(torch):
    check(sc_inplace_ok_without_grad, torch)


# ---------------------------------------------------------------- 80
def sc_legacy_hook(lib, log):
    m = _lin(lib, 3, 2)
    m.register_backward_hook(
        lambda mod, gi, go: log.append(("legacy", [None if g is None else tuple(g.shape)
                                                   for g in gi],
                                        [tuple(g.shape) for g in go])))
    x = lib.ones(4, 3, requires_grad=True)
    m(x).sum().backward()
    m(lib.ones(4, 3)).sum().backward()
    return log, x.grad


def test_legacy_backward_hook_sees_last_node_grads_and_warns(torch):
    mine = check(sc_legacy_hook, torch, log=[
        ("legacy", [(2,), (4, 3), (3, 2)], [(4, 2)]),
        ("legacy", [(2,), None, (3, 2)], [(4, 2)])])
    assert [w[0] for w in mine["warnings"]] == ["FutureWarning", "FutureWarning"]


def sc_legacy_hook_replaces(lib, log):
    class M(lib.nn.Module):
        def forward(self, x):
            return (x * 2).exp()

    m = M()
    m.register_backward_hook(lambda mod, gi, go: (log.append(("legacy", L(gi), L(go))),
                                                  (gi[0] * 0,))[1])
    x = lib.zeros(2, requires_grad=True)
    m(x).sum().backward()
    return log, x.grad


def test_legacy_backward_hook_return_replaces_node_grads(torch):
    check(sc_legacy_hook_replaces, torch)


@pytest.mark.parametrize("kind", ["dict", "nested", "multi"])
def test_legacy_backward_hook_warning_variants(torch, kind):
    def sc(lib, log):
        class M(lib.nn.Module):
            def forward(self, x):
                if kind == "dict":
                    return {"a": x * 2}
                if kind == "nested":
                    return (x * 2, x * 3)
                return (x * 2, x.exp())

        m = M()
        m.register_backward_hook(lambda mod, gi, go: log.append(("legacy", L(gi))))
        x = lib.ones(2, requires_grad=True)
        r = m(x)
        (r["a"] if kind == "dict" else r[0]).sum().backward()
        return log

    check(sc, torch)


# ---------------------------------------------------------------- 81
def sc_mixing_local(lib, log):
    m = lib.nn.Identity()
    h = m.register_backward_hook(lambda *a: None)
    h.remove()
    try:
        m.register_full_backward_hook(lambda *a: None)
    except RuntimeError as e:
        log.append(("local", str(e)))
    m2 = lib.nn.Identity()
    m2.register_full_backward_hook(lambda *a: None)
    m2.register_full_backward_pre_hook(lambda *a: None)
    try:
        m2.register_backward_hook(lambda *a: None)
    except RuntimeError as e:
        log.append(("local2", str(e)))
    return log, m._is_full_backward_hook, m2._is_full_backward_hook


def test_legacy_and_full_mixing_errors_and_sticky_flags(torch):
    check(sc_mixing_local, torch)


def sc_mixing_global(lib, log):
    mod = _glob(lib)
    h = mod.register_module_backward_hook(lambda m, gi, go: log.append("G-legacy"))
    x = lib.ones(2, requires_grad=True)

    class M(lib.nn.Module):
        def forward(self, x):
            return x * 2

    m = M()
    m.register_backward_hook(lambda mm, gi, go: log.append("L-legacy"))
    m(x).sum().backward()
    h.remove()
    try:
        mod.register_module_full_backward_hook(lambda *a: None)
    except RuntimeError as e:
        log.append(str(e))
    return log, mod._global_is_full_backward_hook


def test_global_legacy_and_full_mixing_sticky(torch):
    check(sc_mixing_global, torch)


def sc_double_backward_input_hook_skips(lib, log):
    m = lib.nn.Identity()
    m.register_full_backward_hook(lambda mod, gi, go: log.append(("bfull", L(gi))))
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = m(x)
    (g,) = lib.autograd.grad((y * y).sum(), [x], create_graph=True)
    log.append("|")
    g.sum().backward()
    return log, x.grad


def test_full_hook_under_create_graph_and_double_backward(torch):
    check(sc_double_backward_input_hook_skips, torch)


# ---------------------------------------------------------------- extra edge cases
def sc_same_tensor_twice_and_autograd_grad(lib, log):
    m = _mul(lib)
    m.register_full_backward_hook(lambda mod, gi, go: log.append(("bfull", L(gi), L(go))))
    x = lib.tensor([1.0, 3.0], requires_grad=True)
    o1, o2 = m(x, x)
    (g,) = lib.autograd.grad(o1.sum() + 2 * o2.sum(), [x])
    log.append(("grad", g.tolist()))
    o1, o2 = m(x, x)
    (o1.sum()).backward(retain_graph=True)
    o1.sum().backward()
    return log, x.grad


def test_same_tensor_passed_twice_grad_and_retained_passes(torch):
    check(sc_same_tensor_twice_and_autograd_grad, torch)


def sc_create_graph_hook_grads(lib, log):
    m = lib.nn.Identity()
    m.register_full_backward_pre_hook(
        lambda mod, go: log.append(("pre", go[0].requires_grad, lib.is_grad_enabled())))
    m.register_full_backward_hook(lambda mod, gi, go: log.append(("full", gi[0].requires_grad)))
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = m(x * x)
    (g,) = lib.autograd.grad(y.sum(), [x], create_graph=True)
    return log, g, g.grad_fn is not None


def test_hooks_under_create_graph(torch):
    check(sc_create_graph_hook_grads, torch)


def sc_kwargs_tensors_not_wrapped(lib, log):
    class M(lib.nn.Module):
        def forward(self, x, *, w):
            log.append(("fwd", x.grad_fn, w.grad_fn))
            return x * w

    m = M()
    m.register_full_backward_hook(lambda mod, gi, go: log.append(("bfull", L(gi))))
    x = lib.ones(2, requires_grad=True)
    w = lib.full((2,), 3.0, requires_grad=True)
    m(x, w=w).sum().backward()
    return log, x.grad, w.grad


def test_keyword_tensors_are_not_wrapped(torch):
    check(sc_kwargs_tensors_not_wrapped, torch)


def sc_global_hooks_fire_for_every_module(lib, log):
    mod = _glob(lib)
    hs = [mod.register_module_forward_pre_hook(lambda m, a: log.append(("gpre", type(m).__name__))),
          mod.register_module_full_backward_hook(
              lambda m, gi, go: log.append(("gfull", type(m).__name__)))]
    seq = lib.nn.Sequential(_lin(lib), lib.nn.Tanh())
    seq(lib.ones(1, 2, requires_grad=True)).sum().backward()
    for h in hs:
        h.remove()
    seq(lib.ones(1, 2, requires_grad=True)).sum().backward()
    return log


def test_global_hooks_fire_for_every_module(torch):
    check(sc_global_hooks_fire_for_every_module, torch)
