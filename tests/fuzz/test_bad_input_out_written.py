"""``out=`` given to functions that take it: the result is written into ``out`` and ``out`` is
returned, as in PyTorch (issue 27: about a hundred functions took ``out=`` and ignored it,
returning a fresh tensor and leaving ``out`` as it was, which no exception revealed)."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from hookgrad._functional._out import _RESULT_WRITES

pytestmark = pytest.mark.oracle


def _spd(lib):
    return lib.tensor([[4.0, 1.0], [1.0, 3.0]], dtype=lib.float64)


def _m(lib):
    return lib.tensor([[2.0, 1.0], [0.5, 3.0]], dtype=lib.float64)


# name -> (call(lib, out), make_out(lib)); deterministic calls whose values are compared
_CASES = {
    "addmv": (lambda lib, o: lib.addmv(lib.ones(2), lib.eye(2), lib.ones(2), out=o),
              lambda lib: lib.full((2,), 7.0)),
    "addr": (lambda lib, o: lib.addr(lib.ones(2, 2), lib.ones(2), lib.arange(2.0), out=o),
             lambda lib: lib.full((2, 2), 7.0)),
    "inverse": (lambda lib, o: lib.inverse(_m(lib), out=o),
                lambda lib: lib.zeros(2, 2, dtype=lib.float64)),
    "i0": (lambda lib, o: lib.i0(lib.ones(3), out=o), lambda lib: lib.zeros(3)),
    "tensordot": (lambda lib, o: lib.tensordot(lib.ones(2), lib.arange(3.0), dims=0, out=o),
                  lambda lib: lib.zeros(2, 3)),
    "transpose_copy": (lambda lib, o: lib.transpose_copy(lib.arange(6.0).reshape(2, 3), 0, 1,
                                                         out=o), lambda lib: lib.zeros(3, 2)),
    "logspace": (lambda lib, o: lib.logspace(0, 2, 3, out=o), lambda lib: lib.zeros(3)),
    "linalg.inv": (lambda lib, o: lib.linalg.inv(_m(lib), out=o),
                   lambda lib: lib.zeros(2, 2, dtype=lib.float64)),
    "linalg.cholesky": (lambda lib, o: lib.linalg.cholesky(_spd(lib), out=o),
                        lambda lib: lib.zeros(2, 2, dtype=lib.float64)),
    "linalg.eigvalsh": (lambda lib, o: lib.linalg.eigvalsh(_spd(lib), out=o),
                        lambda lib: lib.zeros(2, dtype=lib.float64)),
    "linalg.svdvals": (lambda lib, o: lib.linalg.svdvals(_m(lib), out=o),
                       lambda lib: lib.zeros(2, dtype=lib.float64)),
    "linalg.pinv": (lambda lib, o: lib.linalg.pinv(_m(lib), out=o),
                    lambda lib: lib.zeros(2, 2, dtype=lib.float64)),
    "linalg.multi_dot": (lambda lib, o: lib.linalg.multi_dot([_m(lib), _m(lib)], out=o),
                         lambda lib: lib.zeros(2, 2, dtype=lib.float64)),
    "linalg.matrix_rank": (lambda lib, o: lib.linalg.matrix_rank(_m(lib), out=o),
                           lambda lib: lib.zeros((), dtype=lib.int64)),
    "special.i1": (lambda lib, o: lib.special.i1(lib.ones(3), out=o), lambda lib: lib.zeros(3)),
    "special.ndtri": (lambda lib, o: lib.special.ndtri(lib.tensor([0.25, 0.5]), out=o),
                      lambda lib: lib.zeros(2)),
    "special.bessel_j0": (lambda lib, o: lib.special.bessel_j0(lib.ones(2), out=o),
                          lambda lib: lib.zeros(2)),
    # several results: a tuple of outs
    "linalg.eigh": (lambda lib, o: lib.linalg.eigh(_spd(lib), out=o),
                    lambda lib: (lib.zeros(2, dtype=lib.float64),
                                 lib.zeros(2, 2, dtype=lib.float64))),
    "mode": (lambda lib, o: lib.mode(lib.tensor([[1.0, 1.0, 2.0]]), 1, out=o),
             lambda lib: (lib.zeros(1), lib.zeros(1, dtype=lib.int64))),
    "frexp": (lambda lib, o: lib.frexp(lib.tensor([8.0, 0.75]), out=o),
              lambda lib: (lib.zeros(2), lib.zeros(2, dtype=lib.int32))),
}


def _arrays(t):
    ts = t if isinstance(t, tuple) else (t,)
    return [np.array(x.detach().numpy(), copy=True) for x in ts]


@pytest.mark.parametrize("name", sorted(_CASES))
def test_out_is_written_and_returned(torch, name):
    call, make = _CASES[name]
    seen = []
    for lib in (torch, hookgrad):
        out = make(lib)
        result = call(lib, out)
        outs = out if isinstance(out, tuple) else (out,)
        results = tuple(result) if isinstance(out, tuple) else (result,)
        assert all(r is o for r, o in zip(results, outs, strict=True)), (lib.__name__, name)
        seen.append(_arrays(out))
    for theirs, mine in zip(*seen, strict=True):
        assert theirs.dtype == mine.dtype and theirs.shape == mine.shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("factory", ["rand", "randn", "randint", "randperm", "normal"])
def test_random_factories_fill_out_in_its_dtype(torch, factory):
    calls = {"rand": lambda lib, o: lib.rand(4, out=o),
             "randn": lambda lib, o: lib.randn(4, out=o),
             "randint": lambda lib, o: lib.randint(0, 5, (4,), out=o),
             "randperm": lambda lib, o: lib.randperm(4, out=o),
             "normal": lambda lib, o: lib.normal(0.0, 1.0, (4,), out=o)}
    for lib in (torch, hookgrad):
        dtype = lib.int64 if factory in ("randint", "randperm") else lib.float64
        out = lib.full((4,), 7, dtype=dtype)
        assert calls[factory](lib, out) is out and out.dtype == dtype
        assert not bool((out == 7).all())


def test_every_listed_function_writes_out():
    """Each function of the list, called with an ``out=`` it could not use, at least reaches
    the write: no listed function is left ignoring ``out=``."""
    namespaces = {"torch": hookgrad, "linalg": hookgrad.linalg, "special": hookgrad.special}
    for key, names in _RESULT_WRITES.items():
        for name in names:
            fn = getattr(namespaces[key], name)
            assert fn.__name__ == "call" or hasattr(fn, "__wrapped__"), f"{key}.{name}"
            with pytest.raises(TypeError, match="argument 'out'"):
                fn(out="not a tensor")
