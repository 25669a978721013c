"""The tables of ``torch.overrides``: which public functions a ``__torch_function__`` handler
can see, their printable names, dummy overrides for tests, and the ones that are not overridable.

NOTE [Override tables]
PyTorch builds ``get_overridable_functions`` by walking its public namespaces (``torch``,
``torch.functional``, ``nn.functional``, ``nn.init``, ``Tensor``, ``linalg``, ``fft``,
``special``) and leaving out private, in-place and capitalised names and the functions of
``get_ignored_functions``; the same walk gives the ``"torch.add"`` names `resolve_name` prints.
hookgrad walks its own namespaces the same way. The ignored set is PyTorch's, by name
(`IGNORED`): the factories, predicates, settings and constructors that take no tensor to
dispatch on, resolved to hookgrad's objects where hookgrad has them. `get_testing_overrides`
gives every overridable function a dummy with the function's own signature returning -1, which
is what PyTorch's hand-written lambdas are.

Mirrors: ``torch.overrides`` (``get_ignored_functions``, ``get_overridable_functions``,
``get_testing_overrides``, ``resolve_name``).
"""

from __future__ import annotations

import collections
import functools
import importlib
import inspect
import types
from collections.abc import Callable
from typing import Any

__all__ = ["ignored_functions", "overridable_functions", "testing_overrides"]

# PyTorch's get_ignored_functions, by namespace ("properties": attributes whose __get__/__set__
# are listed).
IGNORED: dict[str, str] = {
    "torch": """
        arange are_deterministic_algorithms_enabled as_strided as_tensor asarray
        autocast_decrement_nesting autocast_increment_nesting bartlett_window blackman_window
        can_cast clear_autocast_cache compile cond cudnn_affine_grid_generator cudnn_batch_norm
        cudnn_convolution cudnn_convolution_add_relu cudnn_convolution_relu
        cudnn_convolution_transpose cudnn_grid_sampler cudnn_is_acceptable device dtype empty
        empty_permuted empty_quantized empty_strided enable_grad eye fill finfo fork from_file
        from_numpy frombuffer full get_autocast_cpu_dtype get_autocast_dtype
        get_autocast_gpu_dtype get_autocast_ipu_dtype get_autocast_xla_dtype get_default_device
        get_default_dtype get_deterministic_debug_mode get_device_module
        get_float32_matmul_precision get_num_interop_threads get_num_threads get_rng_state
        hamming_window hann_window iinfo import_ir_module import_ir_module_from_buffer
        inference_mode init_num_threads initial_seed is_anomaly_check_nan_enabled
        is_anomaly_enabled is_autocast_cache_enabled is_autocast_cpu_enabled is_autocast_enabled
        is_autocast_ipu_enabled is_autocast_xla_enabled
        is_deterministic_algorithms_warn_only_enabled is_grad_enabled is_inference_mode_enabled
        is_storage is_tensor is_vulkan_available is_warn_always_enabled kaiser_window layout
        linspace load logspace manual_seed memory_format merge_type_from_type_comment
        miopen_ctc_loss mkldnn_adaptive_avg_pool2d mkldnn_convolution
        mkldnn_linear_backward_weights mkldnn_max_pool2d mkldnn_max_pool3d mkldnn_rnn_layer
        no_grad normal ones parse_ir parse_schema parse_type_comment promote_types qscheme rand
        rand_like randint randint_like randn randn_like randperm range result_type save
        scalar_tensor seed set_anomaly_enabled set_autocast_cache_enabled set_autocast_cpu_dtype
        set_autocast_cpu_enabled set_autocast_dtype set_autocast_enabled set_autocast_gpu_dtype
        set_autocast_ipu_dtype set_autocast_ipu_enabled set_autocast_xla_dtype
        set_autocast_xla_enabled set_default_device set_default_tensor_type
        set_deterministic_debug_mode set_float32_matmul_precision set_flush_denormal
        set_num_interop_threads set_num_threads set_printoptions set_rng_state set_warn_always
        sparse_bsc_tensor sparse_bsr_tensor sparse_compressed_tensor sparse_coo_tensor
        sparse_csc_tensor sparse_csr_tensor sym_constrain_range sym_constrain_range_for_size
        sym_fresh_size tensor thread_safe_generator tril_indices triu_indices typename
        unify_type_list use_deterministic_algorithms vander vmap wait zeros set_grad_enabled
        nested_to_padded_tensor""",
    "torch.Tensor": """
        __class__ __delitem__ __dir__ __hash__ __init_subclass__ __iter__ __new__
        __subclasshook__ __torch_dispatch__ __torch_function__ _addmm_activation _conj
        _conj_physical _dtensor__new__ _fix_weakref _is_all_true _is_any_true _is_zerotensor
        _lazy_clone _make_subclass _make_wrapper_subclass _neg_view _philox_normal_
        _philox_uniform_ _reduce_ex_internal _rev_view_func_unsafe _to_sparse _to_sparse_bsc
        _to_sparse_bsr _to_sparse_csc _to_sparse_csr _typed_storage _use_count _view_func
        _view_func_unsafe as_subclass eig lstsq new new_empty new_empty_strided new_full
        new_ones new_tensor new_zeros reinforce solve stride symeig to_padded_tensor
        to_sparse_bsc to_sparse_bsr to_sparse_coo to_sparse_csc to_sparse_csr unflatten""",
    "torch.Tensor properties": "_has_symbolic_sizes_strides _python_dispatch",
    "torch.fft": "fftfreq rfftfreq",
    "torch.functional": "broadcast_shapes",
    "torch.nn.functional": """
        _canonical_mask _none_or_dtype assert_int_or_pair boolean_dispatch grouped_mm
        handle_torch_function hardsigmoid hardswish has_torch_function has_torch_function_unary
        has_torch_function_variadic scaled_grouped_mm scaled_mm sigmoid tanh upsample
        upsample_bilinear upsample_nearest""",
    "torch.nn.init": """
        calculate_gain constant dirac eye kaiming_normal kaiming_uniform normal orthogonal
        sparse uniform xavier_normal xavier_uniform""",
    "torch.export": "export load save register_dataclass",
}


def _lib() -> Any:
    return importlib.import_module("hookgrad")


def _namespace(path: str) -> Any:
    lib = _lib()
    if path == "torch.Tensor":
        return lib.Tensor
    return importlib.import_module(path.replace("torch", "hookgrad", 1)) if path != "torch" \
        else lib


# Private Tensor attributes of hookgrad's own (PyTorch has none of these names; a test checks
# the list against the oracle both ways)
HOOKGRAD_TENSOR_INTERNALS = (
    "_absent _creation_meta _data _fft_c2c _fft_c2r _fft_r2c _fw_grads _grad_accumulator "
    "_is_param _leaf_alias_of _make _output_nr _python_scalar _requires_grad _retains_grad "
    "_storage_array _storage_data _vc _version_counter _view_chain _view_no_graph _view_version "
    "_wrapped_number")


@functools.cache
def ignored_functions() -> set[Callable]:
    """hookgrad's objects for PyTorch's ignored names (NOTE [Override tables])."""
    out: set[Callable] = set()
    for ns, names in IGNORED.items():
        prop = ns.endswith(" properties")
        owner = _namespace(ns.removesuffix(" properties"))
        for name in names.split():
            obj = getattr(owner, name, None)
            if obj is None:
                continue
            if prop and hasattr(obj, "__get__"):
                out.add(obj.__get__)
            elif not prop:
                out.add(obj)
    # hookgrad's own Tensor internals (storage slots, private helpers) are attributes PyTorch's
    # C++ tensor does not have; like any accessor outside ``__torch_function__`` they are
    # ignored, so tools that wrap every overridable Tensor attribute (activation loggers) leave
    # them alone instead of intercepting hookgrad's kernels from the inside
    tensor = _lib().Tensor
    for name in HOOKGRAD_TENSOR_INTERNALS.split():
        static = inspect.getattr_static(tensor, name, None)
        if static is None:
            continue
        if hasattr(static, "__get__") and not callable(static):
            out.add(static.__get__)
        else:
            out.add(getattr(tensor, name))
    return out


def _walked() -> list[tuple[str, Any, list[str]]]:
    lib = _lib()
    out = [("torch", lib, sorted(n for n in vars(lib) if not n.startswith("__")))]
    for path in ("torch.functional", "torch.nn.functional", "torch.nn.init", "torch.Tensor",
                 "torch.linalg", "torch.fft", "torch.special"):
        ns = _namespace(path)
        names = getattr(ns, "__all__", None) if path == "torch.functional" else None
        out.append((path, ns, list(names) if names else dir(ns)))
    return out


def _skip_name(ns: Any, name: str) -> bool | None:
    """None: drop the name; True: index it but do not list it as overridable."""
    if ns is _lib().Tensor:
        return None if name == "__weakref__" or getattr(object, name, None) is getattr(
            ns, name) else False
    if name.startswith("__") or name == "unique_dim":
        return None
    return name.startswith("_") or name.endswith("_") or not name[0].islower()


@functools.cache
def overridable_functions() -> tuple[dict[Any, list[Callable]], dict[Callable, str]]:
    """(namespace -> overridable functions, function -> printable name), as PyTorch walks them."""
    funcs: dict[Any, list[Callable]] = collections.defaultdict(list)
    index: dict[Callable, str] = {}
    ignored = ignored_functions()
    for path, ns, names in _walked():
        for name in names:
            skip = _skip_name(ns, name)
            func = getattr(ns, name, None)
            if skip is None or func is None or isinstance(func, types.ModuleType):
                continue
            if not callable(func) and hasattr(func, "__get__"):
                index[func.__get__] = f"{path}.{name}.__get__"
                if hasattr(func, "__set__"):
                    index[func.__set__] = f"{path}.{name}.__set__"
                if not skip and func.__get__ not in ignored:
                    funcs[func].append(func.__get__)
                continue
            if not callable(func):
                continue
            index.setdefault(func, f"{path}.{name}")
            if not skip and func not in ignored:
                funcs[ns].append(func)
    return dict(funcs), index


def _dummy(func: Callable) -> Callable:
    def override(*args: Any, **kwargs: Any) -> int:
        return -1
    try:
        override.__signature__ = inspect.signature(func)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        pass
    override.__name__ = getattr(func, "__name__", "override")
    return override


@functools.cache
def _testing() -> dict[Callable, Callable]:
    out: dict[Callable, Callable] = {}
    for funcs in overridable_functions()[0].values():
        for func in funcs:
            out.setdefault(func, _dummy(func))
    return out


def testing_overrides() -> dict[Callable, Callable]:
    """A fresh dict: every overridable function -> a dummy of its signature returning -1."""
    return dict(_testing())
