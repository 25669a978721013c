"""``Tensor.register_hook`` (spec §3.1; scenarios 7, 10-19, 24)."""

from __future__ import annotations

import functools

import pytest

from tests.hooks._scenario import check, needs

pytestmark = pytest.mark.oracle


def s_leaf_chain(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    a.register_hook(lambda g: log.append(("h1", g.tolist())))
    a.register_hook(lambda g: (log.append(("h2", g.tolist())), g * 10)[1])
    a.register_hook(lambda g: log.append(("h3", g.tolist())))
    (a * 3).sum().backward()
    log.append(("a.grad", a.grad.tolist()))


def test_leaf_hook_chain_and_replacement(torch):
    check(s_leaf_chain, torch, log=[("h1", [3.0, 3.0]), ("h2", [3.0, 3.0]),
                                     ("h3", [30.0, 30.0]), ("a.grad", [30.0, 30.0])])


def s_nonleaf_chain(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.register_hook(lambda g: (log.append(("b1", g.tolist())), g + 1)[1])
    b.register_hook(lambda g: log.append(("b2", g.tolist())))
    (b * b).sum().backward()
    return a.grad


def test_nonleaf_hook_chain_and_replacement(torch):
    check(s_nonleaf_chain, torch)


def s_used_twice(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.register_hook(lambda g: log.append(("b", g.tolist())))
    a.register_hook(lambda g: log.append(("a", g.tolist())))
    (b * 3 + b * 4 + a).sum().backward()
    return a.grad


def test_hook_on_tensor_used_twice_fires_once_with_sum(torch):
    check(s_used_twice, torch, log=[("b", [7.0, 7.0]), ("a", [15.0, 15.0])])


def s_unused_branch(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([1.0, 2.0], requires_grad=True)
    u = b * 5
    u.register_hook(lambda g: log.append("u"))
    b.register_hook(lambda g: log.append("b"))
    a.register_hook(lambda g: log.append("a"))
    (a * 2).sum().backward()
    return b.grad


def test_hook_not_called_for_unused_branch(torch):
    check(s_unused_branch, torch, log=["a"])


def s_registered_during_backward(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    c = b * 3

    def hc(g):
        log.append("hc")
        b.register_hook(lambda g: log.append(("hb-late", g.tolist())))
        c.register_hook(lambda g: log.append("hc-late"))

    c.register_hook(hc)
    c.sum().backward(retain_graph=True)
    log.append("|")
    c.sum().backward()


def test_hook_registered_during_backward_on_pending_tensor_fires(torch):
    check(s_registered_during_backward, torch)


def s_registered_on_leaf_during_backward(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2

    def hb(g):
        log.append("hb")
        a.register_hook(lambda g: log.append(("ha-late", g.tolist())))

    b.register_hook(hb)
    b.sum().backward()
    return a.grad


def test_hook_registered_on_leaf_during_backward_fires(torch):
    check(s_registered_on_leaf_during_backward, torch, log=["hb", ("ha-late", [2.0, 2.0])])


def s_wrong_size(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    a.register_hook(lambda g: lib.ones(3))
    (a * 2).sum().backward()


def s_broadcastable_size(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.register_hook(lambda g: lib.ones(1))
    b.sum().backward()


def test_hook_return_wrong_size_raises(torch):
    check(s_wrong_size, torch, exc="RuntimeError")


def test_hook_return_broadcastable_size_raises(torch):
    check(s_broadcastable_size, torch, exc="RuntimeError")


def s_wrong_dtype(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    a.register_hook(lambda g: g.to(lib.float64))
    (a * 2).sum().backward()


def s_wrong_dtype_named(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)

    def my_hook(g):
        return g.to(lib.float64)

    a.register_hook(my_hook)
    (a * 2).sum().backward()


def s_int_return(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    a.register_hook(lambda g: 3)
    (a * 2).sum().backward()


class _Callable:
    def __call__(self, g):
        return g.sum().unsqueeze(0).expand(5) * 1


def s_unknown_name(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    a.register_hook(_Callable())
    (a * 2).sum().backward()


def s_partial_name(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    a.register_hook(functools.partial(lambda k, g: lib.ones(k), 4))
    (a * 2).sum().backward()


@pytest.mark.parametrize(
    "scenario,exc",
    [(s_wrong_dtype, "RuntimeError"), (s_wrong_dtype_named, "RuntimeError"),
     (s_int_return, "TypeError"), (s_unknown_name, "RuntimeError"),
     (s_partial_name, "RuntimeError")],
)
def test_hook_return_type_errors_and_names(torch, scenario, exc):
    check(scenario, torch, exc=exc)


def s_exception_propagates(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([1.0, 2.0], requires_grad=True)
    y = a * 2
    z = b * 3  # created later: runs first, b accumulates before a's hook raises

    class Boom(Exception):
        pass

    def raiser(g):
        raise KeyError("boom from hook")

    a.register_hook(raiser)
    try:
        (y + z).sum().backward()
    except KeyError as e:
        log.append(("caught", type(e).__name__, str(e)))
    return a.grad, b.grad


def test_hook_exception_propagates_unchanged(torch):
    check(s_exception_propagates, torch)


def s_no_grad_register(lib, log):
    out = []
    for make in (lambda: lib.ones(2), lambda: lib.ones(2, requires_grad=True).detach()):
        try:
            make().register_hook(lambda g: None)
        except RuntimeError as e:
            out.append(str(e))
    a = lib.ones(2, requires_grad=True)
    with lib.no_grad():
        b = a * 2
    try:
        b.register_hook(lambda g: None)
    except RuntimeError as e:
        out.append(str(e))
    return out


def test_register_hook_on_non_requires_grad_raises(torch):
    out = check(s_no_grad_register, torch)
    assert len(out["result"]) == 3


def s_none_for_unused_output(lib, log):
    a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    p, q = a.unbind()
    q.register_hook(lambda g: log.append(("q", g)))
    p.register_hook(lambda g: log.append(("p", g.tolist())))
    p.sum().backward()
    return a.grad


def s_none_replaced(lib, log):
    a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    p, q = a.unbind()
    q.register_hook(lambda g: lib.ones(2))
    p.sum().backward()


def test_hook_receives_none_for_unused_multi_output(torch):
    needs("unbind")
    check(s_none_for_unused_output, torch, log=[("q", None), ("p", [1.0, 1.0])])
    check(s_none_replaced, torch, exc="RuntimeError")


def s_grouped_per_tensor(lib, log):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    p, q = x.unbind()
    q.register_hook(lambda g: log.append("q.h1"))
    p.register_hook(lambda g: log.append("p.h1"))
    q.register_hook(lambda g: log.append("q.h2"))
    (p * 2 + q * 3).sum().backward()
    return x.grad


def test_hooks_grouped_per_tensor_on_multi_output_node(torch):
    needs("unbind")
    check(s_grouped_per_tensor, torch, log=["q.h1", "q.h2", "p.h1"])


def s_inplace_old_new(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    x = a.clone()
    x.register_hook(lambda g: log.append(("before", g.tolist())))
    x.mul_(2)
    x.register_hook(lambda g: log.append(("after", g.tolist())))
    (x * 5).sum().backward()
    return a.grad, x.grad_fn


def test_inplace_hooks_old_and_new_version(torch):
    check(s_inplace_old_new, torch, log=[("after", [5.0, 5.0]), ("before", [10.0, 10.0])])


def s_inplace_retain_follows(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    x = a.clone()
    x.retain_grad()
    x.register_hook(lambda g: log.append(("before", g.tolist())))
    x.mul_(3)
    (x * 5).sum().backward()
    return x.grad, x.retains_grad


def test_inplace_retain_grad_follows_tensor(torch):
    check(s_inplace_retain_follows, torch)


def s_inplace_on_leaf(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    a.mul_(2)


def test_inplace_on_leaf_requiring_grad_raises(torch):
    check(s_inplace_on_leaf, torch, exc="RuntimeError")


def s_view_hooks(lib, log):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base = a * 1
    v = base[:2] if hasattr(base, "__getitem__") else None
    v.register_hook(lambda g: log.append(("v", g.tolist())))
    base.register_hook(lambda g: log.append(("base", g.tolist())))
    (v * 2).sum().backward()
    return a.grad


def test_view_hook_and_base_hook(torch):
    needs("__getitem__")
    check(s_view_hooks, torch)


def s_view_inplace(lib, log):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    base = a * 1
    v = base[:2]
    base.register_hook(lambda g: log.append(("base-old", g.tolist())))
    v.register_hook(lambda g: log.append(("v-old", g.tolist())))
    v.mul_(10)
    base.register_hook(lambda g: log.append(("base-new", g.tolist())))
    (base * 2).sum().backward()
    return a.grad, base.grad_fn


def test_view_inplace_hooks(torch):
    needs("__getitem__")
    check(s_view_inplace, torch)


def s_grad_mode_in_hooks(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * a

    def probe(tag):
        return lambda g: log.append((tag, lib.is_grad_enabled(), g.requires_grad))

    a.register_hook(probe("a"))
    b.register_hook(probe("b"))
    b.grad_fn.register_prehook(lambda go: log.append(("pre", lib.is_grad_enabled())))
    b.grad_fn.register_hook(lambda gi, go: log.append(("post", lib.is_grad_enabled())))
    a.register_post_accumulate_grad_hook(lambda p: log.append(("acc", lib.is_grad_enabled())))
    b.sum().backward(retain_graph=True)
    log.append("|")
    (ga,) = lib.autograd.grad(b.sum(), a, create_graph=True)
    log.append("|")
    a.grad = None
    b.sum().backward(create_graph=True)
    a.grad = None
    return ga, lib.is_grad_enabled()


def test_hook_grad_mode_plain_vs_create_graph(torch):
    check(s_grad_mode_in_hooks, torch)


def s_hook_adds_hook_to_sibling(lib, log):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    p, q = x.unbind()

    def hp(g):
        log.append("p1")
        q.register_hook(lambda g: log.append("q-late"))
        p.register_hook(lambda g: log.append("p-late"))

    p.register_hook(hp)
    q.register_hook(lambda g: log.append("q1"))
    (p * 2 + q * 3).sum().backward()
    log.append("|")
    y = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    r, s = y.unbind()

    def hr(g):
        s.register_hook(lambda g: log.append("s-first-late"))

    r.register_hook(hr)
    (r * 2 + s * 3).sum().backward()


def test_hook_added_to_sibling_output_during_step_runs_if_group_exists(torch):
    needs("unbind")
    check(s_hook_adds_hook_to_sibling, torch, log=["p1", "q1", "q-late", "|"])


def s_root_hook_gets_seed(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (a * 2).sum()
    y.register_hook(lambda g: (log.append(("root", g.tolist())), g * 2)[1])
    y.backward(lib.tensor(5.0))
    z = a * 3
    z.register_hook(lambda g: log.append(("z", g.tolist())))
    lib.autograd.backward([z, z], [lib.ones(2), lib.full((2,), 2.0)])
    return a.grad


def test_root_tensor_hook_receives_seed(torch):
    check(s_root_hook_gets_seed, torch, log=[("root", 5.0), ("z", [3.0, 3.0])])


def s_view_of_leaf_hooks(lib, log):
    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = a.view(3, 1)
    v.register_hook(lambda g: log.append(("v", g.tolist())))
    v.retain_grad()
    w = a[1:]
    w.register_hook(lambda g: log.append(("w", g.tolist())))
    (v.sum() * 2 + w.sum() * 3).backward()
    return a.grad, v.grad, w.grad


def test_hooks_on_views_of_leaf(torch):
    needs("__getitem__")
    check(s_view_of_leaf_hooks, torch)


def s_create_graph_hooks(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * a
    b.register_hook(lambda g: g * a)  # a differentiable replacement
    (gb,) = lib.autograd.grad(b.sum(), a, create_graph=True)
    log.append(gb.tolist())
    gb.sum().backward()
    return a.grad


def test_hook_replacement_is_differentiated_under_create_graph(torch):
    check(s_create_graph_hooks, torch)
