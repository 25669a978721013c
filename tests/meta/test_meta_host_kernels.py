"""Meta results of the primitives whose cpu kernels read host values (``_ops/_meta_shapes.py``):
shapes, dtypes and strides against PyTorch's meta device, and against hookgrad's own cpu results
(the same layouts), at sizes past the stand-in limit too."""

from __future__ import annotations

import warnings

import pytest

import hookgrad


def _programs(lib):
    f64 = lib.float64

    def a(dev, *s):
        return lib.ones(s, dtype=f64).to(dev)

    def ints(dev, *s, v=0):
        return lib.full(s, v, dtype=lib.int64).to(dev)

    def piv(dev, *s):
        return lib.ones(*s, dtype=lib.int32).to(dev)

    yield "lu_factor_ex", lambda d: tuple(lib.linalg.lu_factor_ex(a(d, 2, 3, 3)))
    yield "lu_factor_ex_wide", lambda d: tuple(lib.linalg.lu_factor_ex(a(d, 3, 5)))
    yield "lu_factor_ex_tall_large", lambda d: tuple(lib.linalg.lu_factor_ex(a(d, 4, 70, 30)))
    yield "lu_factor", lambda d: tuple(lib.linalg.lu_factor(a(d, 2, 4, 4) + lib.eye(4).to(d)))
    yield "lu", lambda d: tuple(lib.linalg.lu(a(d, 2, 4, 3)))
    yield "lu_wide", lambda d: tuple(lib.linalg.lu(a(d, 3, 5)))
    yield "lu_unpack", lambda d: tuple(lib.lu_unpack(a(d, 2, 3, 4), piv(d, 2, 3)))
    yield "lu_solve", lambda d: lib.linalg.lu_solve(a(d, 2, 3, 3), piv(d, 2, 3), a(d, 3, 2))
    yield "lu_solve_right", lambda d: lib.linalg.lu_solve(a(d, 3, 3), piv(d, 3), a(d, 2, 3),
                                                          left=False)
    yield "mode", lambda d: tuple(lib.mode(a(d, 3, 4, 5), 1))
    yield "mode_keepdim", lambda d: tuple(lib.mode(a(d, 3, 4, 5), 1, keepdim=True))
    yield "mode_0d", lambda d: tuple(lib.mode(a(d), 0))
    yield "mode_large", lambda d: tuple(lib.mode(a(d, 30, 40), 0))
    yield "nanmedian_dim", lambda d: tuple(lib.nanmedian(a(d, 3, 4, 5), -1, keepdim=True))
    yield "nanmedian", lambda d: lib.nanmedian(a(d, 3, 4, 5))
    yield "nanmedian_empty", lambda d: lib.nanmedian(a(d, 0))
    yield "scatter_reduce_mean", lambda d: a(d, 4, 5).scatter_reduce(
        0, ints(d, 2, 5), a(d, 2, 5), "mean")
    yield "scatter_reduce_mean_transposed", lambda d: a(d, 5, 4).t().scatter_reduce(
        0, ints(d, 2, 5), a(d, 2, 5), "mean", include_self=False)
    yield "index_reduce", lambda d: a(d, 4, 5).index_reduce(0, ints(d, 2), a(d, 2, 5), "prod")
    yield "index_reduce_transposed", lambda d: a(d, 5, 4).t().index_reduce(
        0, ints(d, 2), a(d, 2, 5), "amax")
    yield "put", lambda d: a(d, 4, 5).put(ints(d, 2), a(d, 2))
    yield "put_transposed", lambda d: a(d, 5, 4).t().put(ints(d, 2), a(d, 2), True)
    yield "put_large", lambda d: a(d, 40, 50).put(ints(d, 3, v=-1), a(d, 3))
    yield "zeta", lambda d: lib.special.zeta(a(d, 3, 1) * 2, a(d, 4))
    yield "zeta_mixed_dtypes", lambda d: lib.special.zeta(lib.ones(3, 1).to(d) * 2, a(d, 4))
    yield "zeta_large", lambda d: lib.special.zeta(a(d, 30, 1) * 2, a(d, 40))


def _metadata(out):
    out = out if isinstance(out, tuple) else (out,)
    return [(tuple(t.shape), str(t.dtype).split(".")[-1], tuple(t.stride()), t.device.type)
            for t in out]


NAMES = [name for name, _ in _programs(hookgrad)]


@pytest.mark.oracle
@pytest.mark.parametrize("name", NAMES)
def test_meta_results_match_torch_meta_and_cpu(torch, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # index_reduce's beta warning
        theirs = _metadata(dict(_programs(torch))[name]("meta"))
        ours = dict(_programs(hookgrad))[name]
        meta, cpu = _metadata(ours("meta")), _metadata(ours("cpu"))
    assert meta == theirs
    assert [m[:3] for m in meta] == [c[:3] for c in cpu]  # the cpu kernels' layouts
