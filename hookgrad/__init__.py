"""hookgrad: PyTorch's autograd, nn.Module and hooks on NumPy, with a torch-compatible API.

This module re-exports only; op registration happens in the explicit block below, once, in a
known order (architecture.md §3).
"""

from __future__ import annotations

import sys
from pathlib import Path as _Path

# --- op table: registration order is fixed here --------------------------------------------
import hookgrad._ops._malloc  # noqa: F401  (NOTE [glibc heap trimming]: once, at import)
import hookgrad._ops.pointwise  # noqa: F401  (each import registers one family's primitives)
import hookgrad._ops.pointwise_math  # noqa: F401
import hookgrad._ops.pointwise_gamma  # noqa: F401
import hookgrad._ops.activation  # noqa: F401
import hookgrad._ops.comparison  # noqa: F401
import hookgrad._ops.reduction  # noqa: F401
import hookgrad._ops.sorting  # noqa: F401
import hookgrad._ops.shape  # noqa: F401
import hookgrad._ops.indexing  # noqa: F401
import hookgrad._ops.rearrange  # noqa: F401
import hookgrad._ops.unfold  # noqa: F401
import hookgrad._ops.linalg  # noqa: F401
import hookgrad._ops.nn  # noqa: F401
import hookgrad._ops.nn_module_ops  # noqa: F401
import hookgrad._ops.conv  # noqa: F401
import hookgrad._ops.pooling  # noqa: F401
import hookgrad._ops.normalization  # noqa: F401
import hookgrad._ops.rnn  # noqa: F401
import hookgrad._ops.upsample  # noqa: F401
import hookgrad._ops.layers  # noqa: F401
import hookgrad._ops.pool3d  # noqa: F401
import hookgrad._ops.packing  # noqa: F401
import hookgrad._ops.matrix_exp  # noqa: F401
import hookgrad._ops.linalg_decomp  # noqa: F401  (inv, det, slogdet, cholesky: census)
import hookgrad._ops.linalg_triangular  # noqa: F401
import hookgrad._ops.random_gamma  # noqa: F401
import hookgrad._ops.random_counts  # noqa: F401
import hookgrad._ops.linalg_ldl  # noqa: F401
import hookgrad._ops.grid_sampler  # noqa: F401
import hookgrad._ops.fractional_pool  # noqa: F401
import hookgrad._ops.ctc  # noqa: F401
import hookgrad._ops.complex_ops  # noqa: F401
import hookgrad._ops.spectral  # noqa: F401
import hookgrad._ops._layout  # noqa: E402

hookgrad._ops._layout.install()  # NOTE [Elementwise result layout]: after every family

# --- core types --------------------------------------------------------------------------------
from hookgrad._backend import device
from hookgrad._dtypes import (
    Size,
    bool_ as bool,  # noqa: A004 - torch.bool is public API
    can_cast,
    dtype,
    finfo,
    float16,
    float32,
    float64,
    get_default_dtype,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    set_default_dtype,
    uint8,
)
from hookgrad._tensor import Tensor
from hookgrad import _tensor_methods  # noqa: F401  (installs Tensor methods)
from hookgrad import _tensor_copy  # noqa: F401  (installs deepcopy and pickling)
from hookgrad._tensor_str import get_printoptions, printoptions, set_printoptions
from hookgrad._functional.arith import *  # noqa: F403
from hookgrad._functional.creation import *  # noqa: F403
from hookgrad._functional.reduction import *  # noqa: F403
from hookgrad._functional.shape import *  # noqa: F403
from hookgrad._functional.pointwise import *  # noqa: F403
from hookgrad._functional.indexing import *  # noqa: F403
from hookgrad._functional.linalg import *  # noqa: F403
from hookgrad._functional.nn_ops import *  # noqa: F403
from hookgrad._functional.random import *  # noqa: F403
from hookgrad._functional.misc import *  # noqa: F403
from hookgrad._functional.layer_ops import *  # noqa: F403
from hookgrad._functional.complex import (  # noqa: A004 - torch.complex shadows the builtin
    angle,
    complex,
    imag,
    polar,
    view_as_complex,
    view_as_complex_copy,
    view_as_real,
    view_as_real_copy,
)
from hookgrad._functional._hash import hash_tensor
from hookgrad._functional.matrix_ops import matrix_exp
from hookgrad._functional.random_gamma import (  # noqa: E402
    _dirichlet_grad, _sample_dirichlet, _standard_gamma, _standard_gamma_grad)
from hookgrad._functional._common import result_type
from hookgrad import linalg, return_types  # noqa: E402  (torch.linalg, torch.return_types)

# --- autograd ------------------------------------------------------------------------------
from hookgrad import autograd
from hookgrad.autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled
from hookgrad.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

# --- higher layers ----------------------------------------------------------------------------
from hookgrad import backends, cuda, func, nn, optim, utils  # noqa: E402
from hookgrad.func import vmap  # noqa: E402  (torch.vmap)
from hookgrad._runtime import (  # noqa: E402
    are_deterministic_algorithms_enabled,
    get_num_threads,
    set_num_threads,
    use_deterministic_algorithms,
)
from hookgrad._ops.rnn import mkldnn_rnn_layer  # noqa: E402  (torch.mkldnn_rnn_layer)
from hookgrad.nn._functional_rnn import (  # noqa: E402  (torch.lstm, torch.gru, ...)
    gru,
    gru_cell,
    lstm,
    lstm_cell,
    rnn_relu,
    rnn_relu_cell,
    rnn_tanh,
    rnn_tanh_cell,
)
from hookgrad.nn._functional_layers import (  # noqa: E402  (torch.cosine_similarity, ...)
    cosine_similarity,
    instance_norm,
    pairwise_distance,
)
from hookgrad.nn._functional_resample import pixel_shuffle, pixel_unshuffle  # noqa: E402
import hookgrad.utils.data  # noqa: E402,F401
import hookgrad.utils.hooks  # noqa: E402,F401
from hookgrad import testing  # noqa: E402
from hookgrad import distributed, futures  # noqa: E402
from hookgrad.futures import Future  # noqa: E402  (torch.Future)
import hookgrad.nn.parallel  # noqa: E402,F401  (torch.nn.parallel)
from hookgrad.serialization import load, save  # noqa: E402
from hookgrad.utils.dlpack import from_dlpack  # noqa: E402
import hookgrad.package  # noqa: E402,F401  (torch.package: hermetic model archives)
import hookgrad.fx  # noqa: E402,F401  (torch.fx: symbolic tracing and the graph IR)
import hookgrad.compile  # noqa: E402,F401  (torch.compile: the package module is callable)
from hookgrad import _dynamo, _functorch, compiler  # noqa: E402,F401
from hookgrad.compile.trace.control_flow import cond  # noqa: E402,F401

float = float32  # noqa: A001 - torch.float is public API
double = float64
half = float16
long = int64
int = int32  # noqa: A001 - torch.int is public API
short = int16

__version__ = "0.1.0"

# --- ecosystem compatibility (issue 14 part A): legacy surface, torch._C, jit, ... ------------
from hookgrad import _legacy, _storage  # noqa: E402
from hookgrad._legacy import (  # noqa: E402
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    bfloat16,
    channels_last,
    channels_last_3d,
    contiguous_format,
    is_complex,
    layout,
    memory_format,
    preserve_format,
    strided,
    typename,
)
from hookgrad._storage import TypedStorage, UntypedStorage  # noqa: E402
from hookgrad import _C, distributions, jit, multiprocessing, profiler, serialization  # noqa: E402
from hookgrad import overrides, random  # noqa: E402
import hookgrad.nn.modules.batchnorm  # noqa: E402,F401  (tools read nn.modules.batchnorm)
import hookgrad.autograd.profiler  # noqa: E402,F401
import hookgrad.utils.flop_counter  # noqa: E402,F401

_legacy.install()
_storage.install()

# --- census of PyTorch's surface (issue 21): composites, runtime switches, module paths -------
from hookgrad._surface import install as _surface_install  # noqa: E402
from hookgrad import accelerator, amp, ao, onnx, quantization, special  # noqa: E402
from hookgrad.amp import autocast  # noqa: E402  (torch.autocast)
import hookgrad.nn._init_extra  # noqa: E402,F401  (nn.init.dirac_, sparse_, deprecated names)
import hookgrad.nn.modules.utils  # noqa: E402,F401  (_pair & co, consume_prefix_in_state_dict...)
import hookgrad.utils.data._utils.collate  # noqa: E402,F401  (torch.utils.data._utils.collate)
import hookgrad.utils.data.more_datasets  # noqa: E402,F401  (ChainDataset, StackDataset, ...)
import hookgrad.utils.checkpoint  # noqa: E402,F401  (torch.utils.checkpoint is reachable after import)

globals().update({k: v for k, v in _surface_install.namespace().items() if k not in globals()})
_surface_install.install()
# Tools compare ``torch.__version__`` with PyTorch releases to pick code paths; hookgrad reports
# the PyTorch version it reproduces and keeps its own release number in `hookgrad_version`.
hookgrad_version = __version__
__version__ = "2.13.0"
from hookgrad import _dispatch as _dispatch_mod  # noqa: E402
from hookgrad.utils import _python_dispatch  # noqa: E402
from hookgrad.utils._python_dispatch import ops  # noqa: E402  (torch.ops.aten.<name>.<overload>)

_python_dispatch.install(_dispatch_mod.bind, _dispatch_mod.bind_inplace)

# --- names real libraries import at load time (issue 21, tests/ecosystem/test_lib_needs.py) ---
from hookgrad._serialization.file_reader import PyTorchFileReader  # noqa: E402
from hookgrad.jit import ScriptModule  # noqa: E402  (torch.ScriptModule, for annotations)
from hookgrad._dtypes import complex64, complex128, uint16, uint32, uint64  # noqa: E402
cfloat, cdouble = complex64, complex128
from hookgrad._surface import foreach as _multi_tensor_surface  # noqa: E402

# torch._foreach_*: optimizer libraries call them directly (the census keeps no private names);
# these replace the few earlier single-overload versions (same results, PyTorch's overloads)
globals().update(_multi_tensor_surface.functions())
from hookgrad._surface import lib_methods as _lib_methods  # noqa: E402

_lib_methods.install()
from hookgrad._dtypes import (  # noqa: E402  (dtype objects only, as complex64 above)
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
)
from hookgrad import version  # noqa: E402,F401  (torch.version: cuda/hip None, as a CPU build)
from hookgrad import __config__, types  # noqa: E402,F401  (torch.__config__, torch.types)
from hookgrad import fft  # noqa: E402,F401  (torch.fft)
from hookgrad import _subclasses  # noqa: E402,F401  (torch._subclasses is an attribute after import torch)
from hookgrad._surface import cfuncs_install as _cfuncs  # noqa: E402  (issue 21: census functions)

globals().update({k: v for k, v in _cfuncs.namespace().items() if k not in globals()})
_cfuncs.install()
from hookgrad._surface import census_names as _census_names  # noqa: E402  (issue 21: second paths)

_census_names.install()
from hookgrad import quasirandom  # noqa: E402,F401  (torch.quasirandom.SobolEngine)
from hookgrad import signal  # noqa: E402,F401  (torch.signal.windows)

torch = sys.modules[__name__]  # ``torch.torch`` is the package itself in PyTorch too (kornia's annotations)

# --- subsystem stand-ins and small runtime names (issue 21, docs/census.md "Stand-ins") -------
from hookgrad import cpu, functional, hub, library, mps, mtia, storage, torch_version, xpu  # noqa: E402,F401,E501
from hookgrad._stream import Event, Stream  # noqa: E402
from hookgrad._sym_eager import *  # noqa: E402,F403  (sym_int, ..., fork, wait, while_loop)
from hookgrad._runtime_extras import *  # noqa: E402,F403
from hookgrad._function_mode import DisableTorchFunction, DisableTorchFunctionSubclass  # noqa: E402
from hookgrad.cuda import OutOfMemoryError  # noqa: E402  (torch.OutOfMemoryError)
from hookgrad.amp import GradScaler  # noqa: E402  (torch.GradScaler is torch.amp's)
from hookgrad.jit import ScriptFunction  # noqa: E402  (torch.ScriptFunction)
from hookgrad.optim.sparse_adam import SparseAdam as _SparseAdam  # noqa: E402
from hookgrad import _device_moves, _strided_queries, _unsupported  # noqa: E402
from hookgrad._strided_queries import dequantize  # noqa: E402

_C.ScriptFunction = ScriptFunction  # torch._C.ScriptFunction is torch.jit.ScriptFunction
optim.SparseAdam = _SparseAdam
for _name in ("fork", "wait"):  # torch.jit.fork/wait run eagerly outside TorchScript
    if not hasattr(jit, _name):
        setattr(jit, _name, globals()[_name])
legacy_contiguous_format = contiguous_format  # PyTorch keeps the old name for the same object
__version__ = torch_version.TorchVersion(__version__)
from hookgrad.backends import cuda_more as _cuda_more  # noqa: E402

_cuda_more.install()
_device_moves.install()
_strided_queries.install()
_unsupported.install()
_strided_queries.install_storage_type()
Storage = FloatStorage  # noqa: F821 - PyTorch's torch.Storage is torch.FloatStorage (a stand-in)
chalf = complex32  # noqa: F821 - one dtype object under both names, as in PyTorch
from hookgrad._functional import _out  # noqa: E402

_out.install(globals())  # out= on the torch.* functions that take it (not Tensor methods)
_out.install_result_writes(torch=globals(), linalg=linalg.__dict__, special=special.__dict__)
from hookgrad._surface.own_names import give_aliases_their_own_names as _own_names  # noqa: E402

_own_names()  # last: every alias is its own object under PyTorch's name (see the module)
__all__ = [_n for _n in (_Path(__file__).parent / "_surface" / "torch_all.txt").read_text().split()
           if _n in globals()]  # torch.__all__, less the names hookgrad lacks
