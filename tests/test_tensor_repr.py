"""``repr``/``str`` of tensors, compared character for character with PyTorch's printer."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle

_SHAPES = [(), (0,), (1,), (5,), (3, 4), (2, 3, 4), (0, 3), (2, 0, 1), (30,), (1001,), (40, 40),
           (11, 11, 11), (2, 2, 2, 2), (100,)]
_NP_DTYPES = [np.float32, np.float64, np.float16, np.int64, np.int32, np.int16, np.int8,
              np.uint8, np.bool_]
_SPECIAL = [
    [1.0, 2.0], [0.0, 0.0], [np.nan, np.inf, -np.inf, 1.0], [1.5, np.nan], [1e-5, 1.0],
    [1e8, 1.0], [1e9, 1.0], 0.1, -0.0, [-0.0, 1.0], np.nan, [100000.0, 1.0], [123456789.0],
    [1e-10], [-1e-10, 5e20], [0.5, 1000.0], [0.5, 1000.1], [1.0, 1001.0], [65504.0, -65504.0],
    [[1.0, -2.5], [3.25, 4.0]], [np.inf], [-np.inf, np.nan], [1e-4, 1.0], [9.9e-5, 1.0],
]


@pytest.fixture(autouse=True)
def _reset_printoptions(torch):
    yield
    hookgrad.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


def _values(rng: np.random.Generator, shape: tuple, dt: type, scale: float) -> np.ndarray:
    a = rng.standard_normal(shape) * scale
    if dt is np.bool_:
        return a > 0
    if np.dtype(dt).kind in "iu":
        return ((a * 10).astype(np.int64) % (256 if dt is np.uint8 else 100)).astype(dt)
    with np.errstate(over="ignore"):
        return a.astype(dt)


def _pair(torch, arr: np.ndarray) -> tuple[str, str]:
    arr = np.ascontiguousarray(arr)
    return repr(torch.from_numpy(arr.copy())), repr(hookgrad.from_numpy(arr.copy()))


@pytest.mark.parametrize("dt", _NP_DTYPES, ids=lambda d: np.dtype(d).name)
def test_repr_matches_torch_over_shapes_and_scales(torch, dt):
    rng = np.random.default_rng(0)
    for shape in _SHAPES:
        for scale in (1, 1e-5, 1e9, 123.456):
            expected, got = _pair(torch, _values(rng, shape, dt, scale))
            assert got == expected


@pytest.mark.parametrize("values", _SPECIAL, ids=repr)
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.float16], ids=lambda d: d.__name__)
def test_repr_matches_torch_special_floats(torch, values, dt):
    with np.errstate(over="ignore"):
        arr = np.asarray(values, dtype=np.float64).astype(dt)
    expected, got = _pair(torch, arr)
    assert got == expected


@pytest.mark.parametrize("values", [[0, -1, 2**62], [True, False], 7, [255, 0], [[-3, 12]]])
def test_repr_matches_torch_integers_and_bools(torch, values):
    for dt in (np.int64, np.int32, np.uint8, np.bool_):
        arr = np.asarray(values).astype(dt)
        expected, got = _pair(torch, arr)
        assert got == expected


@pytest.mark.parametrize("options", [
    {"precision": 2}, {"precision": 8}, {"threshold": 5}, {"edgeitems": 1, "threshold": 10},
    {"edgeitems": 0, "threshold": 10}, {"linewidth": 40}, {"linewidth": 200},
    {"sci_mode": True}, {"sci_mode": False}, {"profile": "short"}, {"profile": "full"},
    {"profile": "full", "precision": 1},
], ids=repr)
def test_repr_matches_torch_under_printoptions(torch, options):
    hookgrad.set_printoptions(**options)
    torch.set_printoptions(**options)
    rng = np.random.default_rng(1)
    for shape in [(), (5,), (3, 4), (20,), (8, 9), (3, 4, 5), (1200,)]:
        for dt in (np.float32, np.int64, np.float64):
            for scale in (1, 1e-6):
                expected, got = _pair(torch, _values(rng, shape, dt, scale))
                assert got == expected
    assert hookgrad.get_printoptions() == torch._tensor_str.get_printoptions()


def test_printoptions_context_restores(torch):
    with hookgrad.printoptions(precision=1):
        assert repr(hookgrad.tensor([1.25])) == "tensor([1.2])"
    assert hookgrad.get_printoptions() == torch._tensor_str.get_printoptions()


def _scenario_autograd(lib):
    a = lib.tensor([1.5, -2.0, 3.0], requires_grad=True)
    b = lib.tensor([[1.0, 2.0]], dtype=lib.float64, requires_grad=True)
    return [a, a * 2, b, b * b, a.detach(), lib.tensor(2.0, requires_grad=True) * 3]


def test_repr_requires_grad_and_grad_fn_match_torch(torch):
    assert [repr(t) for t in _scenario_autograd(hookgrad)] == [
        repr(t) for t in _scenario_autograd(torch)
    ]


def test_repr_suffix_wraps_like_torch(torch):
    # a long last line pushes the dtype/requires_grad suffixes onto new lines
    for n in (6, 7, 8, 9, 14, 15, 16):
        for lib_dtype in ("float64", "float32"):
            values = [0.123456 * (i + 1) for i in range(n)]
            expected = repr(torch.tensor(values, dtype=getattr(torch, lib_dtype),
                                         requires_grad=True))
            got = repr(hookgrad.tensor(values, dtype=getattr(hookgrad, lib_dtype),
                                       requires_grad=True))
            assert got == expected


@pytest.mark.parametrize("dtype_name", ["float64", "float16", "float32"])
def test_repr_dtype_suffix_follows_default_dtype(torch, dtype_name):
    hookgrad.set_default_dtype(getattr(hookgrad, dtype_name))
    torch.set_default_dtype(getattr(torch, dtype_name))
    for make in (lambda lib: lib.tensor([1.5, 2.0]), lambda lib: lib.zeros(0),
                 lambda lib: lib.tensor([1.5], dtype=lib.float32),
                 lambda lib: lib.tensor([1.5], dtype=lib.float64),
                 lambda lib: lib.tensor([], dtype=lib.int64), lambda lib: lib.ones(0, 2)):
        assert repr(make(hookgrad)) == repr(make(torch))


def test_str_equals_repr_and_format(torch):
    t = hookgrad.tensor([[1.0, 2.0]])
    assert str(t) == repr(t) == f"{t}" == str(torch.tensor([[1.0, 2.0]]))


def test_repr_does_not_bump_version_or_record(torch):
    a = hookgrad.tensor([1.0, 2.0], requires_grad=True)
    b = a * 2
    before = b._version
    repr(b)
    assert b._version == before and b.grad_fn is not None


def _scenario_subclasses(lib):
    class Sub(lib.Tensor):
        pass

    out = [repr(lib.nn.Parameter(lib.ones(2))), repr(lib.nn.Parameter(lib.ones(2, 2) * 0.5))]
    fwad = lib.autograd.forward_ad
    with fwad.dual_level():
        dual = fwad.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]))
        out += [repr(dual), repr(dual * 2)]
    out.append(repr(dual))
    return out


def test_repr_of_parameters_and_dual_tensors_match_torch(torch):
    if not hasattr(hookgrad.nn, "Parameter") or not hasattr(hookgrad.autograd, "forward_ad"):
        pytest.skip("needs nn.Parameter and forward AD")
    assert _scenario_subclasses(hookgrad) == _scenario_subclasses(torch)
