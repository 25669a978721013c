"""Functional forms of the layers. Mirrors: ``torch.nn.functional``.

Activation functions are the nn-signature variants of `hookgrad._functional.pointwise`
(listed in its ``NN_FUNCTIONAL``), and ``softmax``/``log_softmax``/``softmin`` come from
`hookgrad._functional.nn_ops`; they are re-exported here, not re-implemented. Losses live in
`hookgrad.nn._functional_loss`.
"""

from __future__ import annotations

from typing import Any

from hookgrad._ops._checks import tensor_arguments as _tensor_arguments
from hookgrad._backend import has_data as _has_data
from hookgrad._dispatch import bind as _bind, note_write as _note_write
from hookgrad._functional import nn_ops as _nn_ops
from hookgrad._functional import pointwise as _pointwise
from hookgrad._ops.registry import PRIMITIVES as _P
from hookgrad._tensor import Tensor
from hookgrad.nn import _functional_more
from hookgrad.nn._functional_linear import dropout, linear
from hookgrad.nn._functional_loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)

__all__ = [
    "linear", "bilinear", "dropout", "embedding", "mse_loss", "l1_loss", "smooth_l1_loss",
    "huber_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "softmin", "prelu", "glu",
]


def _reexport() -> None:
    """Bind the activation functions other op families define (see module docstring)."""
    for item in getattr(_pointwise, "NN_FUNCTIONAL", ()):
        fn = getattr(_pointwise, item) if isinstance(item, str) else item
        name = item if isinstance(item, str) else fn.__name__
        globals()[name] = fn
        __all__.append(name)
    for name in ("softmax", "log_softmax"):
        if hasattr(_nn_ops, name) and name not in globals():
            globals()[name] = getattr(_nn_ops, name)
            __all__.append(name)


_reexport()
for _name in _functional_more.__all__:
    globals()[_name] = getattr(_functional_more, _name)
    __all__.append(_name)


def _calls_method(fn: Any, method: str) -> Any:
    """PyTorch's ``F.<name>`` is ``input.<method>(...)``: a non-tensor raises AttributeError
    there (not the TypeError of ``torch.<name>``); keep that difference."""

    def wrapper(input: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(input, Tensor):
            raise AttributeError(f"'{type(input).__name__}' object has no attribute '{method}'")
        return fn(input, *args, **kwargs)

    wrapper.__name__ = wrapper.__qualname__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapper


for _name in ("sigmoid", "tanh"):
    globals()[_name] = _calls_method(globals()[_name], _name)


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along `dim` (``SoftmaxBackward0``); without `dim`, PyTorch's
    deprecated implicit choice (with its warning).

    Mirrors: ``torch.nn.functional.softmax``.
    """
    if not isinstance(input, Tensor):  # PyTorch calls input.softmax(...)
        raise AttributeError(f"'{type(input).__name__}' object has no attribute 'softmax'")
    if dim is None:
        dim = _softmax_dim("softmax", input.dim())
    return _nn_ops.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    """``x - logsumexp(x)`` along `dim` (``LogSoftmaxBackward0``); implicit `dim` as softmax.

    Mirrors: ``torch.nn.functional.log_softmax``.
    """
    if not isinstance(input, Tensor):
        raise AttributeError(f"'{type(input).__name__}' object has no attribute 'log_softmax'")
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim())
    return _nn_ops.log_softmax(input, dim, dtype)


def _softmax_dim(name: str, ndim: int) -> int:
    import warnings

    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """``softmax(-input)`` along `dim` (``SoftmaxBackward0`` after ``NegBackward0``).

    Mirrors: ``torch.nn.functional.softmin``.
    """
    if not isinstance(input, Tensor):  # PyTorch: input.dim(), or (-input).softmax(dim)
        if dim is None:
            raise AttributeError(f"'{type(input).__name__}' object has no attribute 'dim'")
        raise AttributeError(f"'{type(-input).__name__}' object has no attribute 'softmax'")
    if dim is None:
        dim = _softmax_dim("softmin", input.dim())
    if dtype is not None:
        input = input.to(dtype)  # type: ignore[attr-defined]
    return _nn_ops.softmax(-input, dim)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """``a * sigmoid(b)`` where `a`, `b` are the halves of `input` along `dim` (GluBackward0).

    Mirrors: ``torch.nn.functional.glu``.
    """
    from hookgrad._ops._shapes import normalize_dim

    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = normalize_dim(dim, input.dim())
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    return _bind(_P["glu"], (input,), {"dim": d})


@_tensor_arguments
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``max(0, x) + weight * min(0, x)``, `weight` per channel (dim 1) or shared
    (``PreluKernelBackward0``).

    Mirrors: ``torch.nn.functional.prelu``.
    """
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{input.dtype.scalar_type} and {weight.dtype.scalar_type}")
    n = weight.numel()
    if n != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.size(1) if input.dim() >= 2 else 1
        if n != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter numbers "
                f"= {n} and channel size = {channels}."
            )
    if input.dim() > 1 and weight.dim() == 1:
        shape = [1] * input.dim()
        shape[1] = n
        weight = weight.reshape(*shape)  # type: ignore[attr-defined]
    return _bind(_P["_prelu_kernel"], (input, weight))


@_tensor_arguments
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o]`` (``TrilinearBackward0``).

    Mirrors: ``torch.nn.functional.bilinear``.
    """
    if input1.dim() != input2.dim():
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}"
        )
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError("bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape)} and {list(input2.shape)}")
    if input1.size(-1) != weight.size(1) or input2.size(-1) != weight.size(2):
        raise RuntimeError(
            f"bilinear(): input size does not match weight size: got {input1.size(-1)} and "
            f"{input2.size(-1)} but expected {weight.size(1)} and {weight.size(2)}"
        )
    x1 = input1.reshape(-1, input1.size(-1))  # type: ignore[attr-defined]
    x2 = input2.reshape(-1, input2.size(-1))  # type: ignore[attr-defined]
    out = _bind(_P["_trilinear"], (x1, weight, x2), {"equation": "bi,oij,bj->bo"})
    out = out.reshape(*input1.shape[:-1], weight.size(0))
    return out if bias is None else out + bias


@_tensor_arguments
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of `weight` at the integer indices `input` (``EmbeddingBackward0``).

    The gradient of row `padding_idx` stays zero; ``max_norm`` renormalises the looked-up rows
    in place (under ``no_grad``), as PyTorch does. ``sparse=True`` gives a dense gradient.

    Mirrors: ``torch.nn.functional.embedding``.
    """
    if input.dtype.name not in ("int64", "int32"):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {input.type()} instead (while checking arguments for "
            "embedding)"
        )
    num = weight.size(0)
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
            padding_idx = num + padding_idx
    else:
        padding_idx = -1
    src = input
    while getattr(src, "_bt_value", None) is not None:  # under vmap: every sample's indices
        src = src._bt_value
    idx = src._data
    if idx.size and _has_data(idx) and (idx.min() < 0 or idx.max() >= num):  # (meta: no values)
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _embedding_renorm_(weight, input, max_norm, norm_type)
    return _bind(_P["embedding"], (weight, input), {
        "padding_idx": padding_idx, "scale_grad_by_freq": scale_grad_by_freq, "sparse": sparse})


def _embedding_renorm_(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    """Rescale the rows `input` refers to so their `norm_type`-norm is at most `max_norm`."""
    from hookgrad._backend import namespace_of

    data = weight._data
    xp = namespace_of(data)
    rows = xp.unique(input._data.reshape(-1))
    norms = (xp.abs(data[rows]) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(data.dtype)
    data[rows] = data[rows] * scale[:, None]
    _note_write(weight)


# --- layer families kept in their own modules (convolution, pooling, normalization, attention) --
from hookgrad.nn import _functional_conv, _functional_norm, _functional_pool  # noqa: E402
from hookgrad.nn._functional_conv import *  # noqa: E402,F403
from hookgrad.nn._functional_norm import *  # noqa: E402,F403
from hookgrad.nn._functional_pool import *  # noqa: E402,F403

__all__ += [*_functional_conv.__all__, *_functional_pool.__all__, *_functional_norm.__all__]

from hookgrad.nn import _functional_attention  # noqa: E402  (uses linear/dropout from above)
from hookgrad.nn._functional_attention import *  # noqa: E402,F403

__all__ += _functional_attention.__all__

from hookgrad.nn import _functional_layers, _functional_resample  # noqa: E402
from hookgrad.nn._functional_layers import *  # noqa: E402,F403
from hookgrad.nn._functional_resample import *  # noqa: E402,F403

__all__ += [*_functional_layers.__all__, *_functional_resample.__all__]
from hookgrad.nn import _functional_extra, _functional_loss_extra  # noqa: E402  (census)
from hookgrad.nn._functional_extra import *  # noqa: E402,F403
from hookgrad.nn._functional_loss_extra import *  # noqa: E402,F403

from hookgrad.nn import _functional_grid  # noqa: E402  (spatial transformers)
from hookgrad.nn._functional_grid import *  # noqa: E402,F403

__all__ += _functional_grid.__all__
from hookgrad.nn import _functional_fractional  # noqa: E402
from hookgrad.nn._functional_fractional import *  # noqa: E402,F403

__all__ += _functional_fractional.__all__
from hookgrad.nn import _functional_ctc  # noqa: E402
from hookgrad.nn._functional_ctc import *  # noqa: E402,F403

__all__ += _functional_ctc.__all__
from hookgrad.nn._functional_aten import conv_tbc  # noqa: E402

__all__ += ["conv_tbc"]
from hookgrad.nn._functional_lce import linear_cross_entropy  # noqa: E402

__all__ += ["linear_cross_entropy"]
from hookgrad.nn._functional_grouped import grouped_mm  # noqa: E402

__all__ += ["grouped_mm"]

# typing helpers are not part of PyTorch's namespace (tools crawl dir() of it)
del Any, annotations
