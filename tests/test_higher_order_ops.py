"""``_higher_order_ops.scan``/``associative_scan``/``map`` against PyTorch's eager runs:
values and gradients bit for bit (same order of operations), and PyTorch's error types."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import numpy as np
import pytest

import hookgrad


def _hop(lib: Any, name: str) -> Any:
    return importlib.import_module(f"{lib.__name__}._higher_order_ops.{name}")


def _scans(lib: Any) -> list:
    scan = _hop(lib, "scan").scan
    ascan = _hop(lib, "associative_scan").associative_scan
    lib.manual_seed(0)
    x = lib.randn(5, 4, dtype=lib.float64).requires_grad_()
    carry, ys = scan(lambda c, v: (c * 0.9 + v, (c * v).sin()), lib.zeros(4, dtype=lib.float64), x)
    (carry.sum() + ys.sum()).backward()
    out = [carry, ys, x.grad]
    tree_carry, tree_ys = scan(lambda c, v: ({"a": c["a"] * v}, [v + 1, v * 2]),
                               {"a": lib.ones(5, dtype=lib.float64)}, x, dim=1, reverse=True)
    out += [tree_carry["a"], *tree_ys]
    xx = lib.randn(3, 7, requires_grad=True)
    prod = ascan(lambda a, b: a * b, xx, 1, combine_mode="generic")
    prod.sum().backward()
    out += [prod, xx.grad]
    out += list(ascan(lambda a, b: (a[0] + b[0], a[1] * b[1]), (lib.randn(6, 2), lib.randn(6, 2)),
                      0, reverse=True, combine_mode="generic"))
    out.append(ascan(lambda a, b: a + b, lib.randn(2, 9, 3), -2, combine_mode="generic"))
    out.append(_hop(lib, "map").map(lambda v, c: v.sum() + c, lib.ones(3, 2), lib.tensor(1.0)))
    return [t.detach().numpy() for t in out]


def test_scan_associative_scan_and_map_equal_torch_bit_for_bit(torch: Any) -> None:
    with warnings.catch_warnings():
        # PyTorch compiles the loop body with dynamo, whose inspection of the inputs warns
        warnings.simplefilter("ignore")
        expected = _scans(torch)
    for ref, got in zip(expected, _scans(hookgrad), strict=True):
        assert ref.shape == got.shape and ref.dtype == got.dtype
        np.testing.assert_array_equal(got, ref)


def _errors(lib: Any) -> list:
    scan = _hop(lib, "scan").scan
    ascan = _hop(lib, "associative_scan").associative_scan
    hop_map = _hop(lib, "map").map
    calls = [lambda: ascan(lambda a, b: a + b, lib.arange(5.0), 0),
             lambda: ascan(lambda a, b: a + b, lib.arange(5.0), 0, combine_mode="x"),
             lambda: ascan(lambda a, b: a + b, lib.ones(0), 0, combine_mode="generic"),
             lambda: ascan(lambda a, b: a + b, lib.ones(2), 0.5, combine_mode="generic"),
             lambda: scan(lambda c, v: (c, v), (), lib.ones(3)),
             lambda: scan(lambda c, v: (c, v), lib.ones(1), lib.ones(0)),
             lambda: scan(lambda c, v: (c, v), lib.ones(1), lib.ones(3), reverse=1),
             lambda: scan(lambda c, v: (c, v), [1.0], lib.ones(3)),
             lambda: hop_map(lambda v: v, lib.ones(0, 2)),
             lambda: hop_map(lambda v: v, [lib.ones(2), lib.ones(3)]),
             lambda: hop_map(lambda v: v, [lib.ones(2), 1.0])]
    kinds = []
    for call in calls:
        with pytest.raises(Exception) as info:  # noqa: PT011 - the type is what is compared
            call()
        kinds.append(type(info.value).__name__)
    return kinds


def test_errors_have_torch_types(torch: Any) -> None:
    assert _errors(hookgrad) == _errors(torch)


def test_package_exports_the_loop_operators(torch: Any) -> None:
    from hookgrad import _higher_order_ops as hop  # noqa: PLC0415 - the module under test
    for name in ("scan", "associative_scan", "map", "cond", "while_loop"):
        assert name in torch._higher_order_ops.__all__
        assert callable(getattr(hop, name))
