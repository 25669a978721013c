"""The ``meta`` device: tensors with a shape, a dtype and strides but no data.

Layer 1. NOTE [Meta backend]
A `MetaArray` holds what a tensor's metadata needs (shape, dtype, byte strides, offset into its
owner's storage, the owner) and nothing else, so ``empty(10**12, device="meta")`` costs a few
bytes. Ops reach it through the same op table as on every backend: NumPy's ufuncs and array
functions called on a `MetaArray` dispatch to it (``__array_ufunc__``/``__array_function__``,
as they do for CuPy), and it answers with a new `MetaArray` of the result's shape, dtype and
strides, computed one of three ways:

- *small inputs* (every meta input spans at most `SMALL` elements): NumPy runs the real call on
  zero-filled stand-ins laid out like the inputs, and the result's metadata is kept. This is
  exact by construction (the ``cpu`` backend runs the very same call), views included: a
  result that views a stand-in becomes a view of the matching `MetaArray`.
- *view functions* on any size (transpose, basic indexing, expand, squeeze, ...): NumPy runs
  them on stand-ins whose memory is one element wide. They only compute shapes and strides, never
  read, so nothing outside that element is touched.
- *shape rules* (`_meta.rules`) for the rest of what large tensors meet: every ufunc (broadcast
  shapes, dtype from the ufunc on 0-d stand-ins), reductions, matmul, joins, copies, factories.
  A call with none of these on a large input raises NotImplementedError (PyTorch's type for an
  op without a meta kernel).

Data-dependent questions (``item``, ``bool``, ``tolist``, ``nonzero``, boolean masks) raise as
PyTorch does on meta tensors; writes (``out=``, ``a[i] = v``, ``copyto``) are no-ops.

The few primitives whose kernels read host values (LU, ``mode``/``nanmedian``, the reductions
of ``scatter_reduce``/``index_reduce``/``put``, ``special_zeta``) declare their results' shapes,
dtypes and layouts in ``hookgrad/_ops/_meta_shapes.py``; a meta input skips their kernel.
"""

from hookgrad._meta.array import MetaArray
from hookgrad._meta.backend import META, MetaBackend

__all__ = ["MetaArray", "MetaBackend", "META"]
