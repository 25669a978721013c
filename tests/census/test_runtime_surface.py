"""Device, backend, amp, onnx and quantization namespaces behave as PyTorch's on a CPU machine."""

from __future__ import annotations

import glob
import importlib.util
import os
import sys
import warnings

import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _outcome(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = fn()
        except BaseException as e:  # noqa: BLE001 - the type is what is compared
            value = (type(e).__name__, str(e))
    return value, sorted({(w.category.__name__, str(w.message)) for w in caught})


@pytest.mark.parametrize("call", [
    lambda L: L.cuda.is_available(), lambda L: L.cuda.device_count(),
    lambda L: L.cuda.current_device(), lambda L: L.cuda.get_device_name(),
    lambda L: L.cuda.memory_allocated(), lambda L: L.cuda.is_initialized(),
    lambda L: L.cuda.synchronize(), lambda L: L.cuda.get_rng_state_all(),
    lambda L: L.cuda.empty_cache(), lambda L: L.cuda.is_bf16_supported(),
    lambda L: L.accelerator.is_available(), lambda L: L.accelerator.current_accelerator(),
    lambda L: L.accelerator.device_count(), lambda L: L.accelerator.synchronize(),
    lambda L: L.backends.cudnn.is_available(), lambda L: L.backends.mps.is_available(),
    lambda L: L.backends.mkldnn.is_available(), lambda L: L.backends.openmp.is_available(),
    lambda L: L.backends.cuda.matmul.allow_tf32, lambda L: L.backends.cudnn.benchmark,
    lambda L: L.backends.cuda.flash_sdp_enabled(), lambda L: L.get_default_device().type,
    lambda L: L.get_float32_matmul_precision(), lambda L: L.is_autocast_enabled("cuda"),
    lambda L: str(L.get_autocast_dtype("cpu")), lambda L: L.onnx.is_in_onnx_export(),
    lambda L: int(L.onnx.TrainingMode.TRAINING), lambda L: L.amp.is_autocast_available("cpu"),
    lambda L: (L.pi, L.e, L.inf, L.newaxis),
    lambda L: L.backends.nnpack.is_available(), lambda L: L.backends.kleidiai.is_available(),
    lambda L: L.backends.cusparselt.is_available(), lambda L: L.backends.cusparselt.version(),
    lambda L: L.backends.cusparselt.get_max_alg_id(),
    lambda L: L.backends.mha.get_fastpath_enabled(),
    lambda L: L.backends.cuda.is_flash_attention_available(),
    lambda L: L.backends.cuda.is_ck_sdpa_available(),
])
def test_query_matches_pytorch(torch, call):
    assert _outcome(lambda: call(hookgrad)) == _outcome(lambda: call(torch))


def test_backend_flags_are_settable_and_restored(torch):
    def scenario(L):
        L.backends.cuda.matmul.allow_tf32 = True
        L.backends.cudnn.benchmark = True
        with L.backends.cudnn.flags(enabled=False, deterministic=True):
            inside = (L.backends.cudnn.enabled, L.backends.cudnn.deterministic)
        out = (inside, L.backends.cudnn.enabled, L.backends.cuda.matmul.allow_tf32)
        L.backends.cuda.matmul.allow_tf32 = False
        L.backends.cudnn.benchmark = False
        return out
    assert scenario(hookgrad) == scenario(torch)


def test_cuda_autocast_and_scaler_disable_themselves_without_cuda(torch):
    def scenario(L):
        with L.autocast("cuda"):
            on = L.is_autocast_enabled("cuda")
        s = L.amp.GradScaler("cuda")
        x = L.ones(2)
        return on, s.is_enabled(), s.get_scale(), s.state_dict(), s.scale(x) is x
    assert _outcome(lambda: scenario(hookgrad)) == _outcome(lambda: scenario(torch))


def test_cpu_grad_scaler_scales_unscales_and_skips_inf_steps(torch):
    def scenario(L):
        p = L.nn.Parameter(L.tensor([1.0, -2.0]))
        opt = L.optim.SGD([p], lr=0.1)
        s = L.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
        log = []
        for k in range(4):
            loss = (p * p).sum() * (float("inf") if k == 1 else 1.0)
            s.scale(loss).backward()
            s.unscale_(opt)
            log.append([round(g, 6) for g in p.grad.tolist()])
            s.step(opt)
            s.update()
            opt.zero_grad()
            log.append((s.get_scale(), [round(v, 6) for v in p.tolist()]))
        return log, s.state_dict()
    assert scenario(hookgrad) == scenario(torch)


def test_onnx_export_raises_a_clear_error(torch):
    with pytest.raises(hookgrad.onnx.OnnxExporterError, match="no ONNX exporter"):
        hookgrad.onnx.export(hookgrad.nn.Linear(1, 1), (hookgrad.ones(1),), "m.onnx")
    assert issubclass(hookgrad.onnx.OnnxExporterError, RuntimeError)
    m = hookgrad.nn.Linear(1, 1)
    with hookgrad.onnx.select_model_mode_for_export(m, hookgrad.onnx.TrainingMode.EVAL):
        assert not m.training
    assert m.training


def test_quantization_namespace_imports_and_refuses_use():
    from hookgrad.ao.quantization import QuantStub, get_default_qconfig
    import hookgrad.ao.nn.quantized as nnq
    assert not isinstance(hookgrad.nn.Linear(1, 1), nnq.Linear)
    with pytest.raises(NotImplementedError, match="quantization"):
        QuantStub()
    with pytest.raises(NotImplementedError, match="get_default_qconfig"):
        get_default_qconfig("x86")


def test_optimizer_subclass_without_super_init_steps_bare(torch):
    def scenario(L):
        class Wrapper(L.optim.Optimizer):
            def __init__(self, base):
                self.base = base
                self.param_groups = base.param_groups
                self.defaults = base.defaults
                self.state = base.state

            def step(self, closure=None):
                return self.base.step(closure)
        w = L.nn.Parameter(L.tensor([1.0, 2.0]))
        opt = Wrapper(L.optim.SGD([w], lr=0.1))
        sched = L.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)
        for _ in range(3):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
            sched.step()
        return [round(v, 6) for v in w.tolist()], sched.get_last_lr(), _outcome(opt.state_dict)[0]
    assert _outcome(lambda: scenario(hookgrad)) == _outcome(lambda: scenario(torch))


def test_pytorch_nn_utils_sources_run_under_the_alias(torch):
    """PyTorch's own ``torch/nn/utils/*.py`` import under the alias (the private names they
    reach exist) and a few of them run on hookgrad."""
    root = os.path.dirname(torch.__file__)
    from hookgrad.testing._as_torch import as_torch
    loaded, failed = {}, {}
    with as_torch():
        for path in sorted(glob.glob(os.path.join(root, "nn", "utils", "*.py"))):
            stem = os.path.basename(path)[:-3]
            if stem in ("__init__", "_per_sample_grad"):  # needs _expanded_weights (absent)
                continue
            name = f"_census_pt_nn_utils_{stem}"
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            try:
                spec.loader.exec_module(mod)
                loaded[stem] = mod
            except Exception as e:  # noqa: BLE001 - reported below
                failed[stem] = repr(e)
        assert not failed, failed
        lin = hookgrad.nn.Linear(3, 2)
        lin(hookgrad.ones(1, 3)).sum().backward()
        norm = loaded["clip_grad"].clip_grad_norm_(lin.parameters(), 0.1)
        out = loaded["stateless"]._functional_call(
            lin, {n: p.detach() * 0 for n, p in lin.named_parameters()}, (hookgrad.ones(1, 3),))
    for name in [n for n in sys.modules if n.startswith("_census_pt_nn_utils_")]:
        del sys.modules[name]
    assert norm.item() > 0 and out.tolist() == [[0.0, 0.0]]


def test_census2_backend_switches_are_settable(torch):
    def scenario(L):
        L.backends.mha.set_fastpath_enabled(False)
        off = L.backends.mha.get_fastpath_enabled()
        L.backends.mha.set_fastpath_enabled(True)
        prev = L.backends.nnpack.set_flags(False)
        with L.backends.nnpack.flags(enabled=True):
            inside = L.backends.nnpack.set_flags(True)
        after = L.backends.nnpack.set_flags(prev[0])
        return off, prev, inside, after
    assert scenario(hookgrad) == scenario(torch)
