"""The fuzzer's second op table: nn layers and functional ops, activations with in-place
variants, more views, negative/boolean indexing and integer/bool dtype mixes.

Same contract as `_catalogue` (see `_ops`). Ops whose second operand needs a shape of its own
(a convolution's weight, a loss's target) name it with ``other(rng, meta) -> shape``; the
generator then makes a fresh leaf of that shape, mostly of the first input's dtype.
"""

from __future__ import annotations

from tests.fuzz import _ops as o
from tests.fuzz._ops import Op

_F = lambda lib: lib.nn.functional  # noqa: E731


def _rank(m, *ranks):
    return o._is_float(m) and len(m.shape) in ranks


def _small(rng, n):
    """A size in 1..n (n >= 1), rarely one too big (PyTorch's error is compared)."""
    return int(rng.integers(1, max(n, 1) + 1)) + (rng.random() < 0.03)


# ---------------------------------------------------------------------------- convolutions
def _conv_other(nd):
    def other(rng, a):
        if not _rank(a, nd + 1, nd + 2) or 0 in a.shape:
            return None
        c = a.shape[-nd - 1] + (rng.random() < 0.03)
        return (int(rng.integers(1, 4)), c, *[int(rng.integers(1, min(s, 3) + 1))
                                              for s in a.shape[-nd:]])
    return other


def _conv_params(rng, a, w):
    if len(w.shape) < 3 or not o._is_float(a):
        return None
    if rng.random() < 0.15:
        return {"stride": 1, "padding": "same", "dilation": 1}
    return {"stride": int(rng.integers(1, 3)), "padding": int(rng.integers(0, 2)),
            "dilation": int(rng.integers(1, 3))}


# ---------------------------------------------------------------------------- pooling
def _pool_params(nd, avg):
    def params(rng, m):
        if not _rank(m, nd + 1, nd + 2) or 0 in m.shape:
            return None
        k = _small(rng, min(min(m.shape[-nd:]), 3))
        p = {"kernel_size": k, "stride": None if rng.random() < 0.4 else int(rng.integers(1, 3)),
             "padding": int(rng.integers(0, k // 2 + 1)), "ceil_mode": bool(rng.random() < 0.3)}
        if avg:
            p["count_include_pad"] = bool(rng.random() < 0.5)
        return p
    return params


def _adaptive_params(rng, m):
    if not _rank(m, 3, 4) or 0 in m.shape:
        return None
    return {"size": [int(rng.integers(1, s + 2)) for s in m.shape[-2:]]}


# ---------------------------------------------------------------------------- normalizations
def _channels(rng, m, lo=2):
    return {} if _rank(m, *range(lo, 5)) else None


def _batch_norm(lib, x, training, affine):
    c = x.shape[1]
    w = lib.linspace(0.5, 1.5, c, dtype=x.dtype) if affine else None
    b = lib.linspace(-0.2, 0.2, c, dtype=x.dtype) if affine else None
    if training:
        return _F(lib).batch_norm(x, None, None, w, b, training=True)
    return _F(lib).batch_norm(x, lib.zeros(c, dtype=x.dtype) + 0.1, lib.ones(c, dtype=x.dtype)
                              * 2, w, b, training=False)


def _group_norm_params(rng, m):
    if not _rank(m, 2, 3, 4) or m.shape[1] == 0:
        return None
    c = m.shape[1]
    divs = [g for g in range(1, c + 1) if c % g == 0]
    return {"groups": int(rng.choice(divs)) if rng.random() < 0.95 else c + 1}


def _rms_norm(lib, x, eps):
    n = x.shape[-1]
    return _F(lib).rms_norm(x, (n,), lib.linspace(0.5, 1.5, n, dtype=x.dtype), eps=eps)


# ---------------------------------------------------------------------------- losses
_RED = ("mean", "sum", "none")


def _red(rng):
    return _RED[int(rng.integers(0, 3))]


def _ce_params(rng, m):
    if not _rank(m, 1, 2, 3) or 0 in m.shape:
        return None
    c = m.shape[0] if len(m.shape) == 1 else m.shape[1]
    tshape = () if len(m.shape) == 1 else (m.shape[0], *m.shape[2:])
    t = rng.integers(0, c, size=tshape)
    if t.size and rng.random() < 0.3:
        t.flat[0] = -100  # the default ignore_index
    return {"target": t.tolist(), "reduction": _red(rng),
            "label_smoothing": float(rng.choice([0.0, 0.0, 0.1]))}


def _same_shape(rng, a):
    return a.shape if o._is_float(a) else None


def _pair_params(rng, a, b):
    return {"reduction": _red(rng)} if o._is_float(a) and o._is_float(b) else None


def _pair_loss(name, **kw):
    def call(lib, a, b, reduction):
        return getattr(_F(lib), name)(a, b, reduction=reduction, **kw)
    return call


def _bce(lib, a, b, reduction):
    return _F(lib).binary_cross_entropy(a.sigmoid(), b.sigmoid().detach(), reduction=reduction)


def _bce_logits(lib, a, b, reduction):
    return _F(lib).binary_cross_entropy_with_logits(a, b.sigmoid(), reduction=reduction)


def _kl_div(lib, a, b, reduction, log_target):
    d = a.dim() - 1
    t = b.log_softmax(d) if log_target else b.softmax(d)
    return _F(lib).kl_div(a.log_softmax(d), t, reduction=reduction if reduction != "mean"
                          else "batchmean", log_target=log_target)


def _kl_params(rng, a, b):
    if not o._is_float(a) or not a.shape:
        return None
    return {"reduction": _red(rng), "log_target": bool(rng.random() < 0.5)}


# ---------------------------------------------------------------------------- activations
def _act(name, **kw):
    return lambda lib, x: getattr(_F(lib), name)(x, **kw)


def _act_inplace(name, **kw):
    return lambda lib, x: getattr(_F(lib), name)(x, inplace=True, **kw)


def _slope(rng, m):
    return {"slope": float(rng.choice([0.01, 0.2, -0.1]))}


def _glu_params(rng, m):
    if not o._is_float(m) or not m.shape:
        return None
    return {"dim": o._dim(rng, m)}


# ---------------------------------------------------------------------------- views
def _narrow_params(rng, m):
    if not m.shape:
        return None
    d = int(rng.integers(0, len(m.shape)))
    start = int(rng.integers(-m.shape[d], m.shape[d] + 1)) if m.shape[d] else 0
    pos = start + m.shape[d] if start < 0 else start
    return {"dim": d, "start": start, "length": int(rng.integers(0, m.shape[d] - pos + 1))
            + (rng.random() < 0.03)}


def _movedim_params(rng, m):
    return {"src": o._dim(rng, m), "dst": o._dim(rng, m, 0)} if m.shape else None


def _unfold_params(rng, m):
    if not m.shape:
        return {"dim": 0, "size": 1, "step": 1}
    d = o._dim(rng, m)
    return {"dim": d, "size": int(rng.integers(0, 3)), "step": int(rng.integers(1, 3))}


def _chunk_params(rng, m):
    return {"chunks": int(rng.integers(1, 4)), "dim": o._dim(rng, m), "pick": 0} \
        if m.shape else None


def _view_write(lib, x, dim, index, value):
    """In-place write through a view of a view (x.transpose(...)[...].add_): aliasing, version
    counters and CopySlices regeneration on the base."""
    v = x.transpose(0, -1).select(dim, index)
    v.add_(value)
    return v


def _view_write_params(rng, m):
    if not m.shape or 0 in m.shape:
        return None
    d = int(rng.integers(0, len(m.shape)))
    n = list(m.shape)
    n[0], n[-1] = n[-1], n[0]  # the shape of x.transpose(0, -1)
    return {"dim": d, "index": int(rng.integers(-n[d], n[d])), "value": o._scalar(rng)}


# ---------------------------------------------------------------------------- indexing
def _neg_int_params(rng, m):
    if not m.shape or m.shape[0] == 0:
        return None
    return {"i": -int(rng.integers(1, m.shape[0] + 1)) - (rng.random() < 0.03)}


def _neg_slice_params(rng, m):
    if not m.shape:
        return None
    return {"start": -int(rng.integers(1, m.shape[-1] + 2)), "stop": int(rng.choice([-1, 0]))
            if rng.random() < 0.5 else None}


def _bool_dim_params(rng, m):
    if len(m.shape) < 2:
        return None
    n = m.shape[1] + (rng.random() < 0.03)
    return {"mask": (rng.random(n) > 0.5).tolist()}


def _neg_tensor_params(rng, m):
    if not m.shape or 0 in m.shape:
        return None
    n = m.shape[0]
    return {"idx": rng.integers(-n, n, size=(int(rng.integers(1, 3)), 2)).tolist()}


def _index_put_params(rng, a, b):
    if not a.shape or 0 in a.shape:
        return None
    n = a.shape[0]
    return {"idx": rng.integers(-n, n, size=int(rng.integers(1, 4))).tolist(),
            "accumulate": bool(rng.random() < 0.5)}


def _index_put(lib, a, b, idx, accumulate):
    a.index_put_((lib.tensor(idx),), b.sum().to(a.dtype), accumulate=accumulate)
    return a


def _setitem_mask(lib, a, b):
    a[a > 0] = b.sum() if b.dim() else b
    return a


def _scatter_params(rng, a, b):
    if not a.shape or 0 in a.shape:
        return None
    d = int(rng.integers(0, len(a.shape)))
    shape = [int(rng.integers(1, s + 1)) for s in a.shape]
    return {"dim": d, "index": rng.integers(0, a.shape[d], size=shape).tolist()}


def _scatter_add(lib, a, b, dim, index):
    idx = lib.tensor(index)
    return a.scatter_add(dim, idx, b.expand_as(a)[tuple(slice(0, s) for s in idx.shape)]
                         .to(a.dtype))


def _index_add_params(rng, a, b):
    if not a.shape or 0 in a.shape:
        return None
    d = int(rng.integers(0, len(a.shape)))
    return {"dim": d, "index": rng.integers(0, a.shape[d], size=int(rng.integers(1, 3))).tolist()}


def _index_add(lib, a, b, dim, index):
    idx = lib.tensor(index)
    src = a.index_select(dim, idx).detach() * 0 + b.sum()
    return a.index_add(dim, idx, src.to(a.dtype), alpha=2)


# ---------------------------------------------------------------------------- dtypes
def _pow_params(rng, a, b):
    return {"exp": [2, -1, 0.5, 3][int(rng.integers(0, 4))] if rng.random() < 0.5 else None}


def _pow(lib, a, b, exp):
    return a ** (b if exp is None else exp)


def _cast_params(rng, m):
    return {"dtype": ["bool", "int32", "int64", "float32", "float64"][int(rng.integers(0, 5))]}


# Composites whose nodes save other values than PyTorch's fused kernels (the `KNOWN` list of
# tests/ops/test_opspec_saved_hooks.py): a program using one runs without saved-tensor hooks
UNPACKED = frozenset({
    "cross_entropy", "nll_loss", "bce",
    "bce_logits", "logsigmoid",
    # PyTorch composes this of several nodes (log, sub, mul), hookgrad has one
    "kl_div"})

OPS_NN: dict[str, Op] = {
    # convolutions (weight of its own shape), pooling, with size-1 dims and padding
    "conv1d": Op("nn", 2, lambda lib, x, w, **p: _F(lib).conv1d(x, w, **p), _conv_params,
                 _conv_other(1)),
    "conv2d": Op("nn", 2, lambda lib, x, w, **p: _F(lib).conv2d(x, w, **p), _conv_params,
                 _conv_other(2)),
    "max_pool1d": Op("nn", 1, lambda lib, x, **p: _F(lib).max_pool1d(x, **p),
                     _pool_params(1, False)),
    "max_pool2d": Op("nn", 1, lambda lib, x, **p: _F(lib).max_pool2d(x, **p),
                     _pool_params(2, False)),
    "avg_pool1d": Op("nn", 1, lambda lib, x, **p: _F(lib).avg_pool1d(x, **p),
                     _pool_params(1, True)),
    "avg_pool2d": Op("nn", 1, lambda lib, x, **p: _F(lib).avg_pool2d(x, **p),
                     _pool_params(2, True)),
    "adaptive_avg_pool2d": Op("nn", 1, lambda lib, x, size: _F(lib).adaptive_avg_pool2d(
        x, size), _adaptive_params),
    "adaptive_max_pool2d": Op("nn", 1, lambda lib, x, size: _F(lib).adaptive_max_pool2d(
        x, size), _adaptive_params),
    # normalizations
    "batch_norm": Op("nn", 1, _batch_norm, lambda rng, m: None if _channels(rng, m) is None
                     else {"training": bool(rng.random() < 0.7), "affine": bool(rng.random() < 0.5)}),
    "group_norm": Op("nn", 1, lambda lib, x, groups: _F(lib).group_norm(x, groups),
                     _group_norm_params),
    "instance_norm": Op("nn", 1, lambda lib, x: _F(lib).instance_norm(x),
                        lambda rng, m: _channels(rng, m, 3)),
    "rms_norm": Op("nn", 1, _rms_norm, lambda rng, m: {"eps": float(rng.choice([1e-6, 0.1]))}
                   if o._is_float(m) and m.shape else None),
    "normalize": Op("nn", 1, lambda lib, x, dim: _F(lib).normalize(x, dim=dim),
                    _glu_params),
    # losses (target of the input's shape)
    "cross_entropy": Op("nn", 1, lambda lib, x, target, **k: _F(lib).cross_entropy(
        x, lib.tensor(target), **k), _ce_params),
    "nll_loss": Op("nn", 1, lambda lib, x, target, reduction, label_smoothing: _F(lib).nll_loss(
        x.log_softmax(0 if x.dim() == 1 else 1), lib.tensor(target), reduction=reduction),
        _ce_params),
    "l1_loss": Op("nn", 2, _pair_loss("l1_loss"), _pair_params, _same_shape),
    "smooth_l1_loss": Op("nn", 2, _pair_loss("smooth_l1_loss", beta=0.5), _pair_params,
                         _same_shape),
    "huber_loss": Op("nn", 2, _pair_loss("huber_loss", delta=0.7), _pair_params, _same_shape),
    "bce": Op("nn", 2, _bce, _pair_params, _same_shape),
    "bce_logits": Op("nn", 2, _bce_logits, _pair_params, _same_shape),
    "kl_div": Op("nn", 2, _kl_div, _kl_params, _same_shape),
    # activations and their in-place variants
    "leaky_relu": Op("nn", 1, lambda lib, x, slope: _F(lib).leaky_relu(x, slope), _slope),
    "leaky_relu_inplace": Op("inplace", 1, lambda lib, x, slope: _F(lib).leaky_relu(
        x, slope, inplace=True), _slope),
    "elu": Op("nn", 1, _act("elu", alpha=0.7), o._floaty),
    "elu_inplace": Op("inplace", 1, _act_inplace("elu", alpha=0.7), o._floaty),
    "hardtanh": Op("nn", 1, _act("hardtanh", min_val=-0.5, max_val=1.0), o._none),
    "hardtanh_inplace": Op("inplace", 1, _act_inplace("hardtanh", min_val=-0.5, max_val=1.0),
                           o._none),
    "relu6": Op("nn", 1, _act("relu6"), o._none),
    "relu_inplace": Op("inplace", 1, _act_inplace("relu"), o._none),
    "threshold_inplace": Op("inplace", 1, lambda lib, x: _F(lib).threshold(x, 0.1, -2.0,
                                                                           inplace=True), o._none),
    "selu_inplace": Op("inplace", 1, _act_inplace("selu"), o._floaty),
    "celu": Op("nn", 1, _act("celu", alpha=1.3), o._floaty),
    "silu_inplace": Op("inplace", 1, _act_inplace("silu"), o._floaty),
    "hardswish_inplace": Op("inplace", 1, _act_inplace("hardswish"), o._floaty),
    "hardsigmoid": Op("nn", 1, _act("hardsigmoid"), o._floaty),
    "mish": Op("nn", 1, _act("mish"), o._floaty),
    "softplus": Op("nn", 1, _act("softplus", beta=2.0, threshold=1.0), o._floaty),
    "logsigmoid": Op("nn", 1, _act("logsigmoid"), o._floaty),
    "softsign": Op("nn", 1, _act("softsign"), o._floaty),
    "glu": Op("nn", 1, lambda lib, x, dim: _F(lib).glu(x, dim), _glu_params),
    # views of views, and writes through them
    "narrow": Op("view", 1, lambda lib, x, dim, start, length: x.narrow(dim, start, length),
                 _narrow_params),
    "movedim": Op("view", 1, lambda lib, x, src, dst: x.movedim(src, dst), _movedim_params),
    "unfold": Op("view", 1, lambda lib, x, dim, size, step: x.unfold(dim, size, step),
                 _unfold_params),
    "chunk": Op("view", 1, lambda lib, x, chunks, dim, pick: x.chunk(chunks, dim)[pick],
                _chunk_params),
    "mT": Op("view", 1, lambda lib, x: x.mT, lambda rng, m: {} if len(m.shape) >= 2 else None),
    "view_write": Op("inplace", 1, _view_write, _view_write_params),
    # indexing with negative and boolean indices
    "index_neg_int": Op("index", 1, lambda lib, x, i: x[i], _neg_int_params),
    "index_neg_slice": Op("view", 1, lambda lib, x, start, stop: x[..., start:stop],
                          _neg_slice_params),
    "index_bool_scalar": Op("index", 1, lambda lib, x, b: x[lib.tensor(b)],
                            lambda rng, m: {"b": bool(rng.random() < 0.5)}),
    "index_bool_dim": Op("index", 1, lambda lib, x, mask: x[:, lib.tensor(mask)],
                         _bool_dim_params),
    "index_neg_tensor": Op("index", 1, lambda lib, x, idx: x[lib.tensor(idx)],
                           _neg_tensor_params),
    "index_put_": Op("inplace", 2, _index_put, _index_put_params),
    "setitem_mask": Op("inplace", 2, _setitem_mask, o._none),
    "scatter_add": Op("index", 2, _scatter_add, _scatter_params),
    "index_add": Op("index", 2, _index_add, _index_add_params),
    # dtype mixes: comparisons, logical and bitwise ops, casts, powers, integer division
    "lt": Op("binary", 2, o._binary(lambda lib, a, b: a < b), o._other_or_scalar),
    "eq": Op("binary", 2, o._binary(lambda lib, a, b: a == b), o._other_or_scalar),
    "logical_and": Op("binary", 2, lambda lib, a, b: lib.logical_and(a, b), o._none),
    "bitwise_and": Op("binary", 2, lambda lib, a, b: a & b, o._none),
    # (not on tensors that require grad: PyTorch records a node whose backward raises, and
    # where the pass stops first depends on its engine's order, docs/fuzzing.md)
    "floor_divide": Op("binary", 2, o._binary(lambda lib, a, b: a // b), lambda rng, a, b: None
                       if a.requires_grad or b.requires_grad else o._other_or_scalar(rng, a, b)),
    "remainder": Op("binary", 2, o._binary(lambda lib, a, b: a % b), o._other_or_scalar),
    "pow": Op("binary", 2, _pow, _pow_params),
    "cast": Op("misc", 1, lambda lib, x, dtype: x.to(getattr(lib, dtype)), _cast_params),
    "where_bool": Op("binary", 2, lambda lib, a, b: lib.where(a.bool(), a, b), o._none),
    "sum_dtype": Op("reduction", 1, lambda lib, x: x.sum(dtype=lib.float64), o._none),
}
