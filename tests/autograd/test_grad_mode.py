"""Grad modes as context managers and decorators, against the oracle."""

from __future__ import annotations

import pytest

import hookgrad
from hookgrad.testing._oracle import assert_same

pytestmark = pytest.mark.oracle


def _state(lib):
    return (lib.is_grad_enabled(), lib.is_inference_mode_enabled())


def _contexts(lib, log):
    a = lib.ones(2, requires_grad=True)
    log.append(_state(lib))
    with lib.no_grad():
        log.append(("no_grad", _state(lib), (a * 2).requires_grad))
        with lib.enable_grad():
            log.append(("enable", _state(lib), (a * 2).requires_grad))
        log.append(("back", _state(lib)))
    with lib.set_grad_enabled(False):
        log.append(("set False", _state(lib), (a * 2).grad_fn))
    log.append(_state(lib))
    with lib.inference_mode():
        log.append(("inference", _state(lib), (a * 2).requires_grad))
        with lib.inference_mode(False):
            log.append(("inference False", _state(lib)))
    with lib.inference_mode(False):
        log.append(("inference(False) outside", _state(lib)))
    log.append(_state(lib))


def test_grad_mode_context_managers(torch):
    assert_same(_contexts, torch)


def _set_grad_enabled_function_form(lib, log):
    lib.set_grad_enabled(False)
    log.append(_state(lib))
    a = lib.ones(2, requires_grad=True)
    log.append((a * 2).requires_grad)
    lib.set_grad_enabled(True)
    log.append(_state(lib))
    log.append((a * 2).requires_grad)


def test_set_grad_enabled_as_function(torch):
    assert_same(_set_grad_enabled_function_form, torch)


def _decorators(lib, log):
    a = lib.ones(2, requires_grad=True)

    @lib.no_grad()
    def f(x):
        log.append(("f", _state(lib)))
        return x * 2

    @lib.enable_grad()
    def g(x):
        log.append(("g", _state(lib)))
        return x * 2

    @lib.set_grad_enabled(False)
    def h(x):
        log.append(("h", _state(lib)))
        return x * 2

    @lib.inference_mode()
    def i(x):
        log.append(("i", _state(lib)))
        return x * 2

    log.append(("after decoration", _state(lib)))
    log.append(f(a).requires_grad)
    with lib.no_grad():
        log.append(g(a).requires_grad)
    log.append(h(a).requires_grad)
    log.append(i(a).requires_grad)
    log.append(_state(lib))


def test_grad_mode_decorators(torch):
    assert_same(_decorators, torch)


def _generator(lib, log):
    @lib.no_grad()
    def gen():
        for k in range(2):
            log.append((k, lib.is_grad_enabled()))
            yield k

    for k in gen():
        log.append(("outside", k, lib.is_grad_enabled()))


def test_no_grad_decorates_generators(torch):
    assert_same(_generator, torch)


def _restored_on_exception(lib, log):
    try:
        with lib.no_grad():
            raise ValueError("boom")
    except ValueError:
        pass
    log.append(_state(lib))
    try:
        with lib.inference_mode():
            raise ValueError("boom")
    except ValueError:
        pass
    log.append(_state(lib))


def test_modes_restored_after_exception(torch):
    assert_same(_restored_on_exception, torch)


def _no_grad_results(lib, log):
    a = lib.ones(2, requires_grad=True)
    with lib.no_grad():
        b = a * 2
    log += [b.requires_grad, b.grad_fn, b.is_leaf]
    try:
        b.register_hook(lambda g: g)
    except RuntimeError as e:
        log.append(str(e))
    try:
        b.sum().backward()
    except RuntimeError as e:
        log.append(str(e))


def test_no_grad_results_are_constants(torch):
    assert_same(_no_grad_results, torch)


def _inference_mode_bare_decorator(lib, log):
    @lib.inference_mode
    def f(x):
        log.append(_state(lib))
        return x * 2

    a = lib.ones(2, requires_grad=True)
    return f(a).requires_grad, _state(lib)


def test_inference_mode_bare_decorator(torch):
    assert_same(_inference_mode_bare_decorator, torch)


def _bare_decorators(lib) -> list:
    @lib.no_grad
    def off(x):
        return (x * 2).requires_grad

    @lib.enable_grad
    def on(x):
        return (x * 2).requires_grad

    x = lib.ones(1, requires_grad=True)
    with lib.no_grad():
        inside = on(x)
    return [off(x), inside, off.__name__, lib.is_grad_enabled()]


@pytest.mark.oracle
def test_bare_no_grad_and_enable_grad_decorators_match_pytorch(torch):
    assert _bare_decorators(hookgrad) == _bare_decorators(torch)


def test_assigning_a_non_tensor_to_data_raises_pytorch_type_error():
    t = hookgrad.ones(2)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got str"):
        t.data = "x"
