"""The table of ops the fuzzer draws from (see `_ops` for the helpers and the contract)."""

from __future__ import annotations

from tests.fuzz import _ops as o
from tests.fuzz._catalogue_more import KNOWN_DIFFERENT, OPS_MORE
from tests.fuzz._catalogue_extra import OPS_EXTRA
from tests.fuzz._catalogue_nn import OPS_NN
from tests.fuzz._ops import Op


def _inplace_binary(method):
    def call(lib, a, b, scalar=None):
        getattr(a, method)(b if scalar is None else scalar)
        return a

    return call


def _inplace_unary(method, *args):
    def call(lib, a):
        getattr(a, method)(*args)
        return a

    return call


def _setitem_slice(lib, a, b, dim, start, stop, step):
    a[(slice(None),) * dim + (slice(start, stop, step),)] = b.sum() if b.dim() else b
    return a


def _setitem_list(lib, a, b, dim, idx):
    a[(slice(None),) * dim + (idx,)] = b.sum()
    return a


def _layer_norm_params(rng, m):
    return {} if o._is_float(m) and m.shape and m.shape[-1] > 0 else None


def _layer_norm(lib, x, w):
    n = x.shape[-1]
    return lib.nn.functional.layer_norm(x, (n,), w[:n] if w.dim() == 1 and w.shape[0] >= n
                                        else None)


def _linear(lib, x, w):
    return lib.nn.functional.linear(x, w)


def _linear_params(rng, a, b):
    if not (o._is_float(a) and o._is_float(b)) or len(b.shape) != 2 or not a.shape:
        return None
    return {} if a.shape[-1] == b.shape[-1] or rng.random() < 0.05 else None


def _cat_params(rng, a, b):
    return {"dim": o._dim(rng, a)} if a.shape else None


OPS: dict[str, Op] = {
    # pointwise (float results, also from integer inputs: type promotion)
    "neg": Op("pointwise", 1, lambda lib, x: -x, o._none),
    "exp": Op("pointwise", 1, lambda lib, x: x.exp(), o._none),
    "tanh": Op("pointwise", 1, lambda lib, x: x.tanh(), o._none),
    "sigmoid": Op("pointwise", 1, lambda lib, x: x.sigmoid(), o._none),
    "sin": Op("pointwise", 1, lambda lib, x: lib.sin(x), o._none),
    "abs": Op("pointwise", 1, lambda lib, x: x.abs(), o._none),
    "relu": Op("pointwise", 1, lambda lib, x: lib.relu(x), o._none),
    "square": Op("pointwise", 1, lambda lib, x: x * x, o._none),
    "clamp": Op("pointwise", 1, lambda lib, x: x.clamp(-1, 1), o._none),
    "gelu": Op("nn", 1, lambda lib, x: lib.nn.functional.gelu(x), o._floaty),
    "silu": Op("nn", 1, lambda lib, x: lib.nn.functional.silu(x), o._floaty),
    # binary with broadcasting and promotion
    "add": Op("binary", 2, o._binary(lambda lib, a, b: a + b), o._other_or_scalar),
    "sub": Op("binary", 2, o._binary(lambda lib, a, b: a - b), o._other_or_scalar),
    "mul": Op("binary", 2, o._binary(lambda lib, a, b: a * b), o._other_or_scalar),
    "div": Op("binary", 2, o._binary(lambda lib, a, b: a / b), o._other_or_scalar),
    "rsub": Op("binary", 2, o._binary(lambda lib, a, b: 2 - a if not hasattr(b, "shape")
                                      else b - a), o._other_or_scalar),
    "maximum": Op("binary", 2, lambda lib, a, b: lib.maximum(a, b), o._none),
    "where": Op("binary", 2, lambda lib, a, b: lib.where(a > 0, a, b), o._none),
    "atan2": Op("binary", 2, lambda lib, a, b: lib.atan2(a, b), o._floaty),
    # reductions
    "sum": Op("reduction", 1, o._reduce("sum"), o._reduce_params),
    "mean": Op("reduction", 1, o._reduce("mean"), lambda rng, m: o._reduce_params(rng, m)
               if o._is_float(m) else None),
    "amax": Op("reduction", 1, o._reduce("amax"), o._reduce_params),
    "prod": Op("reduction", 1, o._reduce("prod"), o._reduce_params),
    "logsumexp": Op("reduction", 1, lambda lib, x, dim, keepdim: x.logsumexp(
        0 if dim is None else dim, keepdim), o._reduce_params),
    # (on a contiguous input: softmax's layout on others is a known difference, xfailed in
    # test_regressions.py)
    "softmax": Op("reduction", 1, lambda lib, x, dim: x.contiguous().softmax(dim),
                  o._softmax_params),
    "log_softmax": Op("reduction", 1, lambda lib, x, dim: x.contiguous().log_softmax(dim),
                      o._softmax_params),
    "softmax_raw": Op("reduction", 1, lambda lib, x, dim: x.softmax(dim), lambda rng, m: None),
    "cumsum": Op("reduction", 1, lambda lib, x, dim: x.cumsum(dim),
                 lambda rng, m: {"dim": o._dim(rng, m)} if m.shape else None),
    # views
    "reshape": Op("view", 1, lambda lib, x, shape: x.reshape(shape), o._reshape_params),
    "view": Op("view", 1, lambda lib, x, shape: x.view(shape), o._reshape_params),
    "permute": Op("view", 1, lambda lib, x, dims: x.permute(dims), o._perm_params),
    "transpose": Op("view", 1, lambda lib, x, d0, d1: x.transpose(d0, d1), o._transpose_params),
    "slice": Op("view", 1, o._slice, o._slice_params),
    "select": Op("view", 1, lambda lib, x, dim, index: x.select(dim, index), o._select_params),
    "expand": Op("view", 1, lambda lib, x, shape: x.expand(shape), o._expand_params),
    "unsqueeze": Op("view", 1, lambda lib, x, dim: x.unsqueeze(dim), o._unsq_params),
    "squeeze": Op("view", 1, lambda lib, x: x.squeeze(), o._none),
    "unbind": Op("view", 1, lambda lib, x, pick, size: x.unbind()[pick], o._multi_params),
    "split": Op("view", 1, lambda lib, x, pick, size: x.split(size)[pick // size],
                o._multi_params),
    "diagonal": Op("view", 1, lambda lib, x: x.diagonal(), lambda rng, m: {}
                   if len(m.shape) >= 2 else None),
    "flatten": Op("view", 1, lambda lib, x: x.flatten(), o._none),
    "detach": Op("misc", 1, lambda lib, x: x.detach(), o._none),
    "alias": Op("view", 1, lambda lib, x: x[...], o._none),
    # indexing
    "index_list": Op("index", 1, o._list_index, o._list_index_params),
    "index_pair": Op("index", 1, lambda lib, x, a, b: x[a, ..., b], o._two_lists_params),
    "index_mask": Op("index", 1, lambda lib, x, mask: x[lib.tensor(mask)], o._mask_params),
    "gather": Op("index", 1, lambda lib, x, dim, index: x.gather(dim, lib.tensor(index)),
                 o._gather_params),
    "index_select": Op("index", 1, lambda lib, x, dim, index: x.index_select(
        dim, lib.tensor(index)), o._index_select_params),
    "masked_select": Op("index", 1, lambda lib, x: x.masked_select(x > 0), o._none),
    "masked_fill": Op("index", 1, lambda lib, x: x.masked_fill(x > 0.5, -1.0), o._none),
    # in-place (on leaves too: PyTorch's errors are compared)
    "add_": Op("inplace", 2, _inplace_binary("add_"), o._other_or_scalar),
    "mul_": Op("inplace", 2, _inplace_binary("mul_"), o._other_or_scalar),
    "sub_": Op("inplace", 2, _inplace_binary("sub_"), o._other_or_scalar),
    "div_": Op("inplace", 2, _inplace_binary("div_"), o._other_or_scalar),
    "copy_": Op("inplace", 2, lambda lib, a, b: a.copy_(b), o._none),
    "clamp_": Op("inplace", 1, _inplace_unary("clamp_", -0.5, 0.5), o._none),
    "relu_": Op("inplace", 1, _inplace_unary("relu_"), o._none),
    "exp_": Op("inplace", 1, _inplace_unary("exp_"), o._none),
    "sigmoid_": Op("inplace", 1, _inplace_unary("sigmoid_"), o._none),
    "zero_": Op("inplace", 1, _inplace_unary("zero_"), o._none),
    "setitem_slice": Op("inplace", 2, _setitem_slice, lambda rng, a, b: o._slice_params(rng, a)),
    "setitem_list": Op("inplace", 2, _setitem_list, lambda rng, a, b: o._list_index_params(rng, a)),
    "masked_fill_": Op("inplace", 1, lambda lib, x: x.masked_fill_(x > 0, 0.5), o._none),
    # nn layers and misc
    "linear": Op("nn", 2, _linear, _linear_params),
    "layer_norm": Op("nn", 2, _layer_norm, lambda rng, a, b: _layer_norm_params(rng, a)),
    "mse": Op("nn", 2, lambda lib, a, b: lib.nn.functional.mse_loss(a, b.expand_as(a)),
              lambda rng, a, b: {} if o._is_float(a) and o._is_float(b) and a.dtype == b.dtype
              and len(b.shape) <= len(a.shape) else None),
    "clone": Op("misc", 1, lambda lib, x: x.clone(), o._none),
    "contiguous": Op("misc", 1, lambda lib, x: x.contiguous(), o._none),
    "double": Op("misc", 1, lambda lib, x: x.double(), o._none),
    "float": Op("misc", 1, lambda lib, x: x.float(), o._none),
    "cat": Op("misc", 2, lambda lib, a, b, dim: lib.cat([a, b], dim), _cat_params),
    "stack": Op("misc", 2, lambda lib, a, b: lib.stack([a, a * 2]), o._none),
    "matmul": Op("misc", 2, lambda lib, a, b: a @ b, lambda rng, a, b: {}
                 if a.shape and b.shape and o._is_float(a) and a.dtype == b.dtype
                 and (a.shape[-1] == b.shape[0] or rng.random() < 0.05) else None),
}

OPS.update(OPS_NN)  # nn layers, activations, more views/indexing, dtype mixes
OPS.update(OPS_MORE)  # selection, scans, contractions, out=/dtype=, autograd state, modules
OPS.update(OPS_EXTRA)  # primitives the first three tables never reached (coverage)
OPS.update(KNOWN_DIFFERENT)  # drawn only when HOOKGRAD_FUZZ_OPS names them in full
