"""Shape rules: result metadata of the calls large meta arrays meet, computed without data.

Layer 1 (NOTE [Meta backend] in hookgrad/_meta/__init__.py). Dtypes come from NumPy itself,
running the same call on one-element stand-ins; shapes come from the rule. A call without a rule
raises NotImplementedError, PyTorch's type for an op with no meta kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._meta import _layout
from hookgrad._meta._standin import call
from hookgrad._meta._layout import broadcast, make


def _is_meta(x: Any) -> bool:
    return type(x) is _layout.MAKER[0]


def _shape(x: Any) -> tuple:
    return tuple(x.shape) if hasattr(x, "shape") else ()


def _one(x: Any, shape: tuple | None = None) -> Any:
    """A stand-in of `x` holding ones (dtype resolution; Python numbers stay themselves)."""
    if _is_meta(x) or isinstance(x, np.ndarray):
        return np.ones(() if shape is None else shape, x.dtype)
    return x


def _tiny(x: Any) -> Any:
    """`x` as ones with every dimension of size one (same rank and dtype)."""
    return _one(x, (1,) * len(_shape(x))) if (_is_meta(x) or isinstance(x, np.ndarray)) else x


def _no_rule(name: str) -> NotImplementedError:
    return NotImplementedError(f"meta tensors: no shape rule for '{name}' on inputs of more "
                               f"than {_layout.SMALL} elements")


def _axes(axis: Any, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in items:
        if not -ndim <= int(a) < max(ndim, 1):
            raise np.exceptions.AxisError(int(a), ndim)
        out.append(int(a) % max(ndim, 1))
    return tuple(sorted(out))


def _reduced(shape: tuple, axis: Any, keepdims: bool) -> tuple:
    axes = _axes(axis, len(shape))
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)


# ------------------------------------------------------------------------------- ufuncs
def _matmul(a: Any, b: Any, dtype: Any) -> Any:
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    ma = (1,) + sa if len(sa) == 1 else sa
    mb = sb + (1,) if len(sb) == 1 else sb
    if ma[-1] != mb[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, "
                         f"with gufunc signature (n?,k),(k,m?)->(n?,m?) (size {mb[-2]} is "
                         f"different from {ma[-1]})")
    core = ((ma[-2],) if len(sa) > 1 else ()) + ((mb[-1],) if len(sb) > 1 else ())
    return make(broadcast(ma[:-2], mb[:-2]) + core, dtype)


def ufunc(uf: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    kwargs = {k: v for k, v in kwargs.items() if k not in ("where", "order", "subok")}
    if method == "__call__":
        stand = _tiny if uf.signature else _one  # a gufunc needs its core dimensions
        with np.errstate(all="ignore"):
            probe = uf(*(stand(x) for x in inputs), **kwargs)
        if uf is np.matmul:
            return _matmul(inputs[0], inputs[1], probe.dtype)
        if uf.signature:
            raise _no_rule(uf.__name__)
        shape = broadcast(*(_shape(x) for x in inputs))
        if uf.nout > 1:
            return tuple(make(shape, p.dtype) for p in probe)
        return make(shape, probe.dtype)
    a = inputs[0]
    if method == "reduce":
        axis = kwargs.pop("axis", 0)
        keepdims = kwargs.pop("keepdims", False)
        kwargs.pop("initial", None)
        probe = uf.reduce(_tiny(a), axis=axis, keepdims=keepdims, **kwargs)
        return make(_reduced(_shape(a), axis, keepdims), probe.dtype)
    if method == "accumulate":
        probe = uf.accumulate(_tiny(a), **kwargs)
        return make(_shape(a), probe.dtype)
    if method == "outer":
        probe = uf.outer(_one(a), _one(inputs[1]), **kwargs)
        return make(_shape(a) + _shape(inputs[1]), probe.dtype)
    raise _no_rule(f"{uf.__name__}.{method}")


# ---------------------------------------------------------------------------- functions
def _reduction(fn: Callable[..., Any]) -> Callable[..., Any]:
    def rule(a: Any, axis: Any = None, *args: Any, **kw: Any) -> Any:
        kw.pop("out", None)
        keepdims = kw.get("keepdims", False)
        probe = fn(_tiny(a), axis, *args, **kw)
        return make(_reduced(_shape(a), axis, keepdims), np.asarray(probe).dtype)
    return rule


def _scan(fn: Callable[..., Any]) -> Callable[..., Any]:
    def rule(a: Any, axis: Any = None, *args: Any, **kw: Any) -> Any:
        kw.pop("out", None)
        probe = fn(_tiny(a), axis, *args, **kw)
        shape = _shape(a) if axis is not None else (a.size,)
        return make(shape, probe.dtype)
    return rule


def _same_shape(out_dtype: Any = None) -> Callable[..., Any]:
    def rule(a: Any, *args: Any, **kw: Any) -> Any:
        return make(_shape(a), a.dtype if out_dtype is None else out_dtype)
    return rule


def _copy(a: Any, order: str = "K", **kw: Any) -> Any:
    dtype = kw.get("dtype") or a.dtype
    if order == "K":
        return make(_shape(a), dtype, _layout.dense_like(a.shape, a.strides, np.dtype(dtype)
                                                         .itemsize))
    return make(_shape(a), dtype)


def _like(a: Any, *args: Any, dtype: Any = None, order: str = "K", shape: Any = None,
          **kw: Any) -> Any:
    d = np.dtype(dtype) if dtype is not None else a.dtype
    if shape is not None:
        return make(tuple(shape) if isinstance(shape, (tuple, list)) else (shape,), d)
    return _copy(a, order, dtype=d)


def _full_like(a: Any, fill_value: Any, dtype: Any = None, order: str = "K", **kw: Any) -> Any:
    return _like(a, dtype=dtype, order=order, **kw)


def _join(arrays: Any, axis: int | None = 0, stack: bool = False, dtype: Any = None,
          **kw: Any) -> Any:
    arrays = list(arrays)
    shapes = [_shape(x) for x in arrays]
    probe = np.concatenate([_tiny(x) for x in arrays], dtype=dtype) if not stack else \
        np.stack([_one(x) for x in arrays], dtype=dtype)
    if stack:
        if len(set(shapes)) != 1:
            raise ValueError("all input arrays must have the same shape")
        nd = len(shapes[0]) + 1
        ax = axis % nd
        return make(shapes[0][:ax] + (len(arrays),) + shapes[0][ax:], probe.dtype)
    if axis is None:
        return make((sum(int(np.prod(s)) for s in shapes),), probe.dtype)
    nd = len(shapes[0])
    ax = axis % nd
    rest = {s[:ax] + s[ax + 1:] for s in shapes}
    if len(rest) != 1 or len({len(s) for s in shapes}) != 1:
        raise ValueError("all the input array dimensions except for the concatenation axis "
                         "must match exactly")
    return make(shapes[0][:ax] + (sum(s[ax] for s in shapes),) + shapes[0][ax + 1:],
                probe.dtype)


def _where(cond: Any, x: Any = None, y: Any = None) -> Any:
    if x is None:
        raise NotImplementedError("meta tensors: where(condition) depends on the values")
    probe = np.where(True, _one(x), _one(y))
    return make(broadcast(_shape(cond), _shape(x), _shape(y)), np.asarray(probe).dtype)


def _clip(a: Any, a_min: Any = None, a_max: Any = None, **kw: Any) -> Any:
    kw.pop("out", None)
    probe = np.clip(_one(a), _one(a_min) if a_min is not None else None,
                    _one(a_max) if a_max is not None else None, **kw)
    return make(broadcast(_shape(a), _shape(a_min), _shape(a_max)), probe.dtype)


def _reshape(a: Any, shape: Any = None, order: str = "C", **kw: Any) -> Any:
    shape = _new_shape(a, kw.pop("newshape", shape))
    view = view_reshape(a, shape)
    return view if view is not None else make(shape, a.dtype)


def _new_shape(a: Any, shape: Any) -> tuple:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if -1 in shape:
        known = int(np.prod([n for n in shape if n != -1]))
        shape = tuple(a.size // known if n == -1 and known else n for n in shape)
    if int(np.prod(shape)) != a.size:
        raise ValueError(f"cannot reshape array of size {a.size} into shape {shape}")
    return shape


def view_reshape(a: Any, shape: Any) -> Any:
    """`a` with a new shape as a view (NumPy's strides), or None where that needs a copy."""
    return call(lambda s: _view_reshape(s, _new_shape(a, shape)), (a,), {}, views=True)


def _view_reshape(s: np.ndarray, shape: tuple) -> np.ndarray | None:
    try:  # ``copy=False`` refuses before copying (``s.shape = ...`` would copy, then refuse,
        # and a copy reads the one-element stand-in of a large array out of bounds)
        return s.reshape(shape, copy=False)
    except ValueError:
        return None


def _einsum(subscripts: Any, *operands: Any, **kw: Any) -> Any:
    if not isinstance(subscripts, str) or "..." in subscripts:
        raise _no_rule("einsum")
    spec = subscripts.replace(" ", "")
    ins, _, out = spec.partition("->")
    sizes: dict = {}
    for letters, x in zip(ins.split(","), operands):
        for c, n in zip(letters, _shape(x)):
            sizes[c] = max(sizes.get(c, 1), n)
    if not _:
        out = "".join(sorted(c for c in sizes if ins.count(c) == 1))
    probe = np.einsum(spec, *(_tiny(x) for x in operands), **kw)
    return make(tuple(sizes[c] for c in out), np.asarray(probe).dtype)


def _dot(a: Any, b: Any, out: Any = None) -> Any:
    sa, sb = _shape(a), _shape(b)
    probe = np.dot(_tiny(a), _tiny(b))
    if not sa or not sb:
        return make(broadcast(sa, sb) if not (sa and sb) else sa + sb, np.asarray(probe).dtype)
    k = sb[0] if len(sb) == 1 else sb[-2]
    if sa[-1] != k:
        raise ValueError(f"shapes {sa} and {sb} not aligned: {sa[-1]} (dim {len(sa) - 1}) != "
                         f"{k} (dim {max(len(sb) - 2, 0)})")
    return make(sa[:-1] + sb[:-2] + sb[-1:] if len(sb) > 1 else sa[:-1], probe.dtype)


def _overlap(a: Any, b: Any, max_work: Any = None) -> bool:
    """Whether two arrays' byte ranges in one storage meet (NumPy's ``may_share_memory``)."""
    if not (_is_meta(a) and _is_meta(b)):
        return False
    root_a = a if a._base is None else a._base
    root_b = b if b._base is None else b._base
    if root_a is not root_b or a.size == 0 or b.size == 0:
        return False
    lo_a, hi_a = _layout.span(a.shape, a.strides, a.itemsize)
    lo_b, hi_b = _layout.span(b.shape, b.strides, b.itemsize)
    return a._offset + lo_a < b._offset + hi_b and b._offset + lo_b < a._offset + hi_a


def _as_strided(x: Any, shape: Any = None, strides: Any = None, subok: bool = False,
                writeable: bool = True) -> Any:
    root = x if x._base is None else x._base
    return make(x.shape if shape is None else shape, x.dtype,
                x.strides if strides is None else strides, x._offset, root)


# answered from metadata alone, whatever the size
ALWAYS: dict[Any, Callable[..., Any]] = {
    np.lib.stride_tricks.as_strided: _as_strided, np.may_share_memory: _overlap, np.shares_memory: _overlap,
    np.shape: lambda a: tuple(a.shape), np.ndim: lambda a: a.ndim,
    np.size: lambda a, axis=None: a.size if axis is None else a.shape[axis],
}


def _advanced_index(a: Any, index: Any) -> Any:
    """NumPy's result shape of indexing `a` with integer arrays (and basic indices)."""
    items = list(index) if type(index) is tuple else [index]
    if any(x is Ellipsis for x in items):
        at = items.index(Ellipsis)
        used = sum(1 for x in items if x is not None and x is not Ellipsis)
        items[at:at + 1] = [slice(None)] * (a.ndim - used)
    used = sum(1 for x in items if x is not None)
    items += [slice(None)] * (a.ndim - used)
    arrays = [i for i, x in enumerate(items) if hasattr(x, "shape") or isinstance(
        x, (list, int, np.integer))]
    if any(getattr(items[i], "dtype", None) == np.bool_ for i in arrays):
        raise _no_rule("boolean mask")
    bshape = broadcast(*(np.shape(items[i]) if not _is_meta(items[i]) else items[i].shape
                         for i in arrays))
    out: list = []
    dim, placed = 0, False
    adjacent = not arrays or arrays[-1] - arrays[0] + 1 == len(arrays)
    for i, x in enumerate(items):
        if x is None:
            out.append(1)
            continue
        if i in arrays:
            if not placed and adjacent:
                out.extend(bshape)
            placed = True
        else:
            out.append(len(range(*x.indices(a.shape[dim]))))
        dim += 1
    shape = tuple(out) if adjacent else bshape + tuple(out)
    return make(shape, a.dtype)


def _take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
    if axis is None:
        return make(_shape(indices), a.dtype)
    ax = _axes(axis, a.ndim)[0]
    return make(a.shape[:ax] + _shape(indices) + a.shape[ax + 1:], a.dtype)


def _take_along_axis(a: Any, indices: Any, axis: Any = -1) -> Any:
    if axis is None:
        return make(_shape(indices), a.dtype)
    ax = _axes(axis, a.ndim)[0]
    rest = broadcast(tuple(1 if d == ax else n for d, n in enumerate(a.shape)),
                     tuple(1 if d == ax else n for d, n in enumerate(_shape(indices))))
    return make(rest[:ax] + (_shape(indices)[ax],) + rest[ax + 1:], a.dtype)


def _pad(a: Any, pad_width: Any, mode: str = "constant", **kw: Any) -> Any:
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (a.ndim, 2))
    return make(tuple(n + int(lo) + int(hi) for n, (lo, hi) in zip(a.shape, widths)), a.dtype)


def _tile(a: Any, reps: Any) -> Any:
    reps = (reps,) if isinstance(reps, (int, np.integer)) else tuple(reps)
    n = max(len(reps), a.ndim)
    shape = (1,) * (n - a.ndim) + a.shape
    reps = (1,) * (n - len(reps)) + reps
    return make(tuple(s * r for s, r in zip(shape, reps)), a.dtype)


def _tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    if isinstance(axes, (int, np.integer)):
        ax_a, ax_b = list(range(a.ndim - axes, a.ndim)), list(range(int(axes)))
    else:
        ax_a, ax_b = ([x] if isinstance(x, (int, np.integer)) else list(x) for x in axes)
    ax_a = [x % a.ndim for x in ax_a]
    ax_b = [x % b.ndim for x in ax_b]
    if [a.shape[i] for i in ax_a] != [b.shape[i] for i in ax_b]:
        raise ValueError("shape-mismatch for sum")
    probe = np.result_type(a.dtype, b.dtype)
    return make(tuple(n for d, n in enumerate(a.shape) if d not in ax_a)
                + tuple(n for d, n in enumerate(b.shape) if d not in ax_b), probe)


def _unravel_index(indices: Any, shape: Any, order: str = "C") -> Any:
    return tuple(make(_shape(indices), np.intp) for _ in shape)


def _meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> Any:
    sizes = [int(np.prod(_shape(x))) for x in xi]
    if indexing == "xy" and len(sizes) > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for k, x in enumerate(xi):
        d = (1 - k if k < 2 else k) if indexing == "xy" and len(xi) > 1 else k
        shape = tuple(n if (not sparse or i == d) else 1 for i, n in enumerate(sizes))
        out.append(make(shape, x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype))
    return tuple(out)


def _astype(a: Any, dtype: Any, order: str = "K", copy: bool = True, **kw: Any) -> Any:
    if not copy and np.dtype(dtype) == a.dtype:
        return a
    return _copy(a, order, dtype=np.dtype(dtype))


def _asarray(a: Any, dtype: Any = None, order: Any = None, copy: Any = None, **kw: Any) -> Any:
    if dtype is None or np.dtype(dtype) == a.dtype:
        return a if not copy else _copy(a, order or "K")
    return _copy(a, order or "K", dtype=np.dtype(dtype))


FUNCTIONS: dict[Any, Callable[..., Any]] = {
    np.sum: _reduction(np.sum), np.mean: _reduction(np.mean), np.prod: _reduction(np.prod),
    np.max: _reduction(np.max), np.min: _reduction(np.min), np.amax: _reduction(np.amax),
    np.amin: _reduction(np.amin), np.any: _reduction(np.any), np.all: _reduction(np.all),
    np.argmax: _reduction(np.argmax), np.argmin: _reduction(np.argmin),
    np.var: _reduction(np.var), np.std: _reduction(np.std), np.nansum: _reduction(np.nansum),
    np.nanmean: _reduction(np.nanmean), np.count_nonzero: _reduction(np.count_nonzero),
    np.cumsum: _scan(np.cumsum), np.cumprod: _scan(np.cumprod),
    np.copy: _copy, np.ascontiguousarray: lambda a, dtype=None, **k: make(_shape(a), dtype or
                                                                         a.dtype),
    np.asarray: _asarray, np.array: _asarray,
    np.zeros_like: _like, np.ones_like: _like, np.empty_like: _like, np.full_like: _full_like,
    np.concatenate: _join, np.stack: lambda arrays, axis=0, **k: _join(arrays, axis, True, **k),
    np.where: _where, np.dot: _dot, np.take: _take, np.take_along_axis: _take_along_axis,
    np.pad: _pad, np.tile: _tile, np.tensordot: _tensordot, np.meshgrid: _meshgrid,
    np.unravel_index: _unravel_index, np.nan_to_num: _same_shape(), np.clip: _clip, np.reshape: _reshape, np.einsum: _einsum,
    np.sort: _same_shape(), np.argsort: _same_shape(np.int64), np.tril: _same_shape(),
    np.triu: _same_shape(), np.roll: _same_shape(), np.isclose: _same_shape(np.bool_),
    np.astype: _astype, np.round: _same_shape(), np.around: _same_shape(),
}


def function(func: Any, args: tuple, kwargs: dict) -> Any:
    rule = FUNCTIONS.get(func)
    if rule is None:
        raise _no_rule(getattr(func, "__name__", repr(func)))
    return rule(*args, **kwargs)


_METHODS = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min,
            "any": np.any, "all": np.all, "argmax": np.argmax, "argmin": np.argmin,
            "var": np.var, "std": np.std, "cumsum": np.cumsum, "cumprod": np.cumprod,
            "clip": np.clip, "take": np.take, "argsort": np.argsort, "round": np.round, "conj": None,
            "conjugate": None}


def method(a: Any, name: str, args: tuple, kwargs: dict) -> Any:
    if name == "reshape":
        shape = args[0] if len(args) == 1 else args
        return _reshape(a, kwargs.pop("shape", shape), **kwargs)
    if name == "astype":
        return _astype(a, *args, **kwargs)
    if name == "copy":
        return _copy(a, *(args or (kwargs.pop("order", "C"),)), **kwargs)
    if name == "__getitem__":
        return _advanced_index(a, args[0])
    if name == "ravel" or name == "flatten":
        return _reshape(a, (-1,)) if name == "ravel" else make((a.size,), a.dtype)
    if name in ("conj", "conjugate"):
        return _copy(a, "K")
    fn = _METHODS.get(name)
    if fn is None:
        raise _no_rule(f"ndarray.{name}")
    return function(fn, (a, *args), kwargs)
