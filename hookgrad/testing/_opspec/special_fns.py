"""OpSpecs: the inverse-normal, erfcx and Bessel functions (``i0``,
``special.ndtri``/``erfcx``/``i0e``/``i1``/``i1e``; the gamma family is in ``gamma.py``).

Inputs stay inside each function's smooth domain ((0, 1) for ndtri).
"""

from __future__ import annotations

from hookgrad.testing._opspec import Arg, OpSpec, Sample


def _s(low: float, high: float) -> list:
    return [Sample((Arg((2, 3), low=low, high=high),), {}, "matrix")]


SPECS = [
    OpSpec("i0", lambda lib, x: lib.i0(x), _s(-2.0, 2.0), prims=("i0",)),
    OpSpec("special_ndtri", lambda lib, x: lib.special.ndtri(x), _s(0.1, 0.9),
           prims=("special_ndtri",)),
    OpSpec("special_erfcx", lambda lib, x: lib.special.erfcx(x), _s(-1.0, 2.0),
           prims=("special_erfcx",)),
    OpSpec("special_i0e", lambda lib, x: lib.special.i0e(x), _s(-2.0, 2.0),
           prims=("special_i0e",)),
    OpSpec("special_i1", lambda lib, x: lib.special.i1(x), _s(-2.0, 2.0), prims=("special_i1",)),
    OpSpec("special_i1e", lambda lib, x: lib.special.i1e(x), _s(-2.0, 2.0),
           prims=("special_i1e",)),
]
