"""Where NumPy's calls on meta arrays land, and which way each is answered (NOTE [Meta backend]).

Layer 1: small inputs run on stand-ins (`_standin.call`), views of large ones on one-element
stand-ins (`VIEWS`), the rest of large ones by `rules`; data-dependent calls raise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hookgrad._meta import _layout, rules
from hookgrad._meta._standin import _metas, call, is_large

NO_DATA = "Cannot copy out of meta tensor; no data!"
ITEM = "Tensor.item() cannot be called on meta tensors"


def _nonzero_error(*_: Any, **__: Any) -> Any:
    raise NotImplementedError(
        "The register_meta function for torch.nonzero() raises unimplemented by default, as a "
        "correct data-independent implementation does not exist.")


def _unique_error(*_: Any, **__: Any) -> Any:
    raise NotImplementedError("aten::_unique2: attempted to run this operator with Meta tensors, "
                              "but there was no fake impl or Meta kernel registered.")


# results whose shape depends on the values: PyTorch has no meta kernel for them
DATA_DEPENDENT: dict[Any, Callable[..., Any]] = {
    np.nonzero: _nonzero_error, np.argwhere: _nonzero_error, np.flatnonzero: _nonzero_error,
    np.extract: _nonzero_error, np.compress: _nonzero_error,
    np.unique: _unique_error, np.unique_counts: _unique_error, np.unique_inverse: _unique_error,
    np.unique_values: _unique_error, np.unique_all: _unique_error,
}

# functions that compute a view's shape and strides without reading any element
VIEWS = {np.transpose, np.swapaxes, np.moveaxis, np.expand_dims, np.squeeze, np.broadcast_to,
         np.broadcast_arrays, np.diagonal, np.atleast_1d, np.atleast_2d, np.atleast_3d,
         np.flip, np.fliplr, np.flipud, np.rot90, np.split, np.array_split, np.real,
         np.matrix_transpose, np.permute_dims, np.unstack}
VIEW_METHODS = {"transpose", "swapaxes", "squeeze", "diagonal", "view", "__getitem__"}


# ---------------------------------------------------------------------------- entry points
def ufunc(uf: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    out = kwargs.pop("out", None)
    if method == "at":
        return None  # an in-place scatter: no data to write
    if not is_large(*inputs):
        result = call(getattr(uf, method), inputs, kwargs)
    else:
        result = rules.ufunc(uf, method, inputs, kwargs)
    if out is not None:  # the result is written into `out`: nothing to write
        return out[0] if len(out) == 1 else out
    return result


def function(func: Any, args: tuple, kwargs: dict) -> Any:
    bad = DATA_DEPENDENT.get(func)
    if bad is not None:
        return bad()
    if func is np.copyto or func is np.put or func is np.place or func is np.putmask:
        return None  # writes into a meta array: no data to write
    always = rules.ALWAYS.get(func)
    if always is not None:
        return always(*args, **kwargs)
    found: dict = {}
    _metas((args, kwargs), found)
    if not is_large(*found.values()):
        return call(func, args, kwargs)
    if func in VIEWS:
        return call(func, args, kwargs, views=True)
    return rules.function(func, args, kwargs)


def method(arr: Any, name: str, args: tuple, kwargs: dict) -> Any:
    if name in ("nonzero",):
        return _nonzero_error()
    if name in ("fill", "sort", "put", "partition", "setflags", "itemset"):
        return None  # in-place writes: no data to write
    if name in ("tolist", "tobytes", "item", "__array__"):
        raise NotImplementedError(NO_DATA) if name != "item" else RuntimeError(ITEM)

    def run(a: Any, *rest: Any, **kw: Any) -> Any:
        return getattr(a, name)(*rest, **kw)
    run.__qualname__ = f"ndarray.{name}"
    if not is_large(arr) and not is_large(*args):
        return call(run, (arr, *args), kwargs)
    if name in VIEW_METHODS and not (name == "__getitem__" and _has_array_index(args)):
        return call(run, (arr, *args), kwargs, views=True)
    return rules.method(arr, name, args, kwargs)


def _has_array_index(args: tuple) -> bool:
    index = args[0] if args else None
    items = index if type(index) is tuple else (index,)
    return any(not isinstance(i, (int, np.integer, slice, type(None), type(Ellipsis)))
               for i in items)


def getitem(arr: Any, index: Any) -> Any:
    items = index if type(index) is tuple else (index,)
    cls = _layout.MAKER[0]
    for i in items:
        if type(i) is cls and i.dtype == np.bool_:
            _nonzero_error()  # a boolean mask selects a data-dependent number of elements
    return method(arr, "__getitem__", (index,), {})
