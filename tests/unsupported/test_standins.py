"""Stand-ins of `hookgrad._unsupported`: every one raises when used; errors match PyTorch where
PyTorch's CPU build fails too; the census counts them as present but not implemented."""

from __future__ import annotations

import sys
import types

import pytest

import hookgrad
from hookgrad import _unsupported
from tests._errors import err
from tests.census.check import census, implemented, coverage

pytestmark = pytest.mark.oracle


def _standin_ids() -> list:
    return [f"{owner}.{name}" for owner, name, _ in _unsupported.standins()]


@pytest.mark.parametrize("index", range(len(_unsupported.standins())), ids=_standin_ids())
def test_every_standin_raises_when_used(index):
    owner, name, obj = _unsupported.standins()[index]
    assert isinstance(getattr(obj, _unsupported.MARK), str)
    if isinstance(obj, types.ModuleType):
        # a module stand-in is importable; its listed entry points raise (tested as their rows)
        assert sys.modules[f"{owner}.{name}"] is obj
        return
    if isinstance(obj, hookgrad.dtype):
        with pytest.raises(TypeError):
            hookgrad.zeros(1, dtype=obj)
        return
    if type(obj).__name__ == "qscheme":  # a named value: nothing to call, nothing accepts it
        assert repr(obj) == f"torch.{name}" and not callable(obj)
        return
    if isinstance(obj, hookgrad.layout):
        assert repr(obj) == f"torch.{name}" and obj is not hookgrad.strided
        return
    with pytest.raises(obj.__hookgrad_error__) as info:
        obj(hookgrad.ones(1)) if owner == "hookgrad.Tensor" else obj()
    assert str(info.value) == getattr(obj, _unsupported.MARK)  # the reason is the message


def test_standin_classes_name_types_and_subclass_but_have_no_instances():
    cls = hookgrad.nn.quantized.Linear
    assert cls.__module__ == "torch.nn.quantized" and not isinstance(object(), cls)

    class Mine(cls):  # libraries subclass quantized modules at import time
        pass
    with pytest.raises(NotImplementedError, match="quantization"):
        Mine()
    import hookgrad.nn.quantized.dynamic as dyn  # noqa: F401 - open modules answer any class
    assert not hasattr(hookgrad.sparse, "no_such_function")


@pytest.mark.parametrize("call", [
    lambda L: L.xpu.is_available(), lambda L: L.xpu.device_count(),
    lambda L: L.xpu.is_initialized(), lambda L: L.xpu.memory_allocated(),
    lambda L: L.xpu.manual_seed(0), lambda L: L.xpu.current_device(),
    lambda L: L.xpu.synchronize(), lambda L: L.xpu.get_device_name(0), lambda L: L.xpu.Stream(),
    lambda L: L.xpu.get_rng_state_all(), lambda L: L.xpu.is_bf16_supported(),
    lambda L: L.mtia.is_available(), lambda L: L.mtia.device_count(),
    lambda L: L.mtia.current_device(), lambda L: L.mtia.init(), lambda L: L.mtia.memory_stats(),
    lambda L: L.mtia.is_bf16_supported(),
    lambda L: L.mps.is_available(), lambda L: L.mps.device_count(), lambda L: L.mps.synchronize(),
    lambda L: L.mps.empty_cache(), lambda L: L.mps.manual_seed(1),
    lambda L: L.ones(2).xpu(), lambda L: L.ones(2).ipu(), lambda L: L.ones(2).mtia(),
    lambda L: L.nn.Linear(1, 1).xpu(), lambda L: L.nn.ReLU().xpu() is not None,
    lambda L: L.nn.Linear(1, 1).ipu(), lambda L: L.backends.mps.is_macos13_or_newer(),
    lambda L: L.backends.miopen.immediate, lambda L: L.backends.quantized.engine,
    lambda L: L.backends.quantized.supported_engines,
    lambda L: isinstance(3, L.SymInt), lambda L: isinstance(L.ones(1), L.nn.quantized.Linear),
    lambda L: L.ones(2, 3).dense_dim(), lambda L: L.ones(2, 3).sparse_dim(),
    lambda L: L.ones(2).is_sparse_csr, lambda L: L.ones(2).values(), lambda L: L.ones(2).indices(),
    lambda L: L.ones(2).coalesce(), lambda L: L.ones(2, 2).smm(L.ones(2, 2)),
    lambda L: L.ones(2).sparse_mask(L.ones(2)), lambda L: L.ones(2).to_dense().tolist(),
    lambda L: str(L.ones(2).to_dense(dtype=L.float64).dtype), lambda L: L.dequantize([L.ones(1)]),
    lambda L: repr(L.per_tensor_affine), lambda L: L.cudnn_is_acceptable(L.ones(1)),
    lambda L: (int(L.AVG), int(L.SUM), L.AggregationType.AVG.name), lambda L: L.PRIVATE_OPS,
    lambda L: issubclass(L.JITException, Exception), lambda L: L.backends.mps.get_core_count(),
    lambda L: L.cudnn_convolution(L.ones(1, 1, 3, 3), L.ones(1, 1, 3, 3), (0, 0), (1, 1),
                                  (1, 1), 1, False, False, False),
    lambda L: L.backends.cuda.can_use_flash_attention(
        L.backends.cuda.SDPAParams(L.ones(1), L.ones(1), L.ones(1), None, 0.0, False, False)),
    lambda L: L.backends.cuda.can_use_efficient_attention(
        L.backends.cuda.SDPAParams(L.ones(1), L.ones(1), L.ones(1), None, 0.0, False, False)),
    lambda L: L.backends.cuda.can_use_cudnn_attention(1),
    lambda L: L.backends.cuda.cufft_plan_cache[0],
    lambda L: L.backends.cuda.cufft_plan_cache["cuda:1"],
    lambda L: L.backends.cuda.cufft_plan_cache.max_size,
    lambda L: L.backends.cuda.cuBLASModule().allow_tf32,
    lambda L: L.backends.cuda.cuBLASModule().unknown_flag,
    lambda L: L.backends.cuda.cuFFTPlanCache(0).size,
    lambda L: L.backends.cuda.cuFFTPlanCache(0).clear(),
    lambda L: L._C.ScriptFunction is L.jit.ScriptFunction,
    lambda L: L.ones(1).storage_type().__name__,
    lambda L: L.ones(1, dtype=L.int64).storage_type().__name__,
    lambda L: L.Storage is L.FloatStorage, lambda L: L.jit.wait(L.jit.fork(lambda x: x + 1, 2)),
])
def test_device_answers_match_pytorch_cpu_build(torch, call):
    got, want = err(lambda: call(hookgrad)), err(lambda: call(torch))
    assert (got and got[0]) == (want and want[0])
    if want is None:
        assert call(hookgrad) == call(torch)


def test_factories_refuse_standin_layouts():
    for layout in (hookgrad.sparse_coo, hookgrad.sparse_csr, hookgrad.jagged):
        with pytest.raises(NotImplementedError):
            hookgrad.zeros(2, layout=layout)
    assert hookgrad.ones(2, layout=hookgrad.strided).tolist() == [1.0, 1.0]


def test_dense_tensor_is_its_own_dense_and_dequantized_form():
    t = hookgrad.ones(2, requires_grad=True)
    assert t.to_dense() is t and t.dequantize() is t and hookgrad.dequantize(t) is t


def test_error_types_of_cpu_failures_match(torch):
    for call in (lambda L: L.ones(1).record_stream(L.Stream()),
                 lambda L: L.backends.quantized.__setattr__("engine", "bogus")):
        assert err(lambda: call(hookgrad))[0] == err(lambda: call(torch))[0]


def test_unsupported_dtypes_exist_but_hold_no_tensor(torch):
    for name in ("int4", "uint3", "bits8", "qint8", "quint8", "float4_e2m1fn_x2"):
        d = getattr(hookgrad, name)
        assert repr(d) == repr(getattr(torch, name))
        assert d.is_floating_point == getattr(torch, name).is_floating_point
        with pytest.raises(TypeError):
            hookgrad.ones(2).to(d)


def test_census_counts_standins_as_not_implemented():
    rows = census()
    standins = sum(len(r.standin) for r in rows)
    assert standins > 100
    assert implemented(rows) < coverage(rows)
    torch_row = next(r for r in rows if r.namespace == "torch")
    assert "xpu" not in torch_row.standin and "sparse" in torch_row.standin


def test_standin_modules_import_under_the_torch_alias():
    from hookgrad.testing._as_torch import as_torch
    with as_torch():
        import torch.nn.quantized.dynamic as nnqd  # noqa: F401 - import statements tools use
        import torch.sparse
        from torch.hub import load_state_dict_from_url  # noqa: F401
        from torch.torch_version import TorchVersion
        assert torch.sparse is hookgrad.sparse and isinstance(torch.__version__, TorchVersion)
        with pytest.raises(NotImplementedError):
            torch.sparse.mm(torch.ones(1, 1), torch.ones(1, 1))


def test_complex_half_dtype_answers_as_torch(torch):
    """kornia lists ``torch.complex32`` among the float/complex dtypes it accepts."""
    import hookgrad

    for lib in (hookgrad, torch):
        assert lib.chalf is lib.complex32
    assert [hookgrad.complex32.is_complex, hookgrad.complex32.is_floating_point,
            str(hookgrad.complex32)] == [torch.complex32.is_complex,
                                         torch.complex32.is_floating_point, str(torch.complex32)]
