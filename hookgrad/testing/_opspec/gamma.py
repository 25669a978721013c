"""OpSpecs of the gamma-family primitives, ``erfinv`` (values away from the poles) and
``linalg.solve_triangular``."""

from __future__ import annotations

from hookgrad.testing._opspec import Arg, OpSpec, Sample
from hookgrad.testing._opspec._pointwise_common import unary


def _call(name: str, *args: int) -> object:
    return lambda lib, t: getattr(lib, name)(*args, t)


def _method(name: str, *args: int, inplace: bool = False) -> object:
    if inplace:
        return lambda lib, t: getattr(t.clone(), name + "_")(*args)
    return lambda lib, t: getattr(t, name)(*args)


SPECS = [
    OpSpec("lgamma", _call("lgamma"), unary(0.2, 4.0), prims=("lgamma",)),
    OpSpec("lgamma_negative", _call("lgamma"), unary(-2.9, -2.1), prims=("lgamma",)),
    OpSpec("lgamma_", _method("lgamma", inplace=True), unary(0.2, 4.0, empty=False),
           prims=("lgamma",)),
    OpSpec("digamma", _call("digamma"), unary(0.2, 4.0), prims=("digamma",)),
    OpSpec("digamma_negative", _call("digamma"), unary(-1.9, -1.1), prims=("digamma",)),
    OpSpec("digamma_", _method("digamma", inplace=True), unary(0.2, 4.0, empty=False),
           prims=("digamma",)),
    OpSpec("polygamma_1", _call("polygamma", 1), unary(0.3, 4.0), prims=("polygamma",)),
    OpSpec("polygamma_3", _call("polygamma", 3), unary(0.5, 3.0), prims=("polygamma",)),
    OpSpec("polygamma_method", _method("polygamma", 2), unary(0.5, 3.0), prims=("polygamma",)),
    OpSpec("polygamma_", _method("polygamma", 2, inplace=True), unary(0.5, 3.0, empty=False),
           prims=("polygamma_",)),
    OpSpec("erfinv", _call("erfinv"), unary(-0.9, 0.9), prims=("erfinv",)),
    OpSpec("erfinv_", _method("erfinv", inplace=True), unary(-0.9, 0.9, empty=False),
           prims=("erfinv",)),
]


def _tri(upper: bool, left: bool = True, unit: bool = False) -> object:
    def fn(lib, a, b):
        # a well-conditioned triangle: the other triangle's values must be ignored
        a = a + 3 * lib.eye(a.shape[-1], dtype=a.dtype)
        return lib.linalg.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit)
    return fn


SPECS += [
    OpSpec("solve_triangular_lower", _tri(False), [
        Sample((Arg((3, 3)), Arg((3, 2))), name="2d"),
        Sample((Arg((2, 3, 3)), Arg((3, 4))), name="batched_a")],
           prims=("linalg_solve_triangular",)),
    OpSpec("solve_triangular_upper_right", _tri(True, left=False), [
        Sample((Arg((3, 3)), Arg((2, 3))), name="2d"),
        Sample((Arg((3, 3)), Arg((2, 2, 3))), name="batched_b")],
           prims=("linalg_solve_triangular",)),
    OpSpec("solve_triangular_unit", _tri(False, unit=True), [
        Sample((Arg((3, 3)), Arg((3, 2))), name="2d")], prims=("linalg_solve_triangular",)),
]

SPECS += [
    OpSpec("mvlgamma", lambda lib, t: lib.mvlgamma(t, 3), unary(1.2, 4.0), prims=("mvlgamma",)),
    OpSpec("special_multigammaln", lambda lib, t: lib.special.multigammaln(t, 2),
           unary(0.7, 4.0), prims=("mvlgamma",)),
]

SPECS += [
    # the samples are random (another generator than PyTorch's): the spec exercises the
    # primitive and its gradient path with the draw scaled out; tests/ecosystem checks values
    OpSpec("_standard_gamma", lambda lib, a: lib._standard_gamma(a) * 0 + a,
           unary(0.5, 3.0, empty=False), prims=("_standard_gamma",), gradgradcheck=False,
           forward_ad=False),
    # PyTorch's gradients are approximations; hookgrad evaluates the same ones (ATen's branches)
    OpSpec("_standard_gamma_grad", lambda lib, a, x: lib._standard_gamma_grad(a, x),
           [Sample((Arg((3, 4), low=0.5, high=4.0, requires_grad=False),
                    Arg((3, 4), low=0.2, high=5.0, requires_grad=False)), name="2d"),
            Sample((Arg((5, 4), low=8.5, high=30.0, requires_grad=False),
                    Arg((5, 4), low=5.0, high=40.0, requires_grad=False)), name="large_alpha")],
           prims=("_standard_gamma_grad",), gradcheck=False, gradgradcheck=False,
           forward_ad=False),
    OpSpec("_dirichlet_grad", lambda lib, x, a, t: lib._dirichlet_grad(x, a, a + t),
           [Sample((Arg((3, 4), low=0.01, high=0.99, requires_grad=False),
                    Arg((3, 4), low=0.1, high=4.0, requires_grad=False),
                    Arg((3, 4), low=0.1, high=4.0, requires_grad=False)), name="small"),
            Sample((Arg((4, 3), low=0.2, high=0.8, requires_grad=False),
                    Arg((4, 3), low=6.5, high=30.0, requires_grad=False),
                    Arg((4, 3), low=6.5, high=30.0, requires_grad=False)), name="large")],
           prims=("_dirichlet_grad",), gradcheck=False, gradgradcheck=False, forward_ad=False),
]

SPECS += [
    OpSpec("igamma", lambda lib, a, x: lib.igamma(a, x), [
        Sample((Arg((3, 4), low=0.5, high=4.0, requires_grad=False), Arg((3, 4), low=0.2,
                                                                         high=5.0)), name="2d"),
        Sample((Arg((3, 1), low=0.5, high=4.0, requires_grad=False), Arg((4,), low=0.2,
                                                                         high=5.0)), name="bc")],
           prims=("igamma",), forward_ad=False),
    OpSpec("special_gammaincc", lambda lib, a, x: lib.special.gammaincc(a, x), [
        Sample((Arg((3, 4), low=0.5, high=4.0, requires_grad=False), Arg((3, 4), low=0.2,
                                                                         high=5.0)), name="2d")],
           prims=("igammac",), forward_ad=False),
]

SPECS += [
    # random counts (hookgrad's stream, not PyTorch's): the draw is scaled out, leaving the
    # recorded node and its zero gradient (poisson) or its absence of one (binomial)
    OpSpec("poisson", lambda lib, a: lib.poisson(a) * 0 + a, unary(0.5, 3.0, empty=False),
           prims=("poisson",)),
    OpSpec("binomial", lambda lib, n, p: lib.binomial(n, p) * 0 + n,
           [Sample((Arg((3, 4), low=1.0, high=9.0, requires_grad=False),
                    Arg((3, 4), low=0.1, high=0.9, requires_grad=False)), name="2d")],
           prims=("binomial",), gradcheck=False, gradgradcheck=False, forward_ad=False),
]
