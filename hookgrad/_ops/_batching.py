"""Batching rules: how each primitive runs under ``vmap`` (the op table's batch column).

Layer 3. A rule is stored on its `Primitive` (``prim.batch``) by `batches`, once per primitive,
as VJP rules are. It is called as ``rule(prim, args, flags, params, cast, size, level)``:
`args` are the *physical* inputs, `flags[i]` says whether input i carries the batch dimension
(always dimension 0, of length `size`); the rule returns physical outputs with the batch
dimension at 0, computed with primitives through `bind` (so outer transforms see them).
Most rules are generic, derived from what the table knows: broadcasting ops align batched
inputs to a common rank; ops with dimension parameters shift them past the batch dimension.
The others (views, matmul, convolution, pooling, losses, indexing) are in ``_batching_*.py``.
A primitive without a rule runs through the per-sample loop with PyTorch's performance warning.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

from hookgrad._dispatch import bind
from hookgrad._ops.registry import PRIMITIVES, Primitive

__all__ = ["batches", "no_rule", "logical_ndim", "align", "expand_batch",
           "zero_d", "out_of_range", "guard_index",
           "shift_dim", "without_rule", "loop", "FALLBACK_WARNING"]

FALLBACK_WARNING = [True]  # torch._C._functorch._set_vmap_fallback_warning_enabled
_FALLBACK = ("There is a performance drop because we have not yet implemented the batching "
             "rule for {}. Please file us an issue on GitHub so that we can prioritize its "
             "implementation.")


def batches(names: Iterable[str], rule: Callable[..., Any]) -> None:
    """Declare `rule` as the batching rule of each primitive in `names`."""
    for name in names:
        prim = PRIMITIVES.get(name)
        if prim is not None:  # a primitive another build does not have is skipped
            object.__setattr__(prim, "batch", rule)  # the record is frozen; rules are late


def without_rule() -> list[str]:
    """Primitives that still run through the per-sample fallback (sorted)."""
    return sorted(p.name for p in PRIMITIVES.values() if p.batch is None)


def no_rule(prim: Primitive) -> str:
    """The op name PyTorch's fallback warning shows (``aten::name``)."""
    return f"aten::{prim.name}"


def _select_params(params: dict, level: int, i: int) -> dict:
    out = {}
    for k, v in params.items():
        if getattr(v, "_bt_level", None) == level:
            out[k] = v._bt_value[i]
        elif type(v) in (list, tuple):
            out[k] = type(v)(e._bt_value[i] if getattr(e, "_bt_level", None) == level else e
                             for e in v)
        else:
            out[k] = v
    return out


def loop(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
         level: int) -> Any:
    """The per-sample fallback: run the primitive once per sample and stack the results."""
    if FALLBACK_WARNING[0]:
        warnings.warn(_FALLBACK.format(no_rule(prim)), UserWarning, stacklevel=5)
    results = []
    for i in range(size):
        sample = tuple(a[i] if b else a for a, b in zip(args, flags))
        results.append(bind(prim, sample, _select_params(params, level, i), cast))
    stack = PRIMITIVES["stack"]
    if prim.num_outputs == 1:
        return bind(stack, tuple(results), {"dim": 0})
    return tuple(bind(stack, tuple(r[k] for r in results), {"dim": 0})
                 for k in range(len(results[0])))


# ------------------------------------------------------------------------------ helpers
def logical_ndim(x: Any, batched: bool) -> int:
    """The rank the vmapped function sees."""
    return x.dim() - 1 if batched else x.dim()


def align(x: Any, nd: int) -> Any:
    """A batched physical `x` reshaped to ``(B, 1, ..., 1, *logical)`` of logical rank `nd`."""
    k = x.dim() - 1
    if k >= nd:
        return x
    shape = tuple(x.shape)
    return x.reshape((shape[0],) + (1,) * (nd - k) + shape[1:])


def expand_batch(x: Any, batched: bool, size: int) -> Any:
    """`x` with a batch dimension at 0 (an unbatched input is expanded, not copied)."""
    if batched:
        return x
    return x.unsqueeze(0).expand((size,) + tuple(x.shape))


def leading_batch(prim: Primitive, args: list, flags: list, params: dict, cast: Any,
                  size: int, level: int) -> Any:
    """Rule of kernels that take any leading batch dimensions (LAPACK-style linalg): every
    input gets the vmap dimension in front (an unbatched one expanded) and the kernel runs."""
    xs = tuple(expand_batch(a, f, size) for a, f in zip(args, flags))
    return bind(prim, xs, params, cast)


def out_of_range(idx: Any, n: int) -> Any:
    """1 where a per-sample index lies outside ``[0, n)``, else 0 (idx's dtype).

    The surface checks an index tensor's values on the logical tensor, whose array is sample
    0's (NOTE [vmap and rules]); the other samples' indices are checked here, with ops (no
    value is read, so outer levels and traces see the same program)."""
    return ((idx < 0) | (idx >= n)).to(idx.dtype)


def guard_index(idx: Any, n: int) -> Any:
    """`idx` with every value outside ``[0, n)`` replaced by `n`: the kernel raises IndexError
    there instead of wrapping a negative index or reading past a sample."""
    return idx + out_of_range(idx, n) * (n - idx)


def shift_dim(d: int, nd: int) -> int:
    """Logical dimension `d` of a rank-`nd` value as a physical dimension (after the batch)."""
    n = max(nd, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return d % n + 1


# ------------------------------------------------------------------------- generic rules
def broadcasting(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
                 level: int) -> Any:
    """Elementwise ops: batched inputs aligned to the common logical rank, then broadcast."""
    if len(args) == 1:  # unary: the batched input's layout is the result's
        return bind(prim, (args[0],), params, cast)
    ranks = [a._data.ndim - 1 if f else a._data.ndim for a, f in zip(args, flags)]
    nd = max(ranks)
    new = tuple(align(a, nd) if f and r < nd else a for a, f, r in zip(args, flags, ranks))
    out = bind(prim, new, params, cast)
    if prim.num_outputs != 1:
        return out
    shape = out._data.shape
    if len(shape) != nd + 1 or shape[0] != size:  # an op shaped like an unbatched input
        return bind(prim, tuple(expand_batch(a, f, size) if i == 0 else n for i, (a, f, n)
                                in enumerate(zip(args, flags, new))), params, cast)
    return out


def _dims(value: Any, nd: int) -> Any:
    if isinstance(value, int):
        return shift_dim(value, nd)
    return type(value)(shift_dim(d, nd) for d in value)


def dim_params(*names: str, none_all: bool = True, empty_all: bool = False) -> Callable[..., Any]:
    """A rule for one-input ops whose dimension parameters `names` are logical dims.

    ``None`` (and with `empty_all` an empty list) means every logical dimension.
    """

    def rule(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
             level: int) -> Any:
        x = args[0]
        nd = x.dim() - 1
        given = [params.get(n, prim.defaults.get(n)) for n in names]
        if not nd and (not none_all or any(v is not None and not (
                empty_all and type(v) in (list, tuple) and not v) for v in given)):
            # a 0-d sample acts as a 1-element vector (dim 0 or -1)
            return zero_d(prim, args, flags, params, cast, size, names)
        new = dict(params)
        for name in names:
            v = params.get(name, prim.defaults.get(name))
            if v is None or (empty_all and type(v) in (list, tuple) and not v):
                if none_all:
                    new[name] = tuple(range(1, nd + 1)) if nd else ()
                    if not nd:
                        return _scalar_reduce(prim, x, params, cast)
                continue
            new[name] = _dims(v, nd)
        others = tuple(expand_batch(a, f, size) for a, f in zip(args[1:], flags[1:]))
        return bind(prim, (x,) + others, new, cast)

    return rule


def zero_d(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
            names: tuple) -> Any:
    """A dim-taking op on 0-d samples: run on ``(B, 1)`` at dimension 1, results back to 0-d."""
    x = args[0].unsqueeze(1)
    new = dict(params)
    for name in names:
        v = params.get(name, prim.defaults.get(name))
        if v is not None:
            shift_dim(v if isinstance(v, int) else (v[0] if len(v) else 0), 0)  # range check
            new[name] = 1 if isinstance(v, int) else type(v)(1 for _ in v)
    others = tuple(expand_batch(a, f, size) for a, f in zip(args[1:], flags[1:]))
    if params.get("keepdim", prim.defaults.get("keepdim", True)):  # index-like inputs keep dim
        others = tuple(o.unsqueeze(1) if hasattr(o, "dim") and o.dim() == 1 else o
                       for o in others)
    y = bind(prim, (x,) + others, new, cast)
    if isinstance(y, tuple):
        return tuple(o.reshape((size,)) if o.dim() > 1 else o for o in y)
    return y.reshape((size,)) if y.dim() > 1 else y


def _scalar_reduce(prim: Primitive, x: Any, params: dict, cast: Any) -> Any:
    # reducing a 0-d logical value over "all dims": reduce a trailing unit dim instead
    new = dict(params)
    for k in ("dim",):
        if k in prim.params:
            new[k] = (1,)
    y = bind(prim, (x.unsqueeze(1),), new, cast)
    if isinstance(y, tuple):
        return tuple(o.reshape((o.shape[0],)) if o.dim() > 1 else o for o in y)
    return y.reshape((y.shape[0],)) if y.dim() > 1 else y


def full_reduction(target: str, **extra: Any) -> Callable[..., Any]:
    """``sum(x)`` as ``sum_dim(x, all logical dims)`` (and so on for mean, amax...)."""

    def rule(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
             level: int) -> Any:
        x = args[0]
        nd = x.dim() - 1
        if not nd:
            return x.clone() if target not in ("sum_dim", "mean_dim") else bind(
                PRIMITIVES[target], (x.unsqueeze(1),), {**params, "dim": (1,),
                                                       "keepdim": False, **extra}, cast)
        new = {**params, "dim": tuple(range(1, nd + 1)), "keepdim": False, **extra}
        return bind(PRIMITIVES[target], (x,), new, cast)

    return rule


def flattened(target: str, **extra: Any) -> Callable[..., Any]:
    """``prod(x)`` and kin: flatten the logical dims and reduce dimension 1."""

    def rule(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
             level: int) -> Any:
        x = args[0].reshape((size, -1))
        return bind(PRIMITIVES[target], (x,), {**params, "dim": 1, "keepdim": False, **extra},
                    cast)

    return rule


def _argextreme(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
                level: int) -> Any:
    x = args[0]
    if params.get("dim") is None:
        out = bind(prim, (x.reshape((size, -1)),), {**params, "dim": 1, "keepdim": False}, cast)
        if params.get("keepdim"):
            out = out.reshape((size,) + (1,) * (x.dim() - 1))
        return out
    if x.dim() == 1:  # 0-d samples
        return zero_d(prim, args, flags, params, cast, size, ("dim",))
    return bind(prim, (x,), {**params, "dim": shift_dim(params["dim"], x.dim() - 1)}, cast)


_unfold_dim = dim_params("dimension", none_all=False)


def _unfold(prim: Primitive, args: list, flags: list, params: dict, cast: Any, size: int,
            level: int) -> Any:
    """A 0-d sample unfolds to one window ``(size,)`` (PyTorch): run on ``(B, 1)`` at dim 1,
    keeping the window dimension."""
    x = args[0]
    if x.dim() != 1:
        return _unfold_dim(prim, args, flags, params, cast, size, level)
    shift_dim(params["dimension"], 0)  # range check
    y = bind(prim, (x.unsqueeze(1),), {**params, "dimension": 1}, cast)
    return y.reshape((size, y.shape[-1]))


# ------------------------------------------------------------------------- declarations
_POINTWISE = (
    "add sub rsub mul div neg exp pow pow_tensor pow_scalar floor ceil trunc round "
    "round_decimals frac div_mode floor_divide fmod fmod_tensor remainder remainder_tensor "
    "remainder_scalar lerp lerp_tensor addcmul addcdiv fill zero_ threshold_backward "
    "leaky_relu_backward hardtanh_backward hardsigmoid_backward hardshrink_backward "
    "softshrink_backward sigmoid_backward tanh_backward gelu_backward elu_backward "
    "softplus_backward hardswish_backward exp2 expm1 log log2 log10 log1p sqrt rsqrt "
    "reciprocal abs sign sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh "
    "nan_to_num erf erfc lgamma digamma polygamma polygamma_ erfinv mvlgamma _standard_gamma _standard_gamma_grad _dirichlet_grad igamma igammac relu leaky_relu threshold elu celu gelu silu mish softplus sigmoid "
    "log_sigmoid logit hardtanh hardsigmoid hardswish hardshrink softshrink eq ne lt le gt ge "
    "logical_and logical_or logical_xor logical_not isnan isinf isfinite bitwise_and "
    "bitwise_or bitwise_xor bitwise_not isclose where masked_fill masked_fill_tensor clamp "
    "clamp_tensor clamp_tensor_min clamp_tensor_max clamp_min clamp_min_tensor clamp_max "
    "clamp_max_tensor maximum minimum fmax fmin _nn_mul_scalar _nn_div_scalar _nn_add_scalar "
    "_prelu_kernel alias clone _to_copy tril triu constant_pad_nd acosh_ asinh_ atanh_ celu_ "
    "elu_ leaky_relu_ threshold_ fill_scalar_ rrelu_with_noise_eval"
).split()
batches(_POINTWISE, broadcasting)

batches(["sum_dim", "mean_dim", "nansum"], dim_params("dim", empty_all=True))
batches(["var", "std", "var_mean", "std_mean", "count_nonzero", "logsumexp", "all", "any",
         "linalg_vector_norm", "norm"], dim_params("dim", empty_all=True))
batches(["amax", "amin"], dim_params("dim", empty_all=True))
batches(["prod_dim_int", "cumsum", "cumprod", "_softmax", "_log_softmax", "glu",
         "argsort", "topk_indices", "squeeze_dim", "select", "slice", "unbind", "split",
         "split_with_sizes", "unsafe_split", "_matmul_squeeze_"],
        dim_params("dim", none_all=False))
batches(["squeeze_dims", "sort", "sort_stable", "topk", "max_dim", "min_dim"],
        dim_params("dim", none_all=False))
batches(["transpose", "_rnn_transpose_"], dim_params("dim0", "dim1", none_all=False))
batches(["diagonal"], dim_params("dim1", "dim2", none_all=False))
batches(["unfold"], _unfold)
batches(["flip"], dim_params("dims", none_all=False))
batches(["argmax", "argmin"], _argextreme)
batches(["sum"], full_reduction("sum_dim"))
batches(["mean"], full_reduction("mean_dim"))
batches(["max"], full_reduction("amax"))
batches(["min"], full_reduction("amin"))
batches(["prod"], flattened("prod_dim_int"))
