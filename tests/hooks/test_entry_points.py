"""``backward``/``grad`` entry points as seen by hooks (spec §5.1-5.3; scenarios 40-46)."""

from __future__ import annotations

from collections import OrderedDict

import pytest

from tests.hooks._scenario import check

pytestmark = pytest.mark.oracle


def s_validation(case):
    def scenario(lib, log):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y = a * 2
        {
            "E13": lambda: y.backward(),
            "E14": lambda: lib.autograd.backward([y.sum(), lib.ones(1)]),
            "E15": lambda: y.backward(lib.ones(3)),
            "E16": lambda: lib.autograd.backward([y], [3]),
            "E17": lambda: lib.autograd.backward([y, y], [lib.ones(2)]),
            "E18-backward": lambda: y.sum().backward(inputs=[]),
            "E18-grad": lambda: lib.autograd.grad(y.sum(), []),
            "E43": lambda: y.sum().backward(inputs=OrderedDict(a=a)),
            "E10-inputs": lambda: y.sum().backward(inputs=[lib.ones(2)]),
        }[case]()

    return scenario


@pytest.mark.parametrize(
    "case", ["E13", "E14", "E15", "E16", "E17", "E18-backward", "E18-grad", "E43", "E10-inputs"]
)
def test_backward_validation_errors(torch, case):
    check(s_validation(case), torch)


def s_inputs_subset(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    c = lib.tensor([3.0, 4.0], requires_grad=True)
    a.register_hook(lambda g: log.append("ha"))
    c.register_hook(lambda g: log.append("hc"))
    p = a * c
    p.grad_fn.register_hook(lambda gi, go: log.append(("p-post", [g is None for g in gi])))
    p.sum().backward(inputs=[a])
    unused = lib.ones(2, requires_grad=True)
    (a * 2).sum().backward(inputs={"x": a, "u": unused})
    return a.grad, c.grad, unused.grad


def test_backward_inputs_subset_skips_other_leaves_hooks(torch):
    check(s_inputs_subset, torch)


def s_inputs_branch_pruned(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = lib.tensor([1.0, 2.0], requires_grad=True)
    y = a * 2
    z = b * 3
    y.grad_fn.register_prehook(lambda go: log.append("y-node"))
    z.grad_fn.register_prehook(lambda go: log.append("z-node"))
    (y + z).sum().backward(inputs=[a])
    return a.grad, b.grad


def test_backward_inputs_prunes_unneeded_nodes(torch):
    check(s_inputs_branch_pruned, torch, log=["y-node"])


def s_inputs_nonleaf(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    x = a * 2
    x.grad_fn.register_prehook(lambda go: log.append("x-node-runs"))
    x.register_hook(lambda g: log.append(("x-hook", g.tolist())))
    y = (x * 3).sum()
    y.backward(inputs=[x], retain_graph=True)
    log.append((x.retains_grad, x.grad.tolist(), a.grad))
    y.backward()
    return x.grad, a.grad, x.retains_grad


def test_backward_inputs_nonleaf_sets_retains_grad_permanently(torch):
    check(s_inputs_nonleaf, torch)


def s_grad_returns_hook_value(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    c = lib.tensor([3.0, 4.0], requires_grad=True)
    a.register_hook(lambda g: (log.append(("ha", g.tolist())), g * 100)[1])
    c.register_hook(lambda g: log.append("hc"))
    a.register_post_accumulate_grad_hook(lambda p: log.append("post-acc-a"))
    r = lib.autograd.grad((a * c).sum(), a)
    return r, a.grad


def test_grad_returns_hook_modified_value_and_leaves_grad_untouched(torch):
    check(s_grad_returns_hook_value, torch, log=[("ha", [3.0, 4.0])])


def s_grad_capture_before_hooks(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.register_hook(lambda g: (log.append(("hb", g.tolist())), g * 10)[1])
    b.grad_fn.register_prehook(lambda go: log.append("b-pre"))
    r = lib.autograd.grad((b * 3).sum(), [b, a])
    return r


def test_grad_capture_before_hooks_when_node_executes(torch):
    out = check(s_grad_capture_before_hooks, torch, log=[("hb", [3.0, 3.0]), "b-pre"])
    assert [t[1] for t in out["result"]] == [[3.0, 3.0], [60.0, 60.0]]


def s_grad_capture_point_not_executed(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.register_hook(lambda g: (log.append("hb"), g * 10)[1])
    b.grad_fn.register_prehook(lambda go: log.append("b-pre"))
    b.grad_fn.register_hook(lambda gi, go: log.append("b-post"))
    (gb,) = lib.autograd.grad((b * 3).sum(), b)
    (gy,) = lib.autograd.grad(b, b, lib.ones(2))
    return gb, gy, a.grad


def test_grad_capture_point_runs_tensor_hooks_but_not_node(torch):
    check(s_grad_capture_point_not_executed, torch, log=["hb", "hb"])


def s_grad_dict_inputs(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    c = lib.tensor([3.0, 4.0], requires_grad=True)
    return lib.autograd.grad((a * c).sum(), {"first": a, "second": c})


def test_grad_dict_inputs_return_dict(torch):
    check(s_grad_dict_inputs, torch)


def s_grad_unused(case):
    def scenario(lib, log):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        u = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (a * 2).sum()
        return {
            "E19": lambda: lib.autograd.grad(y, [a, lib.ones(2)]),
            "E20": lambda: lib.autograd.grad(y, [a, u]),
            "E21": lambda: lib.autograd.grad(y, [a, u], materialize_grads=True, allow_unused=False),
            "allow_unused": lambda: lib.autograd.grad(y, [a, u], allow_unused=True),
            "materialize": lambda: lib.autograd.grad(y, [a, u], materialize_grads=True),
            "materialize-cg": lambda: lib.autograd.grad(y, [a, u], materialize_grads=True,
                                                       create_graph=True)[1],
            "only_inputs": lambda: lib.autograd.grad(y, [a], only_inputs=False),
            "E14": lambda: lib.autograd.grad(lib.ones(1), [a]),
        }[case]()

    return scenario


@pytest.mark.parametrize(
    "case",
    ["E19", "E20", "E21", "allow_unused", "materialize", "materialize-cg", "only_inputs", "E14"],
)
def test_grad_allow_unused_materialize_and_errors(torch, case):
    check(s_grad_unused(case), torch)


def s_create_graph_double_backward(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (a * a * a).sum()
    a.register_hook(lambda g: log.append(("ha", g.requires_grad)))
    (g,) = lib.autograd.grad(y, a, create_graph=True)
    log.append(g.grad_fn is not None)
    g.sum().backward()
    return a.grad


def test_grad_create_graph_hooks_see_differentiable_grads(torch):
    check(s_create_graph_double_backward, torch)
