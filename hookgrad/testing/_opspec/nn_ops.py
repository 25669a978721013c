"""OpSpecs: softmax and log_softmax (``torch.softmax``, ``Tensor.log_softmax``...)."""

from __future__ import annotations

from typing import Any

from hookgrad.testing._opspec import Arg, OpSpec, Sample


def _x(shape: tuple[int, ...], **kw: Any) -> tuple[Arg, ...]:
    return (Arg(shape, **kw),)


def _samples() -> list[Sample]:
    return [
        Sample(_x((3, 4)), {"dim": 1}, "last"),
        Sample(_x((3, 4)), {"dim": 0}, "first"),
        Sample(_x((2, 3, 4)), {"dim": -2}, "neg_middle"),
        Sample(_x(()), {"dim": 0}, "zero_d"),
        Sample(_x((3, 4), low=-30.0, high=30.0), {"dim": -1}, "wide_range"),
    ]


def _with_dtype(name: str) -> Any:
    def fn(lib: Any, x: Any, **kw: Any) -> Any:
        return getattr(lib, name)(x.float(), dtype=lib.float64, **kw)

    return fn


SPECS: list[OpSpec] = [
    OpSpec("softmax", lambda lib, x, dim: lib.softmax(x, dim), _samples(), prims=("_softmax",)),
    OpSpec("log_softmax", lambda lib, x, dim: x.log_softmax(dim), _samples(),
           prims=("_log_softmax",)),
    OpSpec("softmax_dtype", _with_dtype("softmax"), [Sample(_x((3, 4)), {"dim": 1}, "f32_to_f64")],
           prims=("_softmax",), atol=1e-6, rtol=1e-5, gradcheck=False, gradgradcheck=False),
    OpSpec("log_softmax_dtype", _with_dtype("log_softmax"),
           [Sample(_x((3, 4)), {"dim": 0}, "f32_to_f64")], prims=("_log_softmax",),
           atol=1e-6, rtol=1e-5, gradcheck=False, gradgradcheck=False),
]
