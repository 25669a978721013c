"""``Tensor.register_post_accumulate_grad_hook`` (spec §3.3; scenarios 8, 22, 23)."""

from __future__ import annotations

import pytest

from tests.hooks._scenario import check

pytestmark = pytest.mark.oracle


def s_before_accumulation(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    a.grad = lib.tensor([100.0, 100.0])
    a.register_post_accumulate_grad_hook(lambda p: log.append(("post", p is a, p.grad.tolist())))
    a.register_hook(lambda g: log.append(("hook", g.tolist())))
    (a * 3).sum().backward()


def test_leaf_hook_runs_before_accumulation_and_post_accumulate(torch):
    check(s_before_accumulation, torch, log=[("hook", [3.0, 3.0]),
                                              ("post", True, [103.0, 103.0])])


def s_used_twice_fires_once(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    a.register_post_accumulate_grad_hook(lambda p: log.append(("post", p.grad.tolist())))
    a.register_post_accumulate_grad_hook(lambda p: log.append("post2"))
    (a * 3 + a * a).sum().backward()


def test_post_accumulate_fires_once_per_pass_in_order(torch):
    check(s_used_twice_fires_once, torch)


def s_nonleaf(lib, log):
    (lib.ones(2, requires_grad=True) * 2).register_post_accumulate_grad_hook(lambda p: None)


def s_no_grad(lib, log):
    lib.ones(2).register_post_accumulate_grad_hook(lambda p: None)


def s_returns(value):
    def scenario(lib, log):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        a.register_post_accumulate_grad_hook(
            lambda p: p.grad * 0 if value == "tensor" else value
        )
        try:
            (a * 3).sum().backward()
        except Exception as e:
            log.append((type(e).__name__, str(e)))
        return a.grad

    return scenario


@pytest.mark.parametrize("scenario", [s_nonleaf, s_no_grad])
def test_post_accumulate_registration_errors(torch, scenario):
    check(scenario, torch, exc="RuntimeError")


@pytest.mark.parametrize("value", ["tensor", 3])
def test_post_accumulate_hook_return_errors_after_grad_updated(torch, value):
    out = check(s_returns(value), torch)
    assert out["result"][1] == [3.0, 3.0]


def s_sgd_in_hook(lib, log):
    p = lib.tensor([1.0, 2.0], requires_grad=True)

    def step(param):
        with lib.no_grad():
            param.add_(param.grad * -0.5)
        param.grad = None

    p.register_post_accumulate_grad_hook(step)
    for _ in range(2):
        (p * p).sum().backward()
        log.append(p.detach().clone().tolist())
    return p.grad, p


def test_post_accumulate_hook_sgd_update_in_hook(torch):
    check(s_sgd_in_hook, torch, log=[[0.0, 0.0], [0.0, 0.0]])


def s_inputs_and_grad_skip(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    c = lib.tensor([3.0, 4.0], requires_grad=True)
    a.register_post_accumulate_grad_hook(lambda p: log.append("post-a"))
    c.register_post_accumulate_grad_hook(lambda p: log.append("post-c"))
    (a * c).sum().backward(inputs=[c])
    log.append("|")
    lib.autograd.grad((a * c).sum(), [a, c])
    return a.grad, c.grad


def test_post_accumulate_not_fired_for_excluded_leaves_or_grad(torch):
    check(s_inputs_and_grad_skip, torch, log=["post-c", "|"])
