"""Oracle tests for census names that re-export, flag or document: each behaves as PyTorch's."""

from __future__ import annotations

import importlib

import pytest

import hookgrad
from tests.census._both import error_of

pytestmark = pytest.mark.oracle




def test_function_meta_gives_each_function_a_numbered_backward_class(torch):
    def scenario(L):
        F = L.autograd.function

        class Double(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class Triple(Double):
            pass

        x = L.ones(2, requires_grad=True)
        Double.apply(x).sum().backward()
        ids = (Double._backward_cls._autograd_function_id,
               Triple._backward_cls._autograd_function_id)
        return (type(Double) is F.FunctionMeta, type(L.autograd.Function) is F.FunctionMeta,
                Double._backward_cls.__name__, Double._backward_cls._forward_cls is Double,
                ids[1] == ids[0] + 1, type(next(F.AUTOGRAD_FUNCTION_COUNTER)).__name__,
                x.grad.tolist())
    assert scenario(hookgrad) == scenario(torch)


def test_enforce_grad_layout_policy_lets_a_stolen_gradient_keep_its_strides(torch):
    def scenario(L):
        out = []
        for flag in (True, False):
            p = L.empty(2, 3, 4).permute(2, 0, 1).requires_grad_()
            with L.autograd.enforce_grad_layout_policy(flag):
                (p * 2).sum().backward()
            out.append((p.stride(), p.grad.stride(), p.grad.sum().item()))
        q = L.empty(2, 3).t().requires_grad_()

        @L.autograd.grad_mode.enforce_grad_layout_policy(False)
        def step():
            (q * 3).sum().backward()
        step()
        out.append(q.grad.stride())
        return out
    assert scenario(hookgrad) == scenario(torch)


def test_reexported_objects_are_the_same_objects(torch):
    def scenario(L):
        gc = importlib.import_module(f"{L.__name__}.autograd.gradcheck")
        par = L.nn.utils.parametrize
        x = L.arange(6.0).reshape(2, 3)
        with pytest.warns(FutureWarning, match="torch.vmap"):
            batched = gc.vmap(lambda r: r.sum())
        return (batched(x).tolist(),
                L.autograd.profiler.Future is L.futures.Future,
                par.get_swap_module_params_on_conversion
                is L.__future__.get_swap_module_params_on_conversion,
                par.OpaqueBase.__name__, par.is_opaque_reference_type(par.OpaqueBase),
                par.is_opaque_reference_type(int), par.is_opaque_reference_type("x"),
                L._C._VariableFunctions.add is L.add, L._C._VariableFunctions.matmul is L.matmul,
                type(L.autograd.Variable._execution_engine) is L._C._ImperativeEngine,
                error_of(lambda: L._C._VariableFunctions.not_an_op)[0])
    assert scenario(hookgrad) == scenario(torch)


def test_cuda_workspace_queries_fail_as_on_a_cpu_build(torch):
    def scenario(L):
        c = L.backends.cuda
        return ([error_of(lambda b=b: c.blas_workspace_size(backend=b))
                 for b in (None, "cublas", "hipblaslt", "ck", "nope", 3)],
                error_of(c.cublas_workspace_size), error_of(lambda: c.cublaslt_workspace_size(8)),
                repr(c.preferred_rocm_fa_library()), repr(c.preferred_rocm_fa_library("ck")),
                repr(c.preferred_rocm_fa_library()), error_of(lambda: c.preferred_rocm_fa_library("x")),
                error_of(lambda: c.preferred_rocm_fa_library(1.5))[0],
                repr(c.preferred_rocm_fa_library("default")))
    assert scenario(hookgrad) == scenario(torch)


def test_doc_templates_have_pytorchs_keys_and_format_slots(torch):
    for ns, name in (("special", "common_args"), ("special", "multi_dim_common"),
                     ("linalg", "common_notes")):
        ours, theirs = getattr(getattr(hookgrad, ns), name), getattr(getattr(torch, ns), name)
        assert list(ours) == list(theirs)
        assert all(v.count("{}") == theirs[k].count("{}") for k, v in ours.items())
    assert hookgrad.special.multi_dim_common == torch.special.multi_dim_common


def test_legacy_tensor_methods(torch):
    def scenario(L):
        a, b = L.zeros(2), L.ones(2, dtype=L.float64, requires_grad=True)
        kept = a.module_load(b)
        fresh = a.module_load(b, assign=True)
        return (kept.tolist(), str(kept.dtype), kept.requires_grad, a.tolist(), str(fresh.dtype),
                fresh.requires_grad, fresh is b, error_of(lambda: a.reinforce(1.0)),
                error_of(lambda: a.to_padded_tensor(0.0))[0])
    assert scenario(hookgrad) == scenario(torch)


def test_exportable_module_contract_and_to_dlpack(torch):
    def scenario(L):
        class Model(L.onnx.ExportableModule):
            def __init__(self):
                super().__init__()
                self.lin = L.nn.Linear(2, 1)

            def forward(self, x):
                return self.lin(x)

            def example_arguments(self):
                return ((L.ones(1, 2),), None)

        class NoExample(L.onnx.ExportableModule):
            def forward(self, x):
                return x

        m = Model()
        return (error_of(NoExample)[0], isinstance(m, L.nn.Module), m.dynamic_shapes(),
                m.input_names(), m.output_names(), tuple(m(L.ones(3, 2)).shape),
                [n for n, _ in m.named_parameters()],
                L.onnx.ExportableModule.__module__.replace("hookgrad", "torch"),
                L.to_dlpack is L.utils.dlpack.to_dlpack)
    assert scenario(hookgrad) == scenario(torch)


def test_exportable_module_to_onnx_raises_the_exportererror_of():
    class Model(hookgrad.onnx.ExportableModule):
        def forward(self, x):
            return x

        def example_arguments(self):
            return ((hookgrad.ones(1),), None)

    with pytest.raises(hookgrad.onnx.OnnxExporterError):
        Model().to_onnx()


def test_profiler_event_has_no_constructor_as_in_pytorch(torch):
    assert error_of(hookgrad.autograd.ProfilerEvent) == error_of(torch.autograd.ProfilerEvent)
    with pytest.raises(NotImplementedError, match="ONNX"):
        hookgrad.onnx.InputObserver()
    with pytest.raises(NotImplementedError, match="ONNX"):
        importlib.import_module("hookgrad.onnx.ops").symbolic("custom::op", ())
