"""The fuzzer's third op table: ops the first two never drew.

Sorting and selection (``sort``, ``topk``, ``kthvalue``, ``median``, ``mode``, ``unique``,
``nonzero``), scans (``cummax``, ``cummin``, ``logcumsumexp``), ternary pointwise ops with tensor
operands (``clamp`` with tensor bounds, ``lerp``, ``addcmul``, ``addcdiv``), contractions
(``einsum``, ``tensordot``, ``bmm``, ``baddbmm``), type promotion with 0-d tensors and Python
scalars, ``out=`` variants, ``dtype=`` keywords, layout ops (``repeat``, ``tile``, ``roll``,
``rot90``, ``tril``/``triu``), scatters (``masked_scatter``, ``index_copy``, ``index_fill``),
``split_with_sizes``, ``detach_``/``.data`` writes, ``requires_grad_`` toggles and small
``nn.Module``s with forward pre/post hooks (also ``with_kwargs``) and full backward hooks that
change what flows through them.

Same contract as `_catalogue` (see `_ops`).
"""

from __future__ import annotations

from tests.fuzz import _ops as o
from tests.fuzz._ops import Op


def _dim_params(rng, m):
    return {"dim": o._dim(rng, m)} if m.shape else None


def _nonempty_dim(rng, m):
    if not m.shape or 0 in m.shape:
        return None
    return {"dim": o._dim(rng, m)}


def _pick(rng):
    return int(rng.integers(0, 2))  # 0: values, 1: indices


# ---------------------------------------------------------------------------- selection
def _sort_params(rng, m):
    p = _dim_params(rng, m) or {"dim": 0}
    return {**p, "descending": bool(rng.random() < 0.5), "stable": bool(rng.random() < 0.5),
            "pick": _pick(rng)}


def _sort(lib, x, dim, descending, stable, pick):
    return x.sort(dim=dim, descending=descending, stable=stable)[pick]


def _topk_params(rng, m):
    if not m.shape:
        return {"k": int(rng.integers(0, 2)), "dim": 0, "largest": True, "pick": _pick(rng)}
    d = o._dim(rng, m)
    n = m.shape[d] if d is not None and -len(m.shape) <= d < len(m.shape) else 1
    return {"k": int(rng.integers(0, n + 1)) + (rng.random() < 0.03), "dim": d,
            "largest": bool(rng.random() < 0.6), "pick": _pick(rng)}


def _topk(lib, x, k, dim, largest, pick):
    return x.topk(k, dim=dim, largest=largest)[pick]


def _kth_params(rng, m):
    # every dtype: among tied values hookgrad returns the index ATen's quickselect does
    p = _nonempty_dim(rng, m)
    if p is None:
        return None
    d = p["dim"]
    n = m.shape[d] if -len(m.shape) <= d < len(m.shape) else 1
    return {**p, "k": int(rng.integers(1, n + 1)), "keepdim": bool(rng.random() < 0.5),
            "pick": _pick(rng)}


def _reduce_pick(method):
    def call(lib, x, dim, keepdim, pick):
        return getattr(x, method)(dim, keepdim=keepdim)[pick]
    return call


def _reduce_pick_params(rng, m):
    p = _nonempty_dim(rng, m)
    return None if p is None else {**p, "keepdim": bool(rng.random() < 0.5), "pick": _pick(rng)}


def _unique_params(rng, m):
    return {"sorted": True, "inverse": bool(rng.random() < 0.5), "dim": None
            if rng.random() < 0.7 or not m.shape else int(rng.integers(0, len(m.shape)))}


def _unique(lib, x, sorted, inverse, dim):
    out = lib.unique(x, sorted=sorted, return_inverse=inverse, dim=dim)
    return out[1] if inverse else out


# ---------------------------------------------------------------------------- ternary
def _clamp_tensor_params(rng, a, b):
    return {"which": int(rng.integers(0, 3))}


def _clamp_tensor(lib, a, b, which):
    if which == 0:
        return a.clamp(min=b)
    if which == 1:
        return a.clamp(max=b)
    return lib.clamp(a, b, b + 1)


def _lerp_params(rng, a, b):
    if not (o._is_float(a) and o._is_float(b)):
        return None
    return {"weight": [0.3, -0.5, None][int(rng.integers(0, 3))]}


def _lerp(lib, a, b, weight):
    return a.lerp(b, b.sigmoid() if weight is None else weight)


def _addc_params(rng, a, b):
    return {"value": [1, 0.5, -2][int(rng.integers(0, 3))]}


# ---------------------------------------------------------------------------- contractions
def _einsum_other(rng, a):
    if not o._is_float(a) or not a.shape:
        return None
    return (a.shape[-1], int(rng.integers(1, 4)))


def _einsum_params(rng, a, b):
    if len(b.shape) != 2 or not a.shape or a.shape[-1] != b.shape[0] or a.dtype != b.dtype:
        return None
    n = len(a.shape)
    lhs = "abc"[:n - 1] + "i"
    return {"eq": [f"{lhs},ij->{lhs[:-1]}j", f"...i,ij->...j", f"{lhs},ij->j",
                   f"{lhs},ij->{lhs}"][int(rng.integers(0, 4))]}


def _bmm_other(rng, a):
    if not o._is_float(a) or len(a.shape) != 3:
        return None
    return (a.shape[0], a.shape[2], int(rng.integers(1, 4)))


def _bmm_params(rng, a, b):
    if len(b.shape) != 3 or a.dtype != b.dtype or a.shape[2] != b.shape[1]:
        return None
    return {"beta": [None, 0.5, 0][int(rng.integers(0, 3))]}


def _bmm(lib, a, b, beta):
    if beta is None:
        return lib.bmm(a, b)
    c = lib.ones(a.shape[0], a.shape[1], b.shape[2], dtype=a.dtype)
    return lib.baddbmm(c, a, b, beta=beta, alpha=1.5)


def _tensordot_params(rng, a, b):
    if not a.shape or a.dtype != b.dtype or not o._is_float(a):
        return None
    return {}


# ---------------------------------------------------------------------------- promotion
_ZERO_D = ((2, "int64"), (True, "bool"), (1.5, "float64"), (-0.5, "float32"), (3, "int32"))


def _zero_d_params(rng, m):
    value, dtype = _ZERO_D[int(rng.integers(0, len(_ZERO_D)))]
    return {"value": value, "dtype": dtype, "op": ["add", "mul", "sub", "div", "max"][
        int(rng.integers(0, 5))], "swap": bool(rng.random() < 0.5)}


def _zero_d(lib, x, value, dtype, op, swap):
    s = lib.tensor(value, dtype=getattr(lib, dtype))
    a, b = (s, x) if swap else (x, s)
    if op == "max":
        return lib.maximum(a, b)
    return getattr(lib, op)(a, b)


def _scalar_mix_params(rng, m):
    return {"value": [2, True, -1.5, 0, 3][int(rng.integers(0, 5))],
            "op": ["add", "mul", "sub", "true_divide", "pow", "rsub"][int(rng.integers(0, 6))]}


def _scalar_mix(lib, x, value, op):
    return getattr(lib, op)(x, value)


# ---------------------------------------------------------------------------- out= / dtype=
def _out_params(rng, a, b):
    kind = int(rng.integers(0, 3))
    return {"kind": kind, "dtype": None if rng.random() < 0.8 else "float64"}


def _out_variant(lib, a, b, kind, dtype):
    dt = a.dtype if dtype is None else getattr(lib, dtype)
    out = lib.empty(0, dtype=dt)
    if kind == 0:
        lib.mul(a, b, out=out)
    elif kind == 1:
        lib.add(a, b, alpha=2, out=out)
    else:
        lib.sum(a, 0 if a.dim() else None, out=out) if a.dim() else lib.sum(a, out=out)
    return out


def _dtype_kw_params(rng, m):
    return {"fn": ["sum", "mean", "cumsum", "prod", "softmax", "log_softmax", "cumprod"][
        int(rng.integers(0, 7))], "dtype": ["float64", "float32", "int64"][int(rng.integers(0, 3))]}


def _dtype_kw(lib, x, fn, dtype):
    dt = getattr(lib, dtype)
    if fn in ("sum", "mean", "prod"):
        return getattr(lib, fn)(x, dtype=dt)
    return getattr(lib, fn)(x, 0 if x.dim() else 0, dtype=dt)


# ---------------------------------------------------------------------------- layout ops
def _repeat_params(rng, m):
    reps = [int(rng.integers(1, 3)) for _ in range(len(m.shape) + int(rng.integers(0, 2)))]
    return {"reps": reps or [2], "tile": bool(rng.random() < 0.4)}


def _repeat(lib, x, reps, tile):
    return x.tile(reps) if tile else x.repeat(*reps)


def _roll_params(rng, m):
    if not m.shape:
        return {"shifts": 1, "dims": None}
    return {"shifts": int(rng.integers(-3, 4)), "dims": None if rng.random() < 0.3
            else int(rng.integers(0, len(m.shape)))}


def _rot90_params(rng, m):
    return {"k": int(rng.integers(-1, 4))} if len(m.shape) >= 2 else None


def _tri_params(rng, m):
    return {"diagonal": int(rng.integers(-1, 2)), "upper": bool(rng.random() < 0.5)} \
        if len(m.shape) >= 2 else None


def _tri(lib, x, diagonal, upper):
    return x.triu(diagonal) if upper else x.tril(diagonal)


def _tri_inplace(lib, x, diagonal, upper):
    return x.triu_(diagonal) if upper else x.tril_(diagonal)


# ---------------------------------------------------------------------------- scatters
def _masked_scatter(lib, a, b):
    mask = a > 0
    src = lib.arange(a.numel(), dtype=a.dtype).reshape(a.shape) * 0.5 + b.sum().to(a.dtype)
    return a.masked_scatter(mask, src)


def _index_copy_params(rng, a, b):
    if not a.shape or 0 in a.shape:
        return None
    d = int(rng.integers(0, len(a.shape)))
    idx = rng.permutation(a.shape[d])[:int(rng.integers(1, a.shape[d] + 1))]
    return {"dim": d, "index": [int(i) for i in idx], "fill": bool(rng.random() < 0.5),
            "inplace": bool(rng.random() < 0.4)}


def _index_copy(lib, a, b, dim, index, fill, inplace):
    idx = lib.tensor(index)
    if fill:
        f = a.index_fill_ if inplace else a.index_fill
        return f(dim, idx, b.sum().to(a.dtype))
    src = a.index_select(dim, idx).detach() * 0 + b.sum().to(a.dtype)
    return (a.index_copy_ if inplace else a.index_copy)(dim, idx, src)


def _split_sizes_params(rng, m):
    if not m.shape:
        return None
    d = int(rng.integers(0, len(m.shape)))
    n = m.shape[d]
    sizes, left = [], n
    while left > 0:
        s = int(rng.integers(1, left + 1))
        sizes.append(s)
        left -= s
    if rng.random() < 0.05:
        sizes.append(1)  # sizes not summing to the dim: PyTorch's error
    return {"sizes": sizes or [0], "dim": d, "pick": int(rng.integers(0, max(len(sizes), 1)))}


# ---------------------------------------------------------------------------- autograd state
def _detach_(lib, x):
    return x.detach_()


def _data_write(lib, x):
    x.data.mul_(2)  # bypasses autograd: no version bump on x itself as PyTorch's .data
    return x


def _data_assign(lib, x):
    x.data = x.data * 0 + 1.25
    return x


def _requires_grad_params(rng, m):
    return {"flag": bool(rng.random() < 0.6)}


def _requires_grad_(lib, x, flag):
    return x.requires_grad_(flag)


# ---------------------------------------------------------------------------- modules
def _module_params(rng, m):
    if not o._is_float(m) or not m.shape or m.shape[-1] == 0:
        return None
    return {"out": int(rng.integers(1, 4)), "hooks": [bool(rng.random() < 0.5) for _ in range(5)]}


def _module(lib, x, out, hooks):
    """A Linear (deterministic weights) with hooks that change what flows through it."""
    n = x.shape[-1]
    mod = lib.nn.Linear(n, out, dtype=x.dtype)
    with lib.no_grad():
        mod.weight.copy_(lib.linspace(-1, 1, n * out, dtype=x.dtype).reshape(out, n))
        mod.bias.fill_(0.25)
    pre, post, back, kw, back_pre = hooks
    if pre:
        mod.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    if kw:
        mod.register_forward_pre_hook(lambda m, args, kwargs: ((args[0] + 1,), kwargs),
                                      with_kwargs=True)
    if post:
        mod.register_forward_hook(lambda m, args, kwargs, res: res - args[0].sum(),
                                  with_kwargs=True)
    if back:
        mod.register_full_backward_hook(
            lambda m, gin, gout: tuple(None if g is None else g * 3 for g in gin))
    if back_pre:
        mod.register_full_backward_pre_hook(lambda m, gout: (gout[0] * 0.5,))
    return mod(x)


OPS_MORE: dict[str, Op] = {
    # sorting and selection (values or indices)
    "sort": Op("reduction", 1, _sort, _sort_params),
    "topk": Op("reduction", 1, _topk, _topk_params),
    "kthvalue": Op("reduction", 1, lambda lib, x, dim, k, keepdim, pick: x.kthvalue(
        k, dim, keepdim)[pick], _kth_params),
    "median_dim": Op("reduction", 1, _reduce_pick("median"), _reduce_pick_params),
    "median": Op("reduction", 1, lambda lib, x: x.median(), o._none),
    "mode": Op("reduction", 1, _reduce_pick("mode"), _reduce_pick_params),
    "unique": Op("misc", 1, _unique, _unique_params),
    "nonzero": Op("misc", 1, lambda lib, x, tup: x.nonzero(as_tuple=tup)[0] if tup
                  else x.nonzero(), lambda rng, m: {"tup": bool(rng.random() < 0.3)}),
    # scans
    "cummax": Op("reduction", 1, lambda lib, x, dim, pick: x.cummax(dim)[pick],
                 lambda rng, m: None if not m.shape else {"dim": o._dim(rng, m),
                                                          "pick": _pick(rng)}),
    "cummin": Op("reduction", 1, lambda lib, x, dim, pick: x.cummin(dim)[pick],
                 lambda rng, m: None if not m.shape else {"dim": o._dim(rng, m),
                                                          "pick": _pick(rng)}),
    "logcumsumexp": Op("reduction", 1, lambda lib, x, dim: x.logcumsumexp(dim),
                       lambda rng, m: _dim_params(rng, m) if o._is_float(m) else None),
    # ternary pointwise ops with tensor operands
    "clamp_tensor": Op("binary", 2, _clamp_tensor, _clamp_tensor_params),
    "lerp": Op("binary", 2, _lerp, _lerp_params),
    "addcmul": Op("binary", 2, lambda lib, a, b, value: lib.addcmul(a, b, b, value=value),
                  _addc_params),
    "addcdiv": Op("binary", 2, lambda lib, a, b, value: lib.addcdiv(a, b, b.abs() + 1,
                                                                    value=value),
                  lambda rng, a, b: _addc_params(rng, a, b) if o._is_float(a) else None),
    "addcmul_": Op("inplace", 2, lambda lib, a, b, value: a.addcmul_(b, b, value=value),
                   _addc_params),
    # contractions (einsum and tensordot: KNOWN_DIFFERENT below)
    "bmm": Op("misc", 2, _bmm, _bmm_params, _bmm_other),
    # type promotion with 0-d tensors and Python scalars
    "zero_d": Op("binary", 1, _zero_d, _zero_d_params),
    "scalar_mix": Op("binary", 1, _scalar_mix, _scalar_mix_params),
    # out= and dtype= keywords
    "out_variant": Op("misc", 2, _out_variant, _out_params),
    "dtype_kw": Op("reduction", 1, _dtype_kw, _dtype_kw_params),
    # layout ops
    "repeat": Op("misc", 1, _repeat, _repeat_params),
    "roll": Op("misc", 1, lambda lib, x, shifts, dims: x.roll(shifts, dims), _roll_params),
    "rot90": Op("misc", 1, lambda lib, x, k: x.rot90(k), _rot90_params),
    "tri": Op("misc", 1, _tri, _tri_params),
    "tri_": Op("inplace", 1, _tri_inplace, _tri_params),
    "split_with_sizes": Op("view", 1, lambda lib, x, sizes, dim, pick: x.split_with_sizes(
        sizes, dim)[pick], _split_sizes_params),
    # scatters
    "masked_scatter": Op("index", 2, _masked_scatter, o._none),
    "index_copy": Op("index", 2, _index_copy, _index_copy_params),
    # autograd state: detach_, .data writes, requires_grad_ toggles
    "detach_": Op("inplace", 1, _detach_, o._none),
    "data_write": Op("inplace", 1, _data_write, o._none),
    "data_assign": Op("inplace", 1, _data_assign, lambda rng, m: {} if o._is_float(m) else None),
    "requires_grad_": Op("misc", 1, _requires_grad_, _requires_grad_params),
    # small modules with hooks
    "module_hooks": Op("nn", 1, _module, _module_params),
}


# Drawn only when named (HOOKGRAD_FUZZ_OPS='einsum|tensordot'): PyTorch's einsum and tensordot
# reshape, permute and contract in another order than hookgrad's (other nodes, other saved
# shapes: docs/fuzzing.md, known differences)
KNOWN_DIFFERENT: dict[str, Op] = {
    "einsum": Op("misc", 2, lambda lib, a, b, eq: lib.einsum(eq, a, b), _einsum_params,
                 _einsum_other),
    "tensordot": Op("misc", 2, lambda lib, a, b: lib.tensordot(a, b, dims=1),
                    _tensordot_params, _einsum_other),
}
