"""Node pre/post hooks and the Node API (spec §4.1-4.3; scenarios 25-30, 32-35)."""

from __future__ import annotations

import pytest

from tests.hooks._scenario import L, check, needs

pytestmark = pytest.mark.oracle


def s_pipeline(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * lib.tensor([5.0, 5.0])
    n = b.grad_fn
    n.register_hook(lambda gi, go: log.append(("post", L(gi), L(go))))
    n.register_prehook(lambda go: (log.append(("pre", L(go))), (go[0] * 2,))[1])
    b.retain_grad()
    b.register_hook(lambda g: (log.append(("tensor", g.tolist())), g + 1)[1])
    b.sum().backward()
    log += [("b.grad", b.grad.tolist()), ("a.grad", a.grad.tolist())]


def test_node_pipeline_order(torch):
    check(s_pipeline, torch, log=[
        ("tensor", [1.0, 1.0]), ("pre", [[2.0, 2.0]]), ("post", [[20.0, 20.0], None], [[4.0, 4.0]]),
        ("b.grad", [2.0, 2.0]), ("a.grad", [20.0, 20.0])])


def s_post_replaces(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a.exp()
    b.grad_fn.register_hook(lambda gi, go: (lib.full_like(gi[0], 7.0),))
    b.grad_fn.register_hook(lambda gi, go: log.append(("second", L(gi))))
    b.sum().backward()
    return a.grad


def test_node_posthook_replaces_grad_inputs(torch):
    check(s_post_replaces, torch, log=[("second", [[7.0, 7.0]])])


def s_none_for_constant(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    c = lib.tensor([3.0, 4.0])
    for y in (c * a, a * c, a + 1, 1 - a, a / c):
        y.grad_fn.register_hook(lambda gi, go: log.append((L(gi), L(go))))
        y.sum().backward()
    return a.grad


def test_node_posthook_grad_inputs_has_none_for_constant_input(torch):
    check(s_none_for_constant, torch)


def s_bad_return(kind, value):
    def scenario(lib, log):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = a * 2
        ret = {
            "list": lambda t: list(t),
            "tensor": lambda t: t[0],
            "int": lambda t: (3,) + t[1:],
            "short": lambda t: t[:-1],
            "long": lambda t: t + t,
            "size": lambda t: (lib.ones(3),) + t[1:],
            "dtype": lambda t: (t[0].to(lib.float64),) + t[1:],
            "none-slot": lambda t: t[:1] + (lib.ones(2),),
            "none-slot-int": lambda t: t[:1] + (3,),
        }[value]
        if kind == "pre":
            b.grad_fn.register_prehook(lambda go: ret(go))
        else:
            b.grad_fn.register_hook(lambda gi, go: ret(gi))
        b.sum().backward()

    return scenario


_BAD_RETURNS = [("list", "TypeError"), ("tensor", "TypeError"), ("int", "TypeError"),
                ("short", "RuntimeError"), ("long", "RuntimeError"), ("size", "RuntimeError"),
                ("dtype", "RuntimeError")]
# A None slot exists only among a post-hook's grad_inputs here (``a * 2`` has a (None, 0) edge).
_NONE_SLOT = [("none-slot", "RuntimeError"), ("none-slot-int", "RuntimeError")]


@pytest.mark.parametrize(
    "kind,value,exc",
    [("pre", v, e) for v, e in _BAD_RETURNS]
    + [("post", v, e) for v, e in _BAD_RETURNS + _NONE_SLOT],
)
def test_node_hook_bad_returns_raise(torch, kind, value, exc):
    check(s_bad_return(kind, value), torch, exc=exc)


def s_named_wrong_length(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2

    def my_post(gi, go):
        return gi + gi

    b.grad_fn.register_hook(my_post)
    b.sum().backward()


def test_node_hook_wrong_length_message_names_hook(torch):
    out = check(s_named_wrong_length, torch, exc="RuntimeError")
    assert "'my_post'" in out["exc"][1]


def s_none_entry_drops(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    c = lib.tensor([3.0, 4.0], requires_grad=True)
    y = a * c
    y.grad_fn.register_hook(lambda gi, go: (None, gi[1]))
    a.register_hook(lambda g: log.append("a-hook"))
    y.sum().backward()
    log.append("|")
    z = a * c
    z.grad_fn.register_prehook(lambda go: (None,))
    z.grad_fn.register_hook(lambda gi, go: log.append(("z-post", L(gi), L(go))))
    z.sum().backward()
    return a.grad, c.grad


def test_node_hook_returning_none_entry_drops_gradient(torch):
    check(s_none_entry_drops, torch)


def s_metadata(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    md = b.grad_fn.metadata
    md["k"] = 1
    return (type(md).__name__, b.grad_fn.metadata is md, b.grad_fn.metadata, b.grad_fn is b.grad_fn,
            isinstance(b.grad_fn, lib.autograd.graph.Node),
            isinstance(b.grad_fn.next_functions[0][0], lib.autograd.graph.Node))


def test_node_metadata_persistent_dict_and_grad_fn_identity_is_stable(torch):
    check(s_metadata, torch)


def s_next_functions(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    c = lib.tensor([3.0, 4.0])
    out = []
    for y in (a + 1, c * a, a.exp(), (a * 1) * (a * 1), a - c, -a, a.sum(), a.view(2, 1)):
        out.append([(None if n is None else n.name(), k) for n, k in y.grad_fn.next_functions])
    acc1 = (a * 1).grad_fn.next_functions[0][0]
    acc2 = (a + 1).grad_fn.next_functions[0][0]
    out.append((acc1 is acc2, acc1.next_functions, acc1.variable is a, type(acc1).__name__,
                acc1._sequence_nr() == 2**64 - 1))
    return out


def test_next_functions_structure(torch):
    check(s_next_functions, torch)


def s_names(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    m = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    exprs = [a + b, a + 1, 1 + a, a - b, a - 1, 1 - a, a * b, a * 2, a / b, a / 2, -a,
             a.exp(), a.sum(), m.sum(1), a.view(2, 1), a.reshape(1, 2), a.clone(),
             a.unsqueeze(0), a.unsqueeze(0).squeeze(0), a.expand(2, 2), a.to(lib.float64)]
    optional = {
        "reciprocal": lambda: [2 / a],
        "pow": lambda: [a ** 2, a ** b, 2 ** a],
        "log": lambda: [a.log()],
        "sqrt": lambda: [a.sqrt()],
        "abs": lambda: [a.abs()],
        "relu": lambda: [a.relu()],
        "sigmoid": lambda: [a.sigmoid()],
        "tanh": lambda: [a.tanh()],
        "softmax": lambda: [a.softmax(-1)],
        "mean": lambda: [a.mean()],
        "max": lambda: [a.max()],
        "__matmul__": lambda: [m @ m, a @ b, m @ a],
        "transpose": lambda: [m.transpose(0, 1)],
        "t": lambda: [m.t()],
        "__getitem__": lambda: [m[0], m[:, 1]],
        "unbind": lambda: [m.unbind()[0]],
    }
    import hookgrad

    for name, make in optional.items():
        if hasattr(hookgrad.Tensor, name):
            exprs += make()
    return [y.grad_fn.name() for y in exprs]


def test_node_names_table(torch):
    check(s_names, torch)


def s_persist(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    h = b.grad_fn.register_prehook(lambda go: log.append("pre"))
    b.grad_fn.register_hook(lambda gi, go: log.append("post"))
    y = b.sum()
    y.backward(retain_graph=True)
    y.backward(retain_graph=True)
    h.remove()
    y.backward()
    return a.grad


def test_node_hooks_persist_across_retained_passes_until_removed(torch):
    check(s_persist, torch, log=["pre", "post", "pre", "post", "post"])


def s_snapshot_node_hooks(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    n = b.grad_fn
    hs = {}

    def pre1(go):
        log.append("pre1")
        hs["pre2"].remove()
        n.register_prehook(lambda go: log.append("pre-late"))
        n.register_hook(lambda gi, go: log.append("post-late"))

    n.register_prehook(pre1)
    hs["pre2"] = n.register_prehook(lambda go: log.append("pre2"))
    b.sum().backward(retain_graph=True)
    log.append("|")
    b.sum().backward()


def test_node_hooks_snapshot_rule(torch):
    check(s_snapshot_node_hooks, torch)


def s_tensor_hook_adds_node_hooks(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    c = a * 2

    def hc(g):
        log.append("hc")
        c.grad_fn.register_prehook(lambda go: log.append("late-pre"))
        c.grad_fn.register_hook(lambda gi, go: log.append("late-post"))

    c.register_hook(hc)
    c.sum().backward()


def test_node_hooks_added_by_tensor_hook_run_same_pass(torch):
    check(s_tensor_hook_adds_node_hooks, torch, log=["hc", "late-pre", "late-post"])


def s_saved_attrs(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([3.0, 4.0], requires_grad=True)
    y = a * b
    e = a.exp()
    s = a * 2
    # Not compared: ``s.grad_fn._saved_other`` of ``a * 2`` (torch: int64 ``tensor(2)``, the
    # wrapped Python number; hookgrad wraps scalars in the tensor's dtype).
    out = [y.grad_fn._saved_self, y.grad_fn._saved_other, y.grad_fn._saved_self is a,
           e.grad_fn._saved_result, e.grad_fn._saved_result is e, s.grad_fn.name(),
           type(y.grad_fn._raw_saved_self).__name__, a.sum().grad_fn._saved_self_sym_sizes]
    y.sum().backward()
    try:
        out.append(y.grad_fn._saved_self)
    except RuntimeError as err:
        out.append(str(err)[:40])
    return out


def test_grad_fn_saved_attributes(torch):
    check(s_saved_attrs, torch)


def s_multi_output_prehook(lib, log):
    m = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    p, q = m.unbind()
    p.grad_fn.register_prehook(lambda go: log.append(("pre", L(go))))
    p.grad_fn.register_hook(lambda gi, go: log.append(("post", L(gi), L(go))))
    (q * 2).sum().backward()
    return m.grad


def test_node_prehook_none_slots_for_multi_output(torch):
    needs("unbind")
    check(s_multi_output_prehook, torch)


def s_custom_function_node_hooks(lib, log):
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * k, x + 1

        @staticmethod
        def backward(ctx, g1, g2):
            log.append(("bw", None if g1 is None else g1.tolist(),
                        None if g2 is None else g2.tolist()))
            return g1 * ctx.k if g1 is not None else g2, None

    a = lib.tensor([1.0, 2.0], requires_grad=True)
    y1, y2 = Twice.apply(a, 3.0)
    n = y1.grad_fn
    y2.register_hook(lambda g: log.append(("y2", g)))
    y1.register_hook(lambda g: log.append(("y1", g.tolist())))
    n.register_prehook(lambda go: log.append(("pre", L(go))))
    n.register_hook(lambda gi, go: log.append(("post", L(gi), L(go))))
    y1.sum().backward()
    return a.grad, n.name(), [(None if f is None else f.name(), k) for f, k in n.next_functions]


def test_custom_function_node_hooks(torch):
    import hookgrad

    if not hasattr(hookgrad.autograd, "Function"):
        pytest.skip("hookgrad.autograd.Function not available yet")
    check(s_custom_function_node_hooks, torch)


def s_prehook_exception(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([1.0, 2.0], requires_grad=True)
    y = a * 2
    z = b * 3

    def bad(go):
        raise ValueError("pre-hook failed")

    y.grad_fn.register_prehook(bad)
    try:
        (y + z).sum().backward()
    except ValueError as e:
        log.append(str(e))
    return a.grad, b.grad


def test_node_hook_exception_propagates(torch):
    check(s_prehook_exception, torch, log=["pre-hook failed"])
