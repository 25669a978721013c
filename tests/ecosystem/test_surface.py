"""Legacy and compatibility surface, module paths, jit, multiprocessing: oracle-compared."""

from __future__ import annotations

import multiprocessing as std_mp
import pickle
import warnings

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _both(torch, fn):
    return fn(torch), fn(hookgrad)


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 - the exception type is what is compared
        return type(e)
    if hasattr(r, "dtype") and hasattr(r, "shape"):
        return (str(r.dtype), tuple(r.shape), np.asarray(r.tolist()).tolist())
    return r


# ---------------------------------------------------------------------- legacy constructors
@pytest.mark.parametrize("case", [
    lambda L: L.Tensor([1, 2]),
    lambda L: L.Tensor([[1.5, 2], [3, 4]]),
    lambda L: L.Tensor(),
    lambda L: L.Tensor(L.Size([2, 3])).shape,
    lambda L: L.Tensor(2, 3).shape,
    lambda L: L.FloatTensor([1, 2]),
    lambda L: L.DoubleTensor([1, 2]),
    lambda L: L.LongTensor([1.7, -2.2]),
    lambda L: L.IntTensor([3]),
    lambda L: L.BoolTensor([0, 1, 2]),
    lambda L: L.LongTensor(2, 2).shape,
    lambda L: L.Tensor("abc"),
    lambda L: L.Tensor([1], dtype=L.float64),
])
def test_legacy_constructors(torch, case):
    ref, got = _both(torch, lambda L: _outcome(lambda: case(L)))
    assert got == ref


def test_legacy_constructor_follows_default_dtype_and_aliases_tensors(torch):
    def scenario(L):
        L.set_default_dtype(L.float64)
        try:
            dts = (str(L.Tensor([1]).dtype), str(L.FloatTensor([1]).dtype))
        finally:
            L.set_default_dtype(L.float32)
        a = L.ones(3)
        b = L.Tensor(a)
        b[0] = 5.0
        return dts, a.tolist()

    ref, got = _both(torch, scenario)
    assert got == ref


def test_typed_classes_isinstance(torch):
    def scenario(L):
        return (isinstance(L.ones(1), L.FloatTensor), isinstance(L.ones(1, dtype=L.float64),
                L.FloatTensor), isinstance(L.ones(1, dtype=L.int64), L.LongTensor),
                isinstance(L.ones(1), L.Tensor))

    ref, got = _both(torch, scenario)
    assert got == ref


def test_variable_is_every_tensor(torch):
    def scenario(L):
        t = L.ones(2)
        v = L.autograd.Variable(t, requires_grad=True)
        v2 = L.autograd.Variable(t)
        x = L.ones(2, requires_grad=True) * 2
        v3 = L.autograd.Variable(x)
        return (v is t, v.requires_grad, t.requires_grad, v.data_ptr() == t.data_ptr(),
                v2.requires_grad, v3.grad_fn is None, v3.requires_grad,
                isinstance(t, L.autograd.Variable), isinstance(x, L.autograd.Variable),
                isinstance(3, L.autograd.Variable), tuple(L.autograd.Variable().shape))

    ref, got = _both(torch, scenario)
    assert got == ref


# --------------------------------------------------------------------------- dtypes, formats
def test_memory_formats_and_bfloat16_names(torch):
    def scenario(L):
        fmts = [repr(L.contiguous_format), repr(L.channels_last), repr(L.preserve_format),
                repr(L.channels_last_3d), isinstance(L.channels_last, L.memory_format)]
        x = L.ones(1, 2, 3, 4)
        kept = [x.contiguous(memory_format=L.contiguous_format).shape,
                x.clone(memory_format=L.preserve_format).shape]
        return fmts, kept, repr(L.bfloat16), L.bfloat16.is_floating_point

    ref, got = _both(torch, scenario)
    assert got == ref


# --------------------------------------------------------------------------- storages, set_
def test_storages(torch):
    def scenario(L):
        a = L.arange(6.0)
        v = a[2:]
        u, uv = a.untyped_storage(), v.untyped_storage()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            s = v.storage()
            typed = (s.size(), len(s), s.nbytes(), s.element_size(), str(s.dtype), s[3],
                     s.tolist(), s.data_ptr() == a.data_ptr())
        return (u.size(), u.nbytes(), len(u), uv.nbytes(), uv.data_ptr() == u.data_ptr(),
                u.data_ptr() == a.data_ptr(), typed,
                L.ones(2).untyped_storage().data_ptr() == a.untyped_storage().data_ptr())

    ref, got = _both(torch, scenario)
    assert got == ref


def test_set_(torch):
    def scenario(L):
        t = L.ones(3)
        src = L.zeros(2)
        v0 = t._version
        t.set_(src)
        src[0] = 7.0
        out = [t.tolist(), t._version > v0]
        a = L.arange(6.0)
        b = L.empty(0)
        b.set_(a.untyped_storage(), 2, (2, 2), (1, 1))
        out.append(b.tolist())
        e = L.ones(3)
        out.append(tuple(e.set_().shape))
        leaf = L.ones(2, requires_grad=True)
        out.append(_outcome(lambda: leaf.set_(L.zeros(2))))
        with L.no_grad():
            leaf.set_(L.zeros(2))
        out.append(leaf.tolist())
        return out

    ref, got = _both(torch, scenario)
    assert got == ref


# --------------------------------------------------------------------------- grad_fn attributes
@pytest.mark.parametrize("op", [
    lambda L, x, y: x * y, lambda L, x, y: x.exp(), lambda L, x, y: L.tanh(x),
    lambda L, x, y: x.matmul(y.t()), lambda L, x, y: L.nn.functional.linear(x, y),
    lambda L, x, y: x.sum(), lambda L, x, y: x.sigmoid(),
])
def test_dir_grad_fn_lists_saved_tensors(torch, op):
    """torchviz walks ``dir(grad_fn)`` for ``_saved_*``; the saved *tensors* must agree."""
    def scenario(L):
        x = L.ones(2, 3, requires_grad=True)
        y = L.ones(2, 3, requires_grad=True)
        fn = op(L, x, y).grad_fn
        names = [n for n in dir(fn) if n.startswith("_saved_")]
        tensors = sorted(n for n in names if isinstance(getattr(fn, n), L.Tensor))
        raw = sorted(n for n in dir(fn) if n.startswith("_raw_saved_"))
        return tensors, raw

    ref, got = _both(torch, scenario)
    assert got == ref


def test_uninitialized_parameter(torch):
    def scenario(L):
        p = L.nn.parameter.UninitializedParameter()
        lazy = L.nn.parameter.is_lazy(p)
        p.materialize((2, 3))
        return lazy, type(p).__name__, tuple(p.shape), p.requires_grad, L.nn.parameter.is_lazy(p)

    ref, got = _both(torch, scenario)
    assert got == ref


def test_version_lets_tools_take_modern_paths(torch):
    from packaging.version import Version

    assert Version(hookgrad.__version__) == Version(torch.__version__.split("+")[0])
    assert hookgrad.hookgrad_version == "0.1.0"


# ------------------------------------------------------------------------------ module paths
def test_module_paths_tools_import(torch):
    def scenario(L):
        import importlib

        name = L.__name__
        bn = importlib.import_module(f"{name}.nn.modules.batchnorm")
        conv = importlib.import_module(f"{name}.nn.modules.conv")
        pool = importlib.import_module(f"{name}.nn.modules.pooling")
        ser = importlib.import_module(f"{name}.serialization")
        return (issubclass(L.nn.BatchNorm2d, bn._BatchNorm),
                issubclass(bn._BatchNorm, bn._NormBase),
                issubclass(L.nn.ConvTranspose2d, conv._ConvTransposeNd),
                not issubclass(L.nn.Conv2d, conv._ConvTransposeNd),
                issubclass(pool._AdaptiveMaxPoolNd, L.nn.Module),
                ser.DEFAULT_PROTOCOL)

    ref, got = _both(torch, scenario)
    assert got == ref


def test_adaptive_max_pool_base_holds_its_arguments(torch):
    def scenario(L):
        import importlib

        pool = importlib.import_module(f"{L.__name__}.nn.modules.pooling")
        m = pool._AdaptiveMaxPoolNd((2, 3), return_indices=True)
        return m.output_size, m.return_indices, repr(m)

    ref, got = _both(torch, scenario)
    assert got == ref


def test_multiprocessing_is_the_standard_library():
    mp = hookgrad.multiprocessing
    assert mp.Process is std_mp.Process and mp.Queue is std_mp.Queue
    assert mp.get_context("spawn") is not None and mp.cpu_count() == std_mp.cpu_count()
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    mp.set_sharing_strategy("file_system")
    assert mp.get_sharing_strategy() == "file_system"
    mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(AssertionError):
        mp.set_sharing_strategy("nope")


def test_jit_returns_callables_unchanged(torch):
    lin = hookgrad.nn.Linear(2, 2)
    calls = []
    lin.register_forward_hook(lambda *a: calls.append(1))
    scripted = hookgrad.jit.script(lin)
    traced = hookgrad.jit.trace(lin, hookgrad.ones(1, 2))
    scripted(hookgrad.ones(1, 2))
    assert scripted is lin and traced is lin and calls == [1]
    assert hookgrad.jit.is_scripting() is torch.jit.is_scripting() is False
    assert hookgrad.jit.is_tracing() is torch.jit.is_tracing() is False

    def f(x):
        return x

    assert hookgrad.jit.ignore(f) is f and hookgrad.jit.ignore(drop=True)(f) is f
    assert hookgrad.jit.unused(f) is f and hookgrad.jit.export(f) is f
    assert not isinstance(lin, hookgrad.jit.ScriptModule)
    assert issubclass(hookgrad.jit.ScriptModule, hookgrad.nn.Module)
    assert hookgrad.jit.annotate(list, [1]) == torch.jit.annotate(list, [1])


def test_memory_format_pickles():
    assert pickle.loads(pickle.dumps(hookgrad.channels_last)) is hookgrad.channels_last


@pytest.mark.parametrize("cls", ["AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d"])
def test_adaptive_max_pools_share_the_pooling_base(torch, cls):
    """Tools key on ``nn.modules.pooling._AdaptiveMaxPoolNd``: the layers must derive from it."""
    from tests.ecosystem._tools import require_hookgrad

    require_hookgrad(f"nn.{cls}")

    def scenario(L):
        import importlib

        pool = importlib.import_module(f"{L.__name__}.nn.modules.pooling")
        return issubclass(getattr(L.nn, cls), pool._AdaptiveMaxPoolNd)

    ref, got = _both(torch, scenario)
    assert got == ref is True


@pytest.mark.parametrize("cls", ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm"])
def test_batchnorm_path_exports_every_batch_norm(torch, cls):
    from tests.ecosystem._tools import require_hookgrad

    require_hookgrad(f"nn.{cls}")

    def scenario(L):
        import importlib

        bn = importlib.import_module(f"{L.__name__}.nn.modules.batchnorm")
        return getattr(bn, cls) is getattr(L.nn, cls), issubclass(getattr(L.nn, cls), bn._BatchNorm)

    ref, got = _both(torch, scenario)
    assert got == ref


def test_layout_flags_typename_overrides_and_fork_rng(torch):
    def scenario(L):
        t = L.ones(2, 3)
        flags = (t.is_sparse, t.is_quantized, t.is_mkldnn, t.is_meta, t.is_nested,
                 repr(t.layout), t.layout is L.strided, L.is_complex(t))
        names = (L.typename(t), L.typename(L.ones(1, dtype=L.int64)), L.typename(3),
                 L.typename(L.nn.Linear(1, 1)).rsplit(".", 1)[-1])
        over = (L.overrides.has_torch_function((t,)), L.overrides.is_tensor_like(t),
                L.overrides.is_tensor_like(3))
        L.manual_seed(3)
        with L.random.fork_rng():
            inside = L.rand(4)
        after = L.rand(4)
        return flags, names, over, L.equal(inside, after)

    ref, got = _both(torch, scenario)
    assert got == ref
