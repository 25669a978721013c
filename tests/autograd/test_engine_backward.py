"""Engine entry points against the oracle (spec §1, §5): ``backward`` with retain_graph,
create_graph, ``inputs=``, accumulation, several roots; ``autograd.grad`` options.
"""

from __future__ import annotations

import pytest

from hookgrad.testing._oracle import assert_same

pytestmark = pytest.mark.oracle


# ---------------------------------------------------------------------------------- retain_graph
def _second_backward(expr, retain):
    def scenario(lib, log):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y = expr(lib, a).sum()
        y.backward(retain_graph=retain)
        log.append(a.grad)
        y.backward()
        return a.grad

    return scenario


_EXPRS = {
    "add": lambda lib, a: a + 1,
    "sub": lambda lib, a: a - 1,
    "neg_view": lambda lib, a: (-a).view(2, 1),
    "mul_scalar": lambda lib, a: a * 2,
    "div_scalar": lambda lib, a: a / 2,
    "mul_self": lambda lib, a: a * a,
    "exp": lambda lib, a: a.exp(),
    "mul_one": lambda lib, a: a * 1,
}


@pytest.mark.parametrize("retain", [False, True])
@pytest.mark.parametrize("name", sorted(_EXPRS))
def test_second_backward_fails_only_when_saved_tensors_needed(torch, name, retain):
    assert_same(_second_backward(_EXPRS[name], retain), torch)


def _retain_none_follows_create_graph(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (a * a).sum()
    y.backward(create_graph=True)  # retain_graph=None -> True
    y.backward()
    return a.grad


def test_retain_graph_defaults_to_create_graph(torch):
    assert_same(_retain_none_follows_create_graph, torch)


def _saved_access_after_free(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    y = a * a
    log.append(y.grad_fn._saved_self)
    y.sum().backward()
    return y.grad_fn._saved_self


def test_saved_access_after_free_raises(torch):
    assert_same(_saved_access_after_free, torch)


# ---------------------------------------------------------------------------------- create_graph
def _higher_order(lib, log):
    x = lib.tensor([0.5, -1.0], requires_grad=True)
    y = (x * x * x + x.exp()).sum()  # x**3 + exp(x)
    (g1,) = lib.autograd.grad(y, x, create_graph=True)
    (g2,) = lib.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = lib.autograd.grad(g2.sum(), x, create_graph=True)
    (g4,) = lib.autograd.grad(g3.sum(), x)
    return [g1, g2, g3, g4, g1.grad_fn.name(), g2.grad_fn.name(), g3.requires_grad]


def test_create_graph_up_to_fourth_order(torch):
    assert_same(_higher_order, torch)


def _backward_create_graph(lib, log):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x * x * x).sum().backward(create_graph=True)
    g = x.grad
    log += [g, g.grad_fn.name(), [(f and f.name(), n) for f, n in g.grad_fn.next_functions]]
    (x * x).sum().backward(create_graph=True)
    log += [x.grad, x.grad.grad_fn.name()]
    x.grad = None
    g.sum().backward()
    return x.grad


def test_backward_create_graph_then_differentiate_grad(torch):
    assert_same(_backward_create_graph, torch)


def _grad_mode_inside_hooks(lib, log):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: log.append((lib.is_grad_enabled(), g.requires_grad)))
    lib.autograd.grad((x * x).sum(), x)
    lib.autograd.grad((x * x).sum(), x, create_graph=True)


def test_grad_mode_inside_hooks_follows_create_graph(torch):
    assert_same(_grad_mode_inside_hooks, torch)


# ---------------------------------------------------------------------------------- accumulation
def _accumulate(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    (a * b).sum().backward()
    log += [a.grad, b.grad]
    (a * b).sum().backward()
    log += [a.grad, b.grad]
    a.grad = None
    (a + b).sum().backward()
    return a.grad, b.grad


def test_grads_accumulate_across_calls(torch):
    assert_same(_accumulate, torch)


def _grad_leaves_dot_grad_alone(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    r = lib.autograd.grad((a * 3).sum(), a)
    return r, a.grad


def test_grad_does_not_touch_dot_grad(torch):
    assert_same(_grad_leaves_dot_grad_alone, torch)


# ---------------------------------------------------------------------------------- inputs=
def _inputs_leaf(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    c = lib.tensor([3.0, 4.0], requires_grad=True)
    a.register_hook(lambda g: log.append("ha"))
    c.register_hook(lambda g: log.append("hc"))
    (a * c).sum().backward(inputs=[a])
    log += [a.grad, c.grad]
    (a * c).sum().backward(inputs=c)
    return a.grad, c.grad


def test_backward_inputs_leaf(torch):
    assert_same(_inputs_leaf, torch)


def _inputs_nonleaf(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.grad_fn.register_prehook(lambda go: log.append("b-node"))
    (b * 3).sum().backward(inputs=[b])
    log += [b.retains_grad, b.grad, a.grad]
    (b * 3).sum().backward()
    return b.grad, a.grad


def test_backward_inputs_nonleaf_retains_grad(torch):
    assert_same(_inputs_nonleaf, torch)


def _inputs_dict_and_unused(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    u = lib.tensor([5.0], requires_grad=True)
    (a * 2).sum().backward(inputs={"a": a, "u": u})
    return a.grad, u.grad


def test_backward_inputs_dict_and_unused_leaf(torch):
    assert_same(_inputs_dict_and_unused, torch)


def _grad_inputs(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    c = b.exp()
    r1 = lib.autograd.grad(c.sum(), [b, a], retain_graph=True)
    r2 = lib.autograd.grad(c.sum(), {"x": a, "y": b}, retain_graph=True)
    r3 = lib.autograd.grad(c.sum(), c)
    return r1, r2, r3


def test_grad_nonleaf_and_dict_inputs(torch):
    assert_same(_grad_inputs, torch)


# ---------------------------------------------------------------------------------- allow_unused
def _unused(kind):
    def scenario(lib, log):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0], requires_grad=True)
        y = (a * 2).sum()
        if kind == "error":
            return lib.autograd.grad(y, [a, b])
        if kind == "allow":
            return lib.autograd.grad(y, [a, b], allow_unused=True)
        if kind == "materialize":
            return lib.autograd.grad(y, [b, a], materialize_grads=True)
        if kind == "materialize_create":
            r = lib.autograd.grad(y, [b, a], materialize_grads=True, create_graph=True)
            return r, [g.requires_grad for g in r]
        return lib.autograd.grad(y, [a, b], materialize_grads=True, allow_unused=False)

    return scenario


@pytest.mark.parametrize("kind", ["error", "allow", "materialize", "materialize_create",
                                  "materialize_disallowed"])
def test_allow_unused_and_materialize_grads(torch, kind):
    assert_same(_unused(kind), torch)


# ---------------------------------------------------------------------------------- roots
def _roots(kind):
    def scenario(lib, log):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y = a * 2
        y.register_hook(lambda g: log.append(("y", g.tolist())))
        if kind == "duplicate":
            lib.autograd.backward([y, y], [lib.ones(2), lib.tensor([2.0, 3.0])])
        elif kind == "multiple":
            z = a.exp()
            lib.autograd.backward([y.sum(), z.sum()])
        elif kind == "leaf":
            a.register_hook(lambda g: log.append(("a", g.tolist())))
            a.backward(lib.tensor([3.0, 4.0]))
        elif kind == "grad_multi":
            z = a * a
            return lib.autograd.grad([y, z], a, [lib.ones(2), lib.ones(2)])
        elif kind == "seed_none_for_scalar":
            lib.autograd.backward([y.sum(), y], [None, lib.ones(2)])
        return a.grad

    return scenario


@pytest.mark.parametrize("kind", ["duplicate", "multiple", "leaf", "grad_multi",
                                  "seed_none_for_scalar"])
def test_roots(torch, kind):
    assert_same(_roots(kind), torch)


def _seed_dtype(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    (a * 2).backward(lib.ones(2, dtype=lib.float64))
    r = lib.autograd.grad(a * 3, a, lib.ones(2, dtype=lib.float64))
    return a.grad, r


def test_seed_of_other_float_dtype_is_cast(torch):
    assert_same(_seed_dtype, torch)


def _gradient_edge_inputs(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    edge = lib.autograd.graph.get_gradient_edge(b)
    y = (b.exp() * 3).sum()
    r = lib.autograd.grad(y, edge, retain_graph=True)
    y.backward(inputs=[lib.autograd.graph.get_gradient_edge(a)])
    return r, a.grad


def test_gradient_edges_as_inputs(torch):
    assert_same(_gradient_edge_inputs, torch)
