"""The table of stand-ins: one `Group` per reason (see `hookgrad._unsupported`).

``owner`` is the hookgrad path the names are set on; ``names`` is space-separated; ``message``
may name the object with ``{name}`` (its ``torch.`` path). Errors follow PyTorch on a CPU-only
build where PyTorch itself fails there (``AssertionError: Torch not compiled with XPU enabled``);
names that work in PyTorch but not in hookgrad raise ``NotImplementedError`` with the reason.
A real implementation already on the owner always wins over a row.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Group:
    """Stand-ins of one kind, for one reason, on one owner."""

    owner: str
    kind: str  # function | method | class | module | layout | dtype | constant
    names: str
    error: type
    message: str
    open: bool = False  # module kind: any public attribute is a raising class
    typename: str = ""  # constant kind: the name of the values' type


_SPARSE = ("hookgrad does not implement {name}: sparse layouts are unsupported "
           "(hookgrad tensors are dense and strided)")
_NESTED = "hookgrad does not implement {name}: nested (jagged) tensors are unsupported"
_MASKED = "hookgrad does not implement {name}: masked tensors are unsupported"
_EXPORT = ("hookgrad does not implement {name}: torch.export needs symbolic tracing to an "
           "ATen graph (hookgrad.fx/torch.compile cover tracing)")
_MONITOR = "hookgrad does not implement {name}: torch.monitor's C++ event/stat counters"
_LIBRARY = ("hookgrad does not implement {name}: custom operator registration needs PyTorch's "
            "C++ dispatcher")
_QUANT = ("hookgrad does not implement quantization ({name}): quantized dtypes and kernels are "
          "outside its scope")
_JIT = ("hookgrad does not implement {name}: TorchScript and the C++ dispatcher are outside "
        "its scope")
_XPU = "Torch not compiled with XPU enabled"
_MTIA_ASSERT = ("Torch not compiled with MTIA enabled. Ensure you have `import "
                "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and "
                "include `//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!")
_MTIA = "Cannot execute {name}() without MTIA backend."
_MPS = "Cannot execute {name}() without MPS backend."
_DTYPE = ("hookgrad does not implement {name}: sub-byte and bit dtypes have no NumPy storage "
          "(tensors of it cannot be made)")
_ONEDNN = "hookgrad does not implement {name}: oneDNN (mkldnn) kernels and tensors"
_DCP = ("hookgrad does not implement {name}: torch.distributed.checkpoint's sharded format "
        "(DCP); save a full state dict with hookgrad.save (PyTorch loads it), and use "
        "hookgrad.distributed.checkpoint.state_dict for FQN-keyed model/optimizer state")
_RPC = ("hookgrad does not implement {name}: torch.distributed.rpc needs an RPC agent "
        "(remote calls and references between processes); hookgrad.distributed runs "
        "collectives and point-to-point messages only, and rpc.is_available() is False")
_SYM = "hookgrad does not implement {name}: symbolic shapes exist only under torch.compile"
_ONNX = ("hookgrad does not implement {name}: it serves ONNX export, and hookgrad has no ONNX "
         "exporter (export the model with PyTorch)")

GROUPS: tuple[Group, ...] = (
    # --- whole subsystems: importable modules whose entry points raise ----------------------
    Group("hookgrad", "module", "sparse", NotImplementedError, _SPARSE),
    Group("hookgrad", "module", "nested", NotImplementedError, _NESTED),
    Group("hookgrad", "module", "masked", NotImplementedError, _MASKED),
    Group("hookgrad", "module", "export", NotImplementedError, _EXPORT),
    Group("hookgrad", "module", "monitor", NotImplementedError, _MONITOR),
    Group("hookgrad", "module", "library", NotImplementedError, _LIBRARY),
    Group("hookgrad.sparse", "function", "addmm mm sum softmax log_softmax sampled_addmm spdiags "
          "spsolve as_sparse_gradcheck to_sparse_semi_structured", NotImplementedError, _SPARSE),
    Group("hookgrad.sparse", "class", "SparseSemiStructuredTensor check_sparse_tensor_invariants "
          "SparseSemiStructuredTensorCUSPARSELT SparseSemiStructuredTensorCUTLASS",
          NotImplementedError, _SPARSE),
    Group("hookgrad.nested", "function", "as_nested_tensor masked_select narrow nested_tensor "
          "nested_tensor_from_jagged to_padded_tensor", NotImplementedError, _NESTED),
    Group("hookgrad.masked", "class", "MaskedTensor", NotImplementedError, _MASKED),
    Group("hookgrad.masked", "function", "amax amin argmax argmin as_masked_tensor cumprod cumsum "
          "is_masked_tensor log_softmax logaddexp logsumexp masked_tensor mean median norm "
          "normalize prod softmax softmin std sum var", NotImplementedError, _MASKED),
    Group("hookgrad.export", "function", "export draft_export load save unflatten "
          "register_dataclass default_decompositions dims", NotImplementedError, _EXPORT),
    Group("hookgrad.export", "class", "AdditionalInputs CustomDecompTable Dim "
          "ExportBackwardSignature ExportGraphSignature ExportedProgram FlatArgsAdapter "
          "ModuleCallEntry ModuleCallSignature PassResult ShapesCollection UnflattenedModule",
          NotImplementedError, _EXPORT),
    Group("hookgrad.monitor", "function", "log_event register_event_handler "
          "unregister_event_handler", NotImplementedError, _MONITOR),
    Group("hookgrad.monitor", "class", "Aggregation Event EventHandlerHandle Stat "
          "TensorboardEventHandler data_value_t", NotImplementedError, _MONITOR),
    Group("hookgrad.library", "class", "Library", NotImplementedError, _LIBRARY),
    Group("hookgrad.library", "function", "define impl impl_abstract register_autocast "
          "register_torch_dispatch register_vmap opcheck get_ctx get_kernel infer_schema "
          "fallthrough_kernel triton_op wrap_triton", NotImplementedError, _LIBRARY),
    # --- sparse and jagged layouts and constructors (torch.*) -------------------------------
    Group("hookgrad", "layout", "sparse_coo sparse_csr sparse_csc sparse_bsr sparse_bsc",
          NotImplementedError, _SPARSE),
    Group("hookgrad", "layout", "jagged", NotImplementedError, _NESTED),
    Group("hookgrad", "function", "sparse_coo_tensor sparse_csr_tensor sparse_csc_tensor "
          "sparse_bsr_tensor sparse_bsc_tensor sparse_compressed_tensor smm hspmm sspaddmm saddmm "
          "dsmm hsmm spmm resize_as_sparse_ ccol_indices_copy col_indices_copy crow_indices_copy "
          "indices_copy row_indices_copy values_copy", NotImplementedError, _SPARSE),
    Group("hookgrad.Tensor", "method", "ccol_indices col_indices crow_indices row_indices "
          "indices values coalesce is_coalesced", RuntimeError,
          "{name} expected a sparse tensor layout but got Strided (hookgrad tensors are dense)"),
    Group("hookgrad.Tensor", "method", "smm sspaddmm", RuntimeError,
          "tensor.sspaddmm(...) can only be called on sparse tensors"),
    Group("hookgrad.Tensor", "method", "sparse_mask sparse_resize_ sparse_resize_and_clear_ "
          "resize_as_sparse_", NotImplementedError,
          "Could not run {name} with arguments from the 'CPU' backend (no sparse tensors)."),
    Group("hookgrad.Tensor", "method", "to_sparse to_sparse_coo to_sparse_csr to_sparse_csc "
          "to_sparse_bsr to_sparse_bsc", NotImplementedError, _SPARSE),
    # --- other accelerators on tensors (PyTorch's CPU build fails the same way) -------------
    Group("hookgrad.Tensor", "method", "xpu", AssertionError, _XPU),
    Group("hookgrad.Tensor", "method", "mtia", AssertionError, _MTIA_ASSERT),
    Group("hookgrad.Tensor", "method", "ipu", RuntimeError,
          "PyTorch is not linked with support for ipu devices"),
    Group("hookgrad.Tensor", "method", "record_stream", NotImplementedError,
          "Could not run 'aten::record_stream' with arguments from the 'CPU' backend."),
    # --- torch.xpu / torch.mtia / torch.mps entry points that need the device ---------------
    Group("hookgrad.xpu", "function", "current_device current_stream get_device_capability "
          "get_device_name get_device_properties get_per_process_memory_fraction get_rng_state "
          "get_stream_from_external init initial_seed mem_get_info set_device "
          "set_per_process_memory_fraction set_stream synchronize", AssertionError, _XPU),
    Group("hookgrad.xpu", "class", "Stream Event MemPool XPUGraph", RuntimeError,
          "Tried to instantiate dummy base class {name}"),
    Group("hookgrad.mtia", "function", "current_device current_stream default_stream "
          "get_device_capability get_device_properties set_device synchronize empty_cache "
          "graph_pool_handle snapshot", RuntimeError, _MTIA),
    Group("hookgrad.mtia", "function", "init initial_seed get_rng_state", AssertionError,
          _MTIA_ASSERT),
    Group("hookgrad.mtia", "class", "MTIAGraph StreamContext", RuntimeError, _MTIA),
    Group("hookgrad.mps", "function", "synchronize empty_cache get_rng_state seed compile_shader "
          "current_allocated_memory driver_allocated_memory recommended_max_memory",
          RuntimeError, _MPS),
    Group("hookgrad.mps", "class", "Event", RuntimeError, _MPS),
    Group("hookgrad.backends.mps", "function", "is_macos13_or_newer is_macos_or_newer",
          RuntimeError, _MPS),
    Group("hookgrad.backends.mps", "function", "get_core_count get_name", AttributeError,
          "module 'torch._C' has no attribute for {name} (PyTorch built without MPS)"),
    # --- quantization (torch.ao imports but raises; these are its other entry points) -------
    Group("hookgrad.nn", "module", "quantized qat intrinsic quantizable", NotImplementedError,
          _QUANT, open=True),
    Group("hookgrad.nn.quantized", "module", "dynamic functional modules", NotImplementedError,
          _QUANT, open=True),
    Group("hookgrad.nn.qat", "module", "dynamic modules", NotImplementedError, _QUANT, open=True),
    Group("hookgrad.nn.quantizable", "module", "modules", NotImplementedError, _QUANT, open=True),
    Group("hookgrad.nn.intrinsic", "module", "modules qat quantized", NotImplementedError, _QUANT,
          open=True),
    Group("hookgrad.nn.intrinsic.quantized", "module", "dynamic modules", NotImplementedError,
          _QUANT, open=True),
    Group("hookgrad", "dtype", "qint8 quint8 qint32 quint4x2 quint2x4", TypeError,
          _QUANT),
    Group("hookgrad", "function", "quantize_per_tensor quantize_per_tensor_dynamic "
          "quantize_per_channel int_repr q_scale q_zero_point q_per_channel_scales "
          "q_per_channel_zero_points q_per_channel_axis fake_quantize_per_tensor_affine "
          "fake_quantize_per_channel_affine empty_quantized choose_qparams_optimized "
          "fused_moving_avg_obs_fake_quant quantized_batch_norm quantized_max_pool1d "
          "quantized_max_pool2d quantized_max_pool3d quantized_lstm quantized_gru "
          "quantized_lstm_cell quantized_gru_cell quantized_rnn_relu_cell "
          "quantized_rnn_tanh_cell", NotImplementedError, _QUANT),
    Group("hookgrad.Tensor", "method", "int_repr q_scale q_zero_point q_per_channel_scales "
          "q_per_channel_zero_points q_per_channel_axis qscheme", NotImplementedError, _QUANT),
    Group("hookgrad", "constant", "per_tensor_affine per_channel_affine per_tensor_symmetric "
          "per_channel_symmetric per_channel_affine_float_qparams", NotImplementedError, _QUANT,
          typename="qscheme"),
    Group("hookgrad", "class", "QInt8Storage QUInt8Storage QInt32Storage QUInt4x2Storage "
          "QUInt2x4Storage", NotImplementedError, _QUANT),
    Group("hookgrad", "function", "fbgemm_linear_fp16_weight "
          "fbgemm_linear_fp16_weight_fp32_activation fbgemm_linear_int8_weight "
          "fbgemm_linear_int8_weight_fp32_activation fbgemm_linear_quantize_weight "
          "fbgemm_pack_gemm_matrix_fp16 fbgemm_pack_quantized_matrix", NotImplementedError,
          _QUANT),
    # --- vendor kernels (cuDNN/MIOpen fail on PyTorch's CPU build too; oneDNN ones would run) --
    Group("hookgrad", "function", "cudnn_affine_grid_generator cudnn_batch_norm "
          "cudnn_convolution cudnn_convolution_add_relu cudnn_convolution_relu "
          "cudnn_convolution_transpose cudnn_grid_sampler miopen_batch_norm miopen_convolution "
          "miopen_convolution_add_relu miopen_convolution_relu miopen_convolution_transpose "
          "miopen_ctc_loss miopen_depthwise_convolution miopen_rnn", NotImplementedError,
          "Could not run {name} with arguments from the 'CPU' backend."),
    Group("hookgrad", "function", "mkldnn_adaptive_avg_pool2d mkldnn_convolution "
          "mkldnn_linear_backward_weights mkldnn_max_pool2d mkldnn_max_pool3d",
          NotImplementedError, _ONEDNN),
    Group("hookgrad.Tensor", "method", "to_mkldnn", NotImplementedError, _ONEDNN),
    # --- legacy per-dtype storage classes: names for isinstance checks and annotations ------
    Group("hookgrad", "class", "FloatStorage DoubleStorage HalfStorage BFloat16Storage "
          "LongStorage IntStorage ShortStorage CharStorage ByteStorage BoolStorage "
          "ComplexFloatStorage ComplexDoubleStorage StorageBase", NotImplementedError,
          "hookgrad does not implement {name}: the legacy per-dtype storages (use "
          "torch.TypedStorage / torch.UntypedStorage)"),
    # --- sub-byte / bit dtypes: dtype objects whose tensors cannot be made ------------------
    Group("hookgrad", "dtype", "bit bits16 bits1x8 bits2x4 bits4x2 bits8 float4_e2m1fn_x2 int1 "
          "int2 int3 int4 int5 int6 int7 uint1 uint2 uint3 uint4 uint5 uint6 uint7",
          TypeError, _DTYPE),
    # --- distributed checkpoint (DCP): names libraries import at load time (transformers) ----
    Group("hookgrad.distributed.checkpoint", "class", "BytesStorageMetadata "
          "ChunkStorageMetadata DefaultLoadPlanner DefaultSavePlanner FileSystemReader "
          "FileSystemWriter LoadPlan LoadPlanner Metadata QuantizedHuggingFaceStorageReader "
          "ReadItem SavePlan SavePlanner StorageReader StorageWriter TensorStorageMetadata "
          "WriteItem", NotImplementedError, _DCP),
    Group("hookgrad.distributed.checkpoint", "function", "save load async_save save_state_dict "
          "load_state_dict load_sharded_optimizer_state_dict", NotImplementedError, _DCP),
    Group("hookgrad.distributed.checkpoint.hf_storage", "class", "HuggingFaceStorageReader "
          "HuggingFaceStorageWriter", NotImplementedError, _DCP),
    # --- distributed RPC and distributed autograd: names tools import at load time ----------
    Group("hookgrad.distributed.rpc", "function", "init_rpc rpc_sync rpc_async remote shutdown "
          "get_worker_info get_rpc_timeout enable_gil_profiling", NotImplementedError, _RPC),
    Group("hookgrad.distributed.rpc", "class", "RRef PyRRef WorkerInfo RpcAgent TensorPipeAgent "
          "RpcBackendOptions TensorPipeRpcBackendOptions BackendType", NotImplementedError, _RPC),
    Group("hookgrad.distributed.autograd", "function", "backward get_gradients",
          NotImplementedError, _RPC),
    Group("hookgrad.distributed.autograd", "class", "DistAutogradContext", NotImplementedError,
          _RPC),
    # --- complex half: no NumPy storage (complex64/128 are real dtype objects already) -------
    Group("hookgrad", "dtype", "complex32", TypeError,
          "hookgrad does not implement {name}: complex half has no NumPy storage"),
    # --- symbolic shapes: the types exist (isinstance is False for every eager value) -------
    Group("hookgrad", "class", "SymInt SymFloat SymBool", NotImplementedError, _SYM),
    # --- TorchScript: types and classes tools name in annotations and isinstance checks -----
    Group("hookgrad", "class", "AliasDb AnyType Argument ArgumentSpec AwaitType BoolType "
          "BufferDict CallStack Capsule ClassType Code CompilationUnit CompleteArgumentSpec "
          "ComplexType ConcreteModuleType ConcreteModuleTypeBuilder DeviceObjType DictType "
          "EnumType ErrorReport FileCheck FloatType FunctionSchema FutureType Graph "
          "InferredType IntType InterfaceType ListType LiteScriptModule ModuleDict NoneType "
          "NumberType OptionalType ParameterDict PyObjectType RRefType ScriptClass "
          "ScriptDict ScriptList ScriptMethod ScriptObject StreamObjType "
          "StringType SymBoolType SymIntType TensorType TupleType Type UnionType",
          NotImplementedError, _JIT),
    Group("hookgrad", "class", "Block BenchmarkConfig BenchmarkExecutionStats DeepCopyMemoTable "
          "DeserializationStorageContext DispatchKey DispatchKeySet ExcludeDispatchKeyGuard "
          "ExecutionPlan Gradient GraphExecutorState IODescriptor LockingLogger LoggerBase Node "
          "NoopLogger OperatorInfo PyTorchFileWriter ScriptClassFunction ScriptDictIterator "
          "ScriptDictKeyIterator ScriptListIterator ScriptModuleSerializer ScriptObjectProperty "
          "SerializationStorageContext StaticModule Tag ThroughputBenchmark TracingState Use "
          "Value", NotImplementedError, _JIT),
    Group("hookgrad", "module", "classes", NotImplementedError, _JIT),
    # --- profiler back ends of other vendors, python-native DSL kernel switches ------------
    Group("hookgrad.autograd.profiler", "class", "emit_itt", NotImplementedError,
          "hookgrad does not implement {name}: Intel ITT (VTune) ranges; use torch.profiler"),
    Group("hookgrad.autograd.profiler", "function", "load_nvprof parse_nvprof_trace",
          NotImplementedError, "hookgrad does not implement {name}: reading nvprof traces"),
    Group("hookgrad.backends", "module", "python_native", NotImplementedError,
          "hookgrad does not implement {name}: PyTorch's Triton/CuTe DSL kernel overrides"),
    Group("hookgrad.backends.python_native", "function", "all_dsls available_dsls "
          "disable_dispatch_keys disable_operations enable_dispatch_keys enable_operations "
          "get_dsl_operations is_dsl_disabled is_operation_disabled operations_disabled",
          NotImplementedError,
          "hookgrad does not implement {name}: PyTorch's Triton/CuTe DSL kernel overrides"),
    Group("hookgrad", "function", "import_ir_module import_ir_module_from_buffer parse_ir "
          "parse_schema parse_type_comment merge_type_from_type_comment unify_type_list",
          NotImplementedError, _JIT),
    Group("hookgrad.testing", "class", "FileCheck", NotImplementedError, _JIT),
    # --- ONNX export helpers (no exporter: hookgrad.onnx.export raises) ---------------------
    Group("hookgrad.onnx", "class", "InputObserver", NotImplementedError, _ONNX),
    Group("hookgrad.onnx", "module", "ops", NotImplementedError, _ONNX, open=True),
    # --- the legacy profiler's raw record: no constructor in PyTorch either -------------------
    Group("hookgrad.autograd", "class", "ProfilerEvent", TypeError,
          "torch._C._autograd.ProfilerEvent: No constructor defined!"),
)
