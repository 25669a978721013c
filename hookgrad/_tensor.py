"""`Tensor`: an array, its dtype/device, and the autograd fields the engine reads.

Layer 2. No op math lives here: arithmetic, reductions and the rest are installed by
`_tensor_methods` (layer 4) and autograd methods (``backward``, ``register_hook``...) by
`autograd/_tensor_api` (layer 5). That keeps the tensor <-> ops import cycle impossible.

NOTE [Tensor fields]
Fields every tensor needs on the hot path are ``__slots__`` (set once in `Tensor._make`); fields
most tensors never use (hooks, retain-grad, view base, forward-AD tangents) are class-level
defaults that an instance overrides in its ``__dict__`` only when it needs them. So creating a
tensor costs four attribute stores, and reading an unused hook table costs one lookup. The
version counter is a slot although it starts as None: every tensor a node saves gets one, and
setting a slot is much cheaper than creating the instance ``__dict__`` for it.

NOTE [Storage arrays]
A tensor's storage is the array of its view base (``_base``, else itself), unless that tensor
records ``_storage_array``: the array its ``_data`` lies in when the tensor is not an autograd
view of it. Loading (`hookgrad.load`, ``load_pickle``, unpickling, ``deepcopy``), ``set_``,
``detach``/``.data`` of a view, ``.data = view`` and ``Parameter(view)`` set it, as PyTorch's
tensors then share a storage without being views (``_base is None``, no view grad_fn); it is
ignored once ``_data`` no longer lies in it. ``storage_offset()``
(`_functional._slicing.storage_offset_of`), ``untyped_storage()`` and the archive writers read
it through `_storage_data`.

NOTE [Version counter]
A `VersionCounter` is shared by a tensor, its views and its detached aliases. In-place ops bump it;
`SavedTensor.unpack` compares it with the value recorded at save time and raises PyTorch's error
when they differ. It is created lazily: a tensor that never meets a view, a saved-tensor record
or an in-place op never allocates one.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from hookgrad import _backend
from hookgrad import _meta  # noqa: F401 - registers the ``meta`` backend (NOTE [Meta backend])
from hookgrad._config import STATE
from hookgrad._dtypes import BF16_NP, Size, dtype, from_numpy_dtype, legacy_dtype
from hookgrad._memory_format import format_name, is_contiguous_as

_ndarray = np.ndarray


class VersionCounter:
    """See NOTE [Version counter]."""

    # ``value`` is the class's 0 until the first bump gives a counter its own: creating one (for
    # every saved output of the forward pass) runs no ``__init__``.
    __slots__ = ("__dict__",)
    value = 0


# PyTorch warns once per process when float()/complex() reads a tensor that requires grad while
# grad mode is on (item(), int() and bool() stay silent, and so does a read under no_grad, e.g.
# LBFGS.step's float(loss)); the flag is the "once".
SCALAR_WARNED = [False]


def _warn_scalar_of_grad_tensor() -> None:
    if not SCALAR_WARNED[0] and STATE.grad_enabled:
        SCALAR_WARNED[0] = True
        warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to "
                      "unexpected behavior.\nConsider using tensor.detach() first.",
                      UserWarning, stacklevel=3)


class Tensor:
    """A multi-dimensional array that can record the operations applied to it.

    Mirrors: ``torch.Tensor``. Reprs, dtype names and error texts follow PyTorch.
    """

    # ``_grad_accumulator`` is a slot (read with a default, unset until a graph needs it) so
    # that it stays out of ``__dict__``: PyTorch's ``__dict__`` holds user attributes only, and
    # accelerate's ``init_empty_weights`` rebuilds parameters as ``cls(p.to(d), **p.__dict__)``
    __slots__ = (
        "_data", "_requires_grad", "_grad_fn", "_version_counter", "_grad_accumulator",
        "__dict__", "__weakref__",
    )

    # Rarely-set fields: see NOTE [Tensor fields].
    _output_nr = 0
    _grad = None
    _base: Tensor | None = None
    _view_chain: tuple = ()
    _view_version = 0
    _backward_hooks = None
    _post_accumulate_grad_hooks = None
    _retains_grad = False
    _wrapped_number = False
    _absent = False  # placeholder for an absent optional input (None in PyTorch)
    _fw_grads: dict | None = None
    _is_param = False
    _leaf_alias_of: Tensor | None = None  # an unpacked saved leaf stands for this leaf
    _creation_meta: Any = None  # how a view may be modified in place (NOTE in _views.py)
    _view_no_graph = False  # NOTE [Views made without a graph] in _dispatch.py
    _storage_array: Any = None  # NOTE [Storage arrays]

    # ------------------------------------------------------------------ construction
    @classmethod
    def _make(cls, data: Any, requires_grad: bool = False) -> Tensor:
        """Wrap an array without copying (internal constructor used by `bind`)."""
        t = object.__new__(cls)
        t._data = data
        t._requires_grad = requires_grad
        t._grad_fn = None
        t._version_counter = None
        return t

    @staticmethod
    def _make_subclass(cls: type, data: Tensor, require_grad: bool = False,
                       **dispatch_options: Any) -> Tensor:
        """An instance of the Tensor subclass `cls` sharing `data`'s memory and version counter,
        as a leaf that requires grad if `require_grad` (how ``nn.Parameter``-like subclasses
        are built; PyTorch's dispatch options have nothing to configure here).

        Raises:
            TypeError: `cls` does not inherit from Tensor.
            RuntimeError: `require_grad` on a dtype that cannot require gradients.

        Mirrors: ``torch.Tensor._make_subclass``.
        """
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                            "Tensor is not possible. Make sure your class inherits from Tensor.")
        if require_grad and data._data.dtype.kind not in "fcV":
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients")
        t = cls._make(data._data, bool(require_grad))
        t._version_counter = data._vc()
        store = data._storage_data()
        if store is not data._data:  # a view's storage (NOTE [Storage arrays])
            t._storage_array = store
        return t

    def __init__(self, *args: Any, **kwargs: Any) -> None:  # pragma: no cover - guidance only
        raise TypeError(
            "hookgrad.Tensor cannot be constructed directly; use hookgrad.tensor(data), "
            "hookgrad.empty(*size) or hookgrad.from_numpy(array)"
        )

    # ------------------------------------------------------------------ metadata
    @property
    def dtype(self) -> dtype:
        return from_numpy_dtype(self._data.dtype)

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self) -> int:
        return self._data.ndim

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def ndimension(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def nelement(self) -> int:
        return int(self._data.size)

    def element_size(self) -> int:
        return int(self._data.itemsize)

    @property
    def itemsize(self) -> int:
        """Bytes per element. Mirrors: ``torch.Tensor.itemsize``."""
        return int(self._data.itemsize)

    @property
    def nbytes(self) -> int:
        """Bytes of the elements (not of a view's whole storage). Mirrors: ``Tensor.nbytes``."""
        return int(self._data.nbytes)

    def storage_offset(self) -> int:
        """Offset of the first element in the storage of the view's base, in elements.

        Mirrors: ``torch.Tensor.storage_offset`` (a leaf's storage starts at its first element,
        also for ``from_numpy`` of a NumPy slice).
        """
        base = self._base
        if base is None or self._data.size == 0:
            return 0
        return int(_backend.element_offset(self._data, base._data))

    def _storage_data(self) -> Any:
        """The array holding this tensor's storage (NOTE [Storage arrays])."""
        root = self if self._base is None else self._base
        store = root._storage_array
        if store is None or type(store) is not type(root._data):
            return root._data
        # a recorded storage goes stale when ``_data`` is rebound (``out=``, ``set_``, ...)
        inside = 0 <= _backend.element_offset(root._data, store) <= store.size
        return store if inside else root._data

    def get_device(self) -> int:
        """-1 on CPU, else the device index. Mirrors: ``torch.Tensor.get_device``."""
        index = self.device.index
        return -1 if index is None else index

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    @property
    def device(self) -> _backend.device:
        return _backend.device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_meta(self) -> bool:
        """Whether the tensor has no data (``meta`` device). Mirrors: ``Tensor.is_meta``."""
        return self.device.type == "meta"

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind in "fV"  # V: bfloat16

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def stride(self, dim: int | None = None) -> Any:
        """Element strides. Mirrors: ``torch.Tensor.stride``."""
        data = self._data
        if data.size == 0:
            # NumPy reports 0 strides for empty arrays; PyTorch reports contiguous ones
            st, acc = [], 1
            for s in reversed(data.shape):
                st.append(acc)
                acc *= max(s, 1)
            st = tuple(reversed(st))
        else:
            st = tuple(s // data.itemsize for s in data.strides)
        return st if dim is None else st[_wrap_dim(dim, data.ndim)]

    def is_contiguous(self, memory_format: Any = None) -> bool:
        if memory_format is None:
            return bool(self._data.flags.c_contiguous)
        return is_contiguous_as(self._data, format_name(memory_format))

    def data_ptr(self) -> int:
        """Address of the first element; 0 for an empty tensor. Mirrors: ``Tensor.data_ptr``."""
        data = self._data
        if not data.size or not _backend.has_data(data):  # PyTorch: 0 for a meta tensor too
            return 0
        return int(data.__array_interface__["data"][0])

    def type(self, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
        """The legacy type name (``'torch.FloatTensor'``), or a cast to `dtype`.

        `dtype` may be a dtype or a legacy name (``'torch.DoubleTensor'``); casting to the
        tensor's own type returns the tensor itself.

        Mirrors: ``torch.Tensor.type``.
        """
        if dtype is None:
            return "torch." + self.dtype.legacy_name
        return self.to(legacy_dtype(dtype))  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ autograd fields
    @property
    def requires_grad(self) -> bool:
        r = self._requires_grad
        if self._base is None:
            return r
        if r:
            if self._view_no_graph and not self._base._requires_grad:
                # a view made without a graph requires grad only through its base, which has
                # stopped (``requires_grad_(False)``, ``detach_()``): PyTorch reads the base's
                # flag live
                self._requires_grad = False
                del self._view_no_graph
                return False
            return r
        return STATE_HOOKS.sync_view(self)  # a view requires grad when its base does

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if type(value) is not bool:
            raise RuntimeError("requires_grad must be a bool")
        if value and self._grad_fn is None and self._data.dtype.kind not in "fcV":
            # the setter and requires_grad_() word this differently in PyTorch
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients"
            )
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Mirrors: ``torch.Tensor.requires_grad_`` (leaves only; floating dtypes only)."""
        if type(requires_grad) is not bool:
            raise TypeError("requires_grad_(): argument 'requires_grad' (position 1) must be "
                            f"bool, not {type(requires_grad).__name__}")
        if self._grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and self._data.dtype.kind not in "fcV":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if self._view_no_graph:
            # it requires grad through its base whatever its own flag says; asking for grad
            # gives it a gradient of its own (an accumulator), as PyTorch's own flag does
            if requires_grad:
                del self._view_no_graph
            return self
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad_fn(self) -> Any:
        if self._base is not None and (self._requires_grad or STATE_HOOKS.sync_view(self)):
            return STATE_HOOKS.view_grad_fn(self)
        return self._grad_fn

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    @property
    def grad(self) -> Tensor | None:
        # the stored grad_fn, as PyTorch's is_leaf test here (a stale view is not regenerated)
        if self._grad is None and self._grad_fn is not None and not self._retains_grad:
            import warnings

            warnings.warn(_NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    "assigned grad expected to be a Tensor or None but got grad of type "
                    + type(value).__name__
                )
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    "attempting to assign a gradient with dtype "
                    f"'{_scalar_name(value.dtype)}' to a tensor with dtype "
                    f"'{_scalar_name(self.dtype)}'. Please ensure that the gradient and the "
                    "tensor have the same dtype"
                )
            if value.shape != self.shape:
                raise RuntimeError("assigned grad has data of a different size")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def _version(self) -> int:
        vc = self._version_counter
        return 0 if vc is None else vc.value

    def _vc(self) -> VersionCounter:
        """The version counter, created on first use (NOTE [Version counter])."""
        vc = self._version_counter
        if vc is None:
            vc = self._version_counter = VersionCounter()
        return vc

    def _is_view(self) -> bool:
        return self._base is not None

    # ------------------------------------------------------------------ data access
    @property
    def data(self) -> Tensor:
        """A tensor sharing storage, detached from autograd, with its own version counter."""
        out = Tensor._make(self._data)
        if self._base is not None or self._storage_array is not None:
            out._storage_array = self._storage_data()  # NOTE [Storage arrays]
        return out

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        self._data = value._data
        if self._storage_array is not None or value._storage_data() is not value._data:
            self._storage_array = value._storage_data()  # NOTE [Storage arrays]

    def detach(self) -> Tensor:
        """Mirrors: ``torch.Tensor.detach`` (shares storage and version counter)."""
        out = Tensor._make(self._data)
        out._version_counter = self._vc()
        if self._base is not None or self._storage_array is not None:
            out._storage_array = self._storage_data()  # NOTE [Storage arrays]
        return out

    def detach_(self) -> Tensor:
        """Mirrors: ``torch.Tensor.detach_``."""
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set "
                "as True, gradients are views of DDP buckets, and hence detach_() cannot be "
                "called on these gradients. To fix this error, please refer to the Optimizer."
                "zero_grad() function in torch/optim/optimizer.py as the solution."
            )
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        return self

    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The data as a NumPy array, sharing memory on CPU.

        Raises:
            RuntimeError: the tensor requires grad, grad mode is on and `force` is False
                (under ``no_grad`` PyTorch hands the data out).

        Mirrors: ``torch.Tensor.numpy`` (``force=True`` detaches and copies to the host).
        """
        if self._requires_grad and not force and STATE.grad_enabled:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        if type(self._data) is not np.ndarray and not force:
            dev = self.device
            if dev.type != "cpu":
                raise TypeError(f"can't convert {dev} device type tensor to numpy. Use "
                                "Tensor.cpu() to copy the tensor to host memory first.")
        if self._data.dtype is BF16_NP:  # NumPy has no bfloat16 of its own (NOTE [bfloat16])
            raise TypeError("Got unsupported ScalarType BFloat16")
        return _backend.to_numpy(self._data)

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number. Mirrors: ``Tensor.item``."""
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._data.reshape(()).item()

    def tolist(self) -> Any:
        """Nested lists of Python numbers (a number for 0-d). Mirrors: ``Tensor.tolist``."""
        return _backend.to_numpy(self._data).tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        # PyTorch goes through numpy(): tensors that require grad refuse
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __bool__(self) -> bool:
        size = self._data.size
        if size != 1:
            what = "no values" if size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {what} is ambiguous")
        return bool(self._data.reshape(()))

    def _python_scalar(self) -> Any:
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self._data.reshape(()).item()

    def __float__(self) -> float:
        if self.requires_grad:
            _warn_scalar_of_grad_tensor()
        return float(_real_scalar(self._python_scalar(), "double"))

    def __int__(self) -> int:
        return int(_real_scalar(self._python_scalar(), "int64_t"))

    def __complex__(self) -> complex:
        if self.requires_grad:
            _warn_scalar_of_grad_tensor()
        return complex(self._python_scalar())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.reshape(()))

    def __format__(self, format_spec: str) -> str:
        if self._data.ndim == 0 and type(self) is Tensor:
            return self._data.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return STATE_HOOKS.format_tensor(self)

    def __deepcopy__(self, memo: dict) -> Tensor:
        return STATE_HOOKS.deepcopy_tensor(self, memo)

    def __reduce_ex__(self, proto: int) -> Any:
        return STATE_HOOKS.reduce_tensor(self)


class _LateHooks:
    """Functions that higher layers provide to this layer (dependency inversion, design §3).

    `grad_fn` of a view regenerates after in-place ops (autograd layer); the repr formatter and
    pickling helpers live in higher layers too. Defaults keep a bare layer-2 import usable.
    """

    def view_grad_fn(self, t: Tensor) -> Any:
        return t._grad_fn

    def sync_view(self, t: Tensor) -> bool:
        """Whether view `t` requires grad through its base (the autograd layer's rule)."""
        return False

    def get_tangent(self, t: Tensor, level: int) -> Any:
        """Forward-AD tangent of `t` at `level` (forward_ad may install a view-aware one)."""
        fw = t._fw_grads
        return fw.get(level) if fw else None

    def format_tensor(self, t: Tensor) -> str:
        return f"tensor({t._data!r})"

    def deepcopy_tensor(self, t: Tensor, memo: dict) -> Tensor:
        out = Tensor._make(t._data.copy(), t._requires_grad)
        memo[id(t)] = out
        return out

    def reduce_tensor(self, t: Tensor) -> Any:
        raise TypeError("pickling tensors needs hookgrad to be fully imported")


STATE_HOOKS = _LateHooks()


def _wrap_dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim % n


def _real_scalar(value: Any, c_type: str) -> Any:
    """A complex value with a zero imaginary part converts to a real number; others raise
    PyTorch's RuntimeError (its checked conversion)."""
    if isinstance(value, complex):
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type {c_type} without overflow")
        return value.real
    return value


def _scalar_name(d: dtype) -> str:
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "bool": "bool"}.get(d.name, d.name)


_NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information."
)

__all__ = ["Tensor", "VersionCounter", "STATE", "STATE_HOOKS"]
