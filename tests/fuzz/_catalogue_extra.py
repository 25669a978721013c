"""The fuzzer's fourth op table: primitives of the op table the first three never reached.

Found by replaying fuzzed programs with every primitive's kernel counting its calls
(docs/fuzzing.md, "Coverage"): inverse trigonometric and hyperbolic functions, special
functions, rounding, the remaining comparisons and logical ops, ``fmax``/``fmin``/``fmod``/
``minimum``, reductions (``amin``, ``argmax``/``argmin``, ``all``/``any``, ``max``/``min`` with
and without a dim, ``count_nonzero``, ``nansum``, ``std``/``var`` and their ``_mean`` forms,
``norm``, ``nanmedian``), in-place view ops (``t_``, ``transpose_``, ``squeeze_``,
``unsqueeze_``), ``take``, ``unsafe_split``, shrink and threshold activations, ``celu_``,
``pixel_shuffle``/``channel_shuffle``, reflection and replication padding, ``interpolate``,
``embedding``, ``scatter`` with a value and ``scatter_reduce``, ``fill_``.

Same contract as `_catalogue` (see `_ops`).
"""

from __future__ import annotations

from tests.fuzz import _ops as o
from tests.fuzz._ops import Op

_UNARY = ("asin", "acos", "atan", "sinh", "cosh", "tan", "asinh", "acosh", "atanh", "erf",
          "erfc", "erfinv", "expm1", "log1p", "log2", "log10", "exp2", "sqrt", "sgn", "logit",
          "lgamma", "digamma", "i0", "logical_not", "isfinite", "isinf")
_ROUND = ("floor", "ceil", "trunc", "round", "frac")
_INPLACE = ("asinh_", "atanh_", "acosh_", "sqrt_", "floor_", "expm1_", "erf_", "trunc_")
_BINARY = ("fmax", "fmin", "fmod", "minimum", "maximum", "bitwise_xor", "logical_or",
           "logical_xor", "ge", "le", "ne", "clamp_min", "clamp_max")
_SCALAR_BINARY = ("fmod", "remainder", "pow", "rpow")


def _pick_from(names):
    def params(rng, *metas):
        return {"fn": str(names[int(rng.integers(0, len(names)))])}
    return params


def _unary(lib, x, fn):
    return getattr(lib, fn)(x)


def _round_params(rng, m):
    p = _pick_from(_ROUND)(rng, m)
    if p["fn"] == "round" and rng.random() < 0.4:
        p["decimals"] = int(rng.integers(-1, 3))
    return p


def _round(lib, x, fn, decimals=None):
    return getattr(lib, fn)(x) if decimals is None else lib.round(x, decimals=decimals)


def _inplace(lib, x, fn):
    return getattr(x, fn)()


def _binary(lib, a, b, fn):
    return getattr(lib, fn)(a, b)


def _scalar_binary_params(rng, m):
    return {"fn": str(_SCALAR_BINARY[int(rng.integers(0, len(_SCALAR_BINARY)))]),
            "value": [2, -1.5, 0.5, 3][int(rng.integers(0, 4))]}


def _scalar_binary(lib, x, fn, value):
    if fn == "rpow":
        return value ** x
    return getattr(lib, fn)(x, value)


# ---------------------------------------------------------------------------- reductions
_REDUCE_DIM = ("amin", "argmax", "argmin", "all", "any", "count_nonzero", "nansum", "std",
               "var", "std_mean", "var_mean", "norm", "nanmedian", "max", "min")


def _reduce_params(rng, m):
    fn = str(_REDUCE_DIM[int(rng.integers(0, len(_REDUCE_DIM)))])
    p = {"fn": fn, "dim": o._dim(rng, m) if m.shape and rng.random() < 0.7 else None,
         "keepdim": bool(rng.random() < 0.5), "pick": int(rng.integers(0, 2))}
    if fn in ("std", "var", "std_mean", "var_mean"):
        p["correction"] = int(rng.integers(0, 2))
    if fn == "norm":
        p["p"] = [2, 1, float("inf"), 0.5][int(rng.integers(0, 4))]
    return p


def _reduce(lib, x, fn, dim, keepdim, pick, correction=None, p=None):
    f = getattr(lib, fn)
    if fn == "count_nonzero":
        return f(x) if dim is None else f(x, dim=dim)
    if fn in ("std", "var", "std_mean", "var_mean"):
        out = f(x, dim=dim, correction=correction, keepdim=keepdim)
    elif fn == "norm":
        out = f(x, p=p) if dim is None else f(x, p=p, dim=dim, keepdim=keepdim)
    elif dim is None:
        out = f(x)
    else:
        out = f(x, dim, keepdim=keepdim)
    return out[pick] if isinstance(out, tuple) else out


# ---------------------------------------------------------------------------- views, in place
def _view_inplace_params(rng, m):
    kind = int(rng.integers(0, 4))
    if kind == 0 and len(m.shape) > 2:
        return None  # t_ of a tensor of more than two dims: PyTorch's error, drawn rarely
    return {"kind": kind, "dim": o._dim(rng, m) if m.shape else 0,
            "dim2": o._dim(rng, m, 0) if m.shape else 0}


def _view_inplace(lib, x, kind, dim, dim2):
    if kind == 0:
        return x.t_()
    if kind == 1:
        return x.transpose_(dim, dim2)
    if kind == 2:
        return x.squeeze_() if dim is None else x.squeeze_(dim)
    return x.unsqueeze_(dim)


def _take_params(rng, m):
    n = 1
    for s in m.shape:
        n *= s
    if n == 0:
        return None
    k = int(rng.integers(1, 5))
    return {"index": [int(i) for i in rng.integers(-n, n, size=k)]}


def _unsafe_split_params(rng, m):
    if not m.shape:
        return None
    d = o._dim(rng, m, 0)
    return {"size": int(rng.integers(1, 4)), "dim": d, "pick": 0}


# ---------------------------------------------------------------------------- nn
_SHRINK = ("hardshrink", "softshrink", "threshold", "celu_", "hardtanh_", "rrelu_eval")


def _shrink(lib, x, fn):
    F = lib.nn.functional
    if fn == "threshold":
        return F.threshold(x, 0.1, -2.0)
    if fn == "celu_":
        return F.celu(x, 1.5, inplace=True)
    if fn == "hardtanh_":
        return F.hardtanh(x, -0.5, 0.5, inplace=True)
    if fn == "rrelu_eval":
        return F.rrelu(x, training=False)
    return getattr(F, fn)(x, 0.3)


def _shrink_params(rng, m):
    return _pick_from(_SHRINK)(rng, m) if o._is_float(m) else None


def _shuffle_params(rng, m):
    if len(m.shape) not in (3, 4) or m.shape[1] == 0:
        return None
    c = m.shape[1]
    kind = int(rng.integers(0, 3))
    if kind == 0:  # pixel_shuffle needs 4 dims and channels divisible by r*r
        if len(m.shape) != 4 or c % 4:
            return {"kind": 2, "groups": 1}
        return {"kind": 0, "groups": 2}
    if kind == 1:  # pixel_unshuffle: the last two dims divisible by r
        if len(m.shape) != 4 or m.shape[2] % 2 or m.shape[3] % 2:
            return {"kind": 2, "groups": 1}
        return {"kind": 1, "groups": 2}
    divs = [g for g in range(1, c + 1) if c % g == 0]
    return {"kind": 2, "groups": int(rng.choice(divs))}


def _shuffle(lib, x, kind, groups):
    F = lib.nn.functional
    if kind == 0:
        return F.pixel_shuffle(x, groups)
    if kind == 1:
        return F.pixel_unshuffle(x, groups)
    return F.channel_shuffle(x, groups)


def _pad_params(rng, m):
    if not o._is_float(m) or len(m.shape) not in (2, 3, 4) or 0 in m.shape:
        return None
    mode = ["reflect", "replicate"][int(rng.integers(0, 2))]
    width = 1 if len(m.shape) < 4 or rng.random() < 0.5 else 2
    pad = [int(rng.integers(0, 3)) for _ in range(2 * width)]
    return {"mode": mode, "pad": pad}


def _pad(lib, x, mode, pad):
    return lib.nn.functional.pad(x, pad, mode=mode)


def _interp_params(rng, m):
    if not o._is_float(m) or len(m.shape) not in (3, 4) or 0 in m.shape:
        return None
    modes = ["nearest", "nearest-exact", "linear"] if len(m.shape) == 3 else [
        "nearest", "nearest-exact", "bilinear", "bicubic"]
    mode = str(modes[int(rng.integers(0, len(modes)))])
    p = {"mode": mode, "scale": [2.0, 0.5, 1.5][int(rng.integers(0, 3))]}
    if mode in ("linear", "bilinear", "bicubic"):
        p["align_corners"] = bool(rng.random() < 0.5)
    return p


def _interp(lib, x, mode, scale, align_corners=None):
    return lib.nn.functional.interpolate(x, scale_factor=scale, mode=mode,
                                         align_corners=align_corners)


def _embedding_other(rng, m):
    return (int(rng.integers(2, 6)), int(rng.integers(1, 4)))  # the weight: (num, dim)


def _embedding_params(rng, a, w):
    if not o._is_float(w):
        return None
    n = w.shape[0]
    size = [int(s) for s in rng.integers(1, 4, size=int(rng.integers(1, 3)))]
    count = 1
    for s in size:
        count *= s
    return {"index": [int(i) for i in rng.integers(0, n, size=count)], "size": size,
            "padding_idx": None if rng.random() < 0.7 else int(rng.integers(0, n))}


def _embedding(lib, a, w, index, size, padding_idx):
    # `a` only decides when the step is drawn: the indices are the step's own
    idx = lib.tensor(index).reshape(size)
    return lib.nn.functional.embedding(idx, w, padding_idx=padding_idx)


# ---------------------------------------------------------------------------- scatters, fills
_REDUCE_KINDS = ("sum", "prod", "mean", "amax", "amin")


def _scatter_params(rng, m):
    if not m.shape or 0 in m.shape:
        return None
    d = int(rng.integers(0, len(m.shape)))
    shape = [int(rng.integers(1, s + 1)) for s in m.shape]
    count = 1
    for s in shape:
        count *= s
    return {"dim": d, "shape": shape,
            "index": [int(i) for i in rng.integers(0, m.shape[d], size=count)],
            "reduce": str(_REDUCE_KINDS[int(rng.integers(0, len(_REDUCE_KINDS)))]),
            "kind": int(rng.integers(0, 3)), "include_self": bool(rng.random() < 0.6)}


def _scatter(lib, x, dim, shape, index, reduce, kind, include_self):
    idx = lib.tensor(index).reshape(shape)
    if kind == 0:
        return x.scatter(dim, idx, 0.5)
    if kind == 1:
        src = (lib.arange(idx.numel()).reshape(shape) % 3 - 1).to(x.dtype)
        return x.scatter_reduce(dim, idx, src, reduce, include_self=include_self)
    rows = lib.tensor(index[:3])  # index_reduce: up to three rows of `dim`, repeats included
    src_shape = [rows.numel() if i == dim else s for i, s in enumerate(x.shape)]
    count = 1
    for s in src_shape:
        count *= s
    src = (lib.arange(count).reshape(src_shape) % 3 - 1).to(x.dtype)
    return x.index_reduce(dim, rows, src, "prod" if reduce == "sum" else reduce,
                          include_self=include_self)


def _fill_params(rng, m):
    return {"tensor": bool(rng.random() < 0.5), "value": [0.5, -2, True][int(rng.integers(0, 3))]}


def _fill(lib, x, tensor, value):
    return x.fill_(lib.tensor(value) if tensor else value)


OPS_EXTRA: dict[str, Op] = {
    "unary_math": Op("pointwise", 1, _unary, _pick_from(_UNARY)),
    "rounding": Op("pointwise", 1, _round, _round_params),
    "unary_inplace": Op("inplace", 1, _inplace, _pick_from(_INPLACE)),
    "binary_more": Op("binary", 2, _binary, _pick_from(_BINARY)),
    "scalar_binary": Op("binary", 1, _scalar_binary, _scalar_binary_params),
    "reduce_more": Op("reduction", 1, _reduce, _reduce_params),
    "view_inplace": Op("inplace", 1, _view_inplace, _view_inplace_params),
    "take": Op("index", 1, lambda lib, x, index: x.take(lib.tensor(index)), _take_params),
    "unsafe_split": Op("view", 1, lambda lib, x, size, dim, pick: x.unsafe_split(
        size, dim)[pick], _unsafe_split_params),
    "shrink": Op("nn", 1, _shrink, _shrink_params),
    "shuffle": Op("nn", 1, _shuffle, _shuffle_params),
    "pad_mode": Op("nn", 1, _pad, _pad_params),
    "interpolate": Op("nn", 1, _interp, _interp_params),
    "embedding": Op("nn", 2, _embedding, _embedding_params, _embedding_other),
    "scatter_more": Op("index", 1, _scatter, _scatter_params),
    "fill_": Op("inplace", 1, _fill, _fill_params),
}
