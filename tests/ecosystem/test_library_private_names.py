"""Private names the usage census found in real libraries (transformers, timm, kornia,
PyTorch Geometric, diffusers, zuko, BoTorch), each run on PyTorch and on hookgrad."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

import numpy as np
import pytest

import hookgrad


def _outcome(call: Any) -> Any:
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return (type(e).__name__, str(e))
    if hasattr(out, "tolist"):
        return (str(out.dtype).replace("hookgrad", "torch"), out.tolist())
    return out


def _checks(lib: Any) -> list:
    calls = [lambda: lib._check(True), lambda: lib._check(False),
             lambda: lib._check(False, lambda: "boom"),
             lambda: lib._check_with(ValueError, False, lambda: "v"),
             lambda: lib._check_tensor_all(lib.tensor([True, False])),
             lambda: lib._check_tensor_all(lib.tensor([True, True])),
             lambda: lib._assert_async(lib.tensor(0)), lambda: lib._assert_async(lib.tensor(2.0)),
             lambda: lib._assert_async(lib.tensor(0.0), "msg"), lambda: lib._assert(False, "m"),
             lambda: lib._shape_as_tensor(lib.ones(2, 3)),
             lambda: lib._convert_indices_from_coo_to_csr(lib.tensor([0, 0, 1, 3]), 4),
             lambda: lib._convert_indices_from_coo_to_csr(lib.tensor([0, 2]), 3, out_int32=True),
             lambda: lib._convert_indices_from_csr_to_coo(lib.tensor([0, 2, 3, 3, 4]),
                                                          lib.tensor([0, 1, 2, 3])),
             lambda: lib._convert_indices_from_csr_to_coo(lib.tensor([0, 1, 2]), lib.tensor([1, 0]),
                                                          transpose=True),
             lambda: lib._C._get_accelerator().type, lambda: lib._dynamo.is_compiling(),
             lambda: lib.compiler.cudagraph_mark_step_begin()]
    return [_outcome(c) for c in calls]


def test_checks_and_small_helpers(torch: Any) -> None:
    assert _checks(hookgrad) == _checks(torch)


def test_softmax_backward_kernels(torch: Any) -> None:
    def scenario(lib: Any) -> list:
        rng = np.random.default_rng(0)
        g = lib.tensor(rng.standard_normal((3, 4)), dtype=lib.float64)
        x = lib.tensor(rng.standard_normal((3, 4)), dtype=lib.float64)
        return [lib._softmax_backward_data(g, lib.softmax(x, 1), 1, lib.float64).numpy(),
                lib._log_softmax_backward_data(g, lib.log_softmax(x, 0), 0, lib.float64).numpy()]

    for got, ref in zip(scenario(hookgrad), scenario(torch), strict=True):
        np.testing.assert_allclose(got, ref, rtol=1e-12)


def test_mark_static_address_and_shape_predicates(torch: Any) -> None:
    def scenario(lib: Any) -> list:
        s = importlib.import_module(lib.__name__ + ".fx.experimental.symbolic_shapes")
        x = lib.ones(2)
        lib._dynamo.mark_static_address(x)
        y = lib.ones(2)
        lib._dynamo.mark_static_address(y, guard=True)
        with pytest.raises(TypeError):
            lib._dynamo.mark_static_address([1])
        return [x._dynamo_static_input_type, y._dynamo_static_input_type,
                s.guard_or_false(1 == 1), s.guard_or_true(2 > 3), s.statically_known_true(True),
                s.statically_known_false(False), s.sym_eq([1, (2, 3)], [1, (2, 3)]),
                len(s.free_symbols(3)), s.has_free_symbols(3), s.is_concrete_int(3),
                s.is_concrete_int(True), s.is_concrete_bool(True)]

    assert scenario(hookgrad) == scenario(torch)


def test_make_subclass_shares_memory_and_version(torch: Any) -> None:
    def scenario(lib: Any) -> list:
        class Sub(lib.Tensor):
            pass

        base = lib.ones(2, 3)[:, 1]
        sub = lib.Tensor._make_subclass(Sub, base, True)
        before = (type(sub).__name__, sub.requires_grad, sub.is_leaf, sub.stride())
        base.add_(1)
        plain = lib.Tensor._make_subclass(Sub, lib.ones(2, requires_grad=True) * 2)
        errors = []
        for bad in (lambda: lib.Tensor._make_subclass(Sub, lib.ones(2, dtype=lib.long), True),
                    lambda: lib.Tensor._make_subclass(int, lib.ones(2))):
            try:
                bad()
            except (TypeError, RuntimeError) as e:
                errors.append(type(e).__name__)
        return [before, sub.detach().tolist(), sub._version, plain.requires_grad,
                plain.grad_fn is None, errors]

    assert scenario(hookgrad) == scenario(torch)


def test_optimizer_kernel_choice_and_private_init(torch: Any) -> None:
    def scenario(lib: Any) -> list:
        opt = importlib.import_module(lib.__name__ + ".optim.optimizer")
        init = lib.nn.init
        lib.manual_seed(0)
        a, b, c, d = lib.empty(3), lib.empty(3), lib.empty(3), lib.empty(2)
        init._no_grad_uniform_(a, -1, 1)
        init._no_grad_normal_(b, 0, 1)
        init._no_grad_trunc_normal_(c, 0, 1, -2, 2)
        init._no_grad_fill_(d, 3.0)
        filled = d.tolist()
        init._no_grad_zero_(d)
        groups = opt.Optimizer._group_tensors_by_device_and_dtype(
            [[lib.ones(2), lib.ones(2, dtype=lib.float64), lib.zeros(1)]], with_indices=True)
        return [a.tolist(), b.tolist(), c.tolist(), filled, d.tolist(),
                opt._default_to_fused_or_foreach([lib.ones(2)], False, True),
                opt._default_to_fused_or_foreach([lib.ones(2)], False),
                opt._default_to_fused_or_foreach([lib.ones(2)], True, True),
                opt._default_to_fused_or_foreach([lib.ones(2, dtype=lib.long)], False, True),
                opt._get_capturable_supported_devices(), opt._get_capturable_supported_devices(False),
                sorted((str(k[1]).split(".")[-1], [[x.tolist() for x in lst] for lst in v[0]], v[1])
                       for k, v in groups.items())]

    assert scenario(hookgrad) == scenario(torch)


def test_reparametrize_module(torch: Any) -> None:
    def scenario(lib: Any) -> list:
        stateless = importlib.import_module(lib.__name__ + ".nn.utils.stateless")
        lin = lib.nn.Linear(2, 1)
        w0 = lin.weight
        with stateless._reparametrize_module(lin, {"weight": lib.ones(1, 2), "bias": lib.zeros(1)}):
            inside = lin(lib.ones(1, 2)).tolist()
        with pytest.raises(ZeroDivisionError), \
                stateless._reparametrize_module(lin, {"weight": lib.zeros(1, 2)}):
            1 / 0  # noqa: B018 - the weights come back after an error too
        return [inside, lin.weight is w0]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert scenario(hookgrad) == scenario(torch)


def test_autocast_cast_str_intern_pytree_and_spawn_module(torch: Any) -> None:
    def scenario(lib: Any) -> list:
        amp = importlib.import_module(lib.__name__ + ".amp.autocast_mode")
        tstr = importlib.import_module(lib.__name__ + "._tensor_str")
        pytree = importlib.import_module(lib.__name__ + ".utils._pytree")
        spawn = importlib.import_module(lib.__name__ + ".multiprocessing.spawn")
        x, d, i = lib.ones(2), lib.ones(2, dtype=lib.float64), lib.ones(2, dtype=lib.long)
        out = amp._cast({"a": x, "b": [d, i, "s", (x,)]}, "cpu", lib.float16)
        dtypes = [out["a"].dtype, out["b"][0].dtype, out["b"][1].dtype, out["b"][3][0].dtype]

        class Pair:
            def __init__(self, a: Any, b: Any) -> None:
                self.a, self.b = a, b

        with pytest.warns(FutureWarning):
            pytree._register_pytree_node(Pair, lambda p: ([p.a, p.b], None),
                                         lambda v, c: Pair(*v))
        leaves, spec = pytree.tree_flatten(Pair(1, [2, 3]))
        back = pytree.tree_unflatten([4, 5, 6], spec)
        return [[str(t).split(".")[-1] for t in dtypes], out["b"][2],
                tstr._str_intern(lib.ones(2, requires_grad=True), tensor_contents="[X]"),
                tstr._str_intern(lib.arange(3)), leaves, back.a, back.b,
                pytree._dict_unflatten([1, 2], ["a", "b"]),
                issubclass(spawn.ProcessRaisedException, Exception),
                spawn.spawn is lib.multiprocessing.spawn]

    assert scenario(hookgrad) == scenario(torch)
