"""Validation errors of ``backward``/``grad`` (spec §13: E13-E21, E43), in-place/version-counter
errors and the non-leaf ``.grad`` warning, against the oracle (exact types and texts).
"""

from __future__ import annotations

from collections import OrderedDict

import pytest

from hookgrad.testing._oracle import assert_same

pytestmark = pytest.mark.oracle


def _a(lib):
    return lib.tensor([1.0, 2.0], requires_grad=True)


_CASES = {
    # E13 implicit seed for a non-scalar root
    "E13_non_scalar": lambda lib: (_a(lib) * 2).backward(),
    "E13_non_scalar_grad": lambda lib: lib.autograd.grad(_a(lib) * 2, _a(lib)),
    # E14 root without grad
    "E14_root": lambda lib: lib.ones(2).sum().backward(),
    "E14_second_root": lambda lib: lib.autograd.backward([(_a(lib) * 2).sum(), lib.ones(1)]),
    "E14_int_root": lambda lib: lib.ones(1, dtype=lib.int64).backward(),
    "E14_grad_output": lambda lib: lib.autograd.grad(lib.ones(2).sum(), [_a(lib)]),
    # E15 seed shape
    "E15_shape": lambda lib: (_a(lib) * 2).backward(lib.ones(3)),
    "E15_shape_grad": lambda lib: lib.autograd.grad(_a(lib) * 2, _a(lib), lib.ones(2, 1)),
    # E16 seed type
    "E16_type": lambda lib: lib.autograd.backward([_a(lib) * 2], [5]),
    "E16_bare_int": lambda lib: (_a(lib) * 2).backward(5),
    # E17 seed count (checked after the zipped seeds were validated)
    "E17_count": lambda lib: lib.autograd.backward([_a(lib) * 2, _a(lib) * 3], [lib.ones(2)]),
    "E17_after_shape": lambda lib: lib.autograd.backward([_a(lib) * 2, _a(lib)], [lib.ones(3)]),
    "E17_extra_ignored": lambda lib: lib.autograd.backward([(_a(lib) * 2).sum()], [None, None]),
    # E18 empty inputs
    "E18_backward": lambda lib: (_a(lib) * 2).sum().backward(inputs=[]),
    "E18_backward_dict": lambda lib: (_a(lib) * 2).sum().backward(inputs={}),
    "E18_grad": lambda lib: lib.autograd.grad((_a(lib) * 2).sum(), []),
    # E19 differentiated tensor without grad
    "E19": lambda lib: lib.autograd.grad((_a(lib) * 2).sum(), [_a(lib), lib.ones(2)]),
    "E19_backward_inputs": lambda lib: (_a(lib) * 2).sum().backward(inputs=[lib.ones(2)]),
    # E20 unused input
    "E20": lambda lib: lib.autograd.grad((_a(lib) * 2).sum(), [_a(lib)]),
    # E21 materialize_grads with allow_unused=False
    "E21": lambda lib: lib.autograd.grad((_a(lib) * 2).sum(), _a(lib), materialize_grads=True,
                                         allow_unused=False),
    # E43 other Mapping types
    "E43_backward": lambda lib: (_a(lib) * 2).sum().backward(inputs=OrderedDict(a=_a(lib))),
    "E43_grad": lambda lib: lib.autograd.grad((_a(lib) * 2).sum(), OrderedDict(a=_a(lib))),
    "grad_variables_and_grad_tensors": lambda lib: lib.autograd.backward(
        (_a(lib) * 2).sum(), grad_tensors=lib.ones(()), grad_variables=lib.ones(())),
}


@pytest.mark.parametrize("case", sorted(_CASES))
def test_entry_point_validation_errors(torch, case):
    def scenario(lib, log):
        return _CASES[case](lib)

    assert_same(scenario, torch)


def _order_of_checks(lib, log):
    a = _a(lib)
    errors = []
    # Seed errors come before the "does not require grad" root check...
    for args in (([lib.ones(2)], [lib.ones(3)]), ([lib.ones(2), a * 2], [None, None])):
        try:
            lib.autograd.backward(*args)
        except RuntimeError as e:
            errors.append(str(e))
    # ... and an output without grad is reported before an input without grad.
    try:
        lib.autograd.grad(lib.ones(2).sum(), [lib.ones(2)])
    except RuntimeError as e:
        errors.append(str(e))
    return errors


def test_order_of_validation_checks(torch):
    assert_same(_order_of_checks, torch)


# ---------------------------------------------------------------------------------- in-place
def _version_error(which):
    def scenario(lib, log):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        if which == "exp_output":
            b = a * 1
            c = b.exp()  # saves its result: b.exp() is modified below
            c.mul_(2)
            c.sum().backward()
        elif which == "mul_input":
            b = a * 1
            c = b * b  # saves b (output 0 of Mul)
            b.add_(1)
            c.sum().backward()
        elif which == "leaf_saved":
            w = lib.tensor([3.0, 4.0])
            c = a * w  # saves w, a plain tensor without grad_fn
            w.mul_(2)
            c.sum().backward()
        elif which == "retained_twice":
            b = a * 1
            c = (b * b).sum()
            c.backward(retain_graph=True)
            b.mul_(3)
            c.backward()
        return a.grad

    return scenario


@pytest.mark.parametrize("which", ["exp_output", "mul_input", "leaf_saved", "retained_twice"])
def test_version_counter_errors(torch, which):
    assert_same(_version_error(which), torch)


def _inplace_ok(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    c = b + 1  # add saves nothing: in-place on b afterwards is fine
    b.mul_(3)
    (c + b).sum().backward()
    log += [b._version, b.grad_fn.name()]
    return a.grad


def test_inplace_after_use_by_op_that_saves_nothing(torch):
    assert_same(_inplace_ok, torch)


def _leaf_inplace(kind):
    def scenario(lib, log):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        if kind == "leaf":
            a.mul_(2)
        elif kind == "leaf_view":
            a.view(2, 1).mul_(2)
        elif kind == "no_grad":
            with lib.no_grad():
                a.mul_(2)
        return a

    return scenario


@pytest.mark.parametrize("kind", ["leaf", "leaf_view", "no_grad"])
def test_inplace_on_leaf_requiring_grad(torch, kind):
    assert_same(_leaf_inplace(kind), torch)


# ---------------------------------------------------------------------------------- warnings
def _nonleaf_grad(lib, log):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    b.sum().backward()
    log.append(b.grad)
    c = a * 3
    c.retain_grad()
    c.sum().backward()
    return c.grad, a.grad


def test_nonleaf_grad_access_warns(torch):
    out = assert_same(_nonleaf_grad, torch)
    assert [w[0] for w in out.warnings] == ["UserWarning"]
