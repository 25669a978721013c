"""`gradcheck` / `gradgradcheck`: results, error types and messages against the oracle, plus
checks that run without torch.
"""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from hookgrad.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from hookgrad.testing._oracle import assert_same


def _x(lib, values=(0.5, -1.0, 2.0)):
    return lib.tensor(list(values), dtype=lib.float64, requires_grad=True)


def _functions(lib):
    F = lib.autograd.Function

    class Cube(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x * x * 3

    class WrongFirst(Cube):  # Cube with a wrong first derivative
        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x * x * 2

    class WrongSecond(Cube):  # right first derivative, but x is treated as a constant in backward
        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.detach() * x.detach() * 3

    class NoUndefined(F):  # backward cannot cope with a missing output gradient
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Cube, WrongFirst, WrongSecond, NoUndefined


# ---------------------------------------------------------------------------------- oracle
_SCENARIOS = {
    "ops_pass": lambda lib, fns: lib.autograd.gradcheck(lambda t: (t * t).exp() / (t + 3),
                                                        (_x(lib),)),
    "two_inputs_two_outputs": lambda lib, fns: lib.autograd.gradcheck(
        lambda a, b: (a * b, (a - b).exp()), (_x(lib), _x(lib, (1.0, 2.0, 3.0)))),
    "function_pass": lambda lib, fns: lib.autograd.gradcheck(fns[0].apply, (_x(lib),)),
    "wrong_first": lambda lib, fns: lib.autograd.gradcheck(fns[1].apply, (_x(lib),)),
    "wrong_first_no_raise": lambda lib, fns: lib.autograd.gradcheck(
        fns[1].apply, (_x(lib),), raise_exception=False),
    "wrong_first_second_input": lambda lib, fns: lib.autograd.gradcheck(
        lambda a, b: a * 2 + fns[1].apply(b), (_x(lib), _x(lib, (1.0, 2.0, 3.0)))),
    "gradgrad_pass": lambda lib, fns: lib.autograd.gradgradcheck(fns[0].apply, (_x(lib),)),
    "gradgrad_ops": lambda lib, fns: lib.autograd.gradgradcheck(
        lambda a, b: (a * b * b).exp(), (_x(lib), _x(lib, (0.1, 0.2, 0.3)))),
    "gradgrad_wrong": lambda lib, fns: lib.autograd.gradgradcheck(
        fns[2].apply, (_x(lib),), (lib.ones(3, dtype=lib.float64, requires_grad=True),)),
    "gradgrad_wrong_no_raise": lambda lib, fns: lib.autograd.gradgradcheck(
        fns[2].apply, (_x(lib),), raise_exception=False),
    "undefined_grad": lambda lib, fns: lib.autograd.gradcheck(
        lambda t: fns[3].apply(t) * 1, (_x(lib),)),
    "no_input_requires_grad": lambda lib, fns: lib.autograd.gradcheck(
        lambda t: t * 2, (lib.ones(2, dtype=lib.float64),)),
    "float32_warns": lambda lib, fns: lib.autograd.gradcheck(
        lambda t: t * 2, (lib.ones(2, requires_grad=True),)),
    "no_differentiable_output": lambda lib, fns: lib.autograd.gradcheck(
        lambda t: (t * 2).detach(), (_x(lib),)),
    "single_tensor_input": lambda lib, fns: lib.autograd.gradcheck(lambda t: t.exp(), _x(lib)),
    "non_tensor_argument": lambda lib, fns: lib.autograd.gradcheck(
        lambda t, k: t * k, (_x(lib), 3.0)),
}


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(_SCENARIOS))
def test_gradcheck_matches_torch(torch, name):
    def scenario(lib, log):
        return _SCENARIOS[name](lib, _functions(lib))

    assert_same(scenario, torch)


@pytest.mark.oracle
def test_gradcheck_error_is_a_runtime_error(torch):
    from torch.autograd.gradcheck import GradcheckError as TorchError

    assert issubclass(TorchError, RuntimeError) and issubclass(GradcheckError, RuntimeError)
    assert GradcheckError.__name__ == TorchError.__name__


# ---------------------------------------------------------------------------------- without torch
def test_gradcheck_passes_on_correct_rules():
    x = _x(hookgrad)
    assert gradcheck(lambda t: (t * t * t).sum(), (x,))
    assert gradcheck(lambda t: (t * t * t).sum(), (x,), fast_mode=True)
    assert gradgradcheck(lambda t: (t * t * t).sum(), (x,))
    assert gradgradcheck(lambda t: (t * t * t).sum(), (x,), fast_mode=True)


def test_gradcheck_fast_mode_detects_wrong_rule():
    _, wrong, wrong2, _ = _functions(hookgrad)
    with pytest.raises(GradcheckError, match="computed in fast mode"):
        gradcheck(wrong.apply, (_x(hookgrad),), fast_mode=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to"):
        gradgradcheck(wrong2.apply, (_x(hookgrad),), fast_mode=True)


def test_gradcheck_restores_inputs():
    x = _x(hookgrad)
    before = x.detach().numpy().copy()
    gradcheck(lambda t: t.exp(), (x,))
    np.testing.assert_array_equal(x.detach().numpy(), before)


def test_gradcheck_detects_non_reentrant_backward():
    calls = []

    class Flaky(hookgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            calls.append(1)
            return g * (2 + 1e-3 * len(calls))

    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(Flaky.apply, (_x(hookgrad),), atol=1e-1, check_undefined_grad=False)
    assert gradcheck(Flaky.apply, (_x(hookgrad),), atol=1e-1, nondet_tol=1.0,
                     check_undefined_grad=False)


def test_gradcheck_check_backward_ad_false_skips():
    _, wrong, _, _ = _functions(hookgrad)
    assert gradcheck(wrong.apply, (_x(hookgrad),), check_backward_ad=False)
