"""The lazy layers: Linear, convolutions and batch/instance norms with inferred input sizes.

Each is ``LazyModuleMixin`` over the eager class it becomes (NOTE [Lazy modules] in
``lazy.py``); the classes are published at PyTorch's module paths (``nn.modules.linear``,
``nn.modules.conv``, ``nn.modules.batchnorm``, ``nn.modules.instancenorm``).

Mirrors: ``torch.nn.LazyLinear``, ``LazyConv{1,2,3}d``, ``LazyConvTranspose{1,2,3}d``,
``LazyBatchNorm{1,2,3}d``, ``LazyInstanceNorm{1,2,3}d``.
"""

from __future__ import annotations

import importlib
from typing import Any

from hookgrad._functional.creation import tensor as _tensor
from hookgrad._dtypes import int64
from hookgrad._tensor import Tensor
from hookgrad.autograd.grad_mode import no_grad
from hookgrad.nn.modules._paths import publish
from hookgrad.nn.modules.batchnorm3d import BatchNorm3d
from hookgrad.nn.modules.conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from hookgrad.nn.modules.conv3d import Conv3d, ConvTranspose3d
from hookgrad.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from hookgrad.nn.modules.lazy import LazyModuleMixin
from hookgrad.nn.modules.linear import Linear
from hookgrad.nn.modules.normalization import BatchNorm1d, BatchNorm2d
from hookgrad.nn.parameter import UninitializedBuffer, UninitializedParameter

__all__ = ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyLinear(LazyModuleMixin, Linear):
    """`Linear` whose ``in_features`` is ``input.shape[-1]`` of the first call.

    Example:
        >>> import hookgrad as torch
        >>> m = torch.nn.LazyLinear(3)
        >>> _ = m(torch.ones(2, 5))
        >>> type(m).__name__, tuple(m.weight.shape)
        ('Linear', (3, 5))

    Mirrors: ``torch.nn.LazyLinear``.
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:  # type: ignore[override]
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:  # materialised by load_state_dict: take the loaded width
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(
                    f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                    f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


class _LazyConvXdMixin(LazyModuleMixin):
    _spatial = 0

    def _lazy_init(self, out_channels: int, bias: bool, device: Any, dtype: Any) -> None:
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        if not self.has_uninitialized_params():
            return
        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        self.weight.materialize(shape)
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()

    def _get_in_channels(self, input: Tensor) -> int:
        no_batch = self._spatial + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(
                f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) input to "
                f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]


def _lazy_conv(name: str, base: type, spatial: int) -> type:
    def __init__(self: Any, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        base_init(self, 0, 0, kernel_size, stride, padding, dilation, groups, False,
                  padding_mode, device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)

    def base_init(self: Any, *args: Any, **kwargs: Any) -> None:
        super(cls, self).__init__(*args, **kwargs)

    doc = (f"`{base.__name__}` whose ``in_channels`` comes from the first input.\n\n"
           f"    Mirrors: ``torch.nn.{name}``.\n    ")
    cls = type(name, (_LazyConvXdMixin, base), {
        "__init__": __init__, "cls_to_become": base, "_spatial": spatial, "__doc__": doc,
        "__module__": __name__, "__qualname__": name})
    return cls


def _lazy_conv_transpose(name: str, base: type, spatial: int) -> type:
    def __init__(self: Any, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1, padding_mode: str = "zeros", device: Any = None,
                 dtype: Any = None) -> None:
        super(cls, self).__init__(0, 0, kernel_size, stride, padding, output_padding, groups,
                                  False, dilation, padding_mode, device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)

    doc = (f"`{base.__name__}` whose ``in_channels`` comes from the first input.\n\n"
           f"    Mirrors: ``torch.nn.{name}``.\n    ")
    cls = type(name, (_LazyConvXdMixin, base), {
        "__init__": __init__, "cls_to_become": base, "_spatial": spatial, "__doc__": doc,
        "__module__": __name__, "__qualname__": name})
    return cls


LazyConv1d = _lazy_conv("LazyConv1d", Conv1d, 1)
LazyConv2d = _lazy_conv("LazyConv2d", Conv2d, 2)
LazyConv3d = _lazy_conv("LazyConv3d", Conv3d, 3)
LazyConvTranspose1d = _lazy_conv_transpose("LazyConvTranspose1d", ConvTranspose1d, 1)
LazyConvTranspose2d = _lazy_conv_transpose("LazyConvTranspose2d", ConvTranspose2d, 2)
LazyConvTranspose3d = _lazy_conv_transpose("LazyConvTranspose3d", ConvTranspose3d, 3)


class _LazyNormBase(LazyModuleMixin):
    def __init__(self, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _tensor(0, dtype=int64)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()  # type: ignore[misc]

    def initialize_parameters(self, input: Tensor) -> None:  # type: ignore[override]
        if not self.has_uninitialized_params():
            return
        self.num_features = input.shape[1]
        if self.affine:
            self.weight.materialize((self.num_features,))
            if self.bias is not None:
                self.bias.materialize((self.num_features,))
        if self.track_running_stats:
            self.running_mean.materialize((self.num_features,))
            self.running_var.materialize((self.num_features,))
        self.reset_parameters()


def _lazy_norm(name: str, base: type) -> type:
    doc = (f"`{base.__name__}` whose ``num_features`` is ``input.shape[1]`` of the first call.\n"
           f"\n    Mirrors: ``torch.nn.{name}``.\n    ")
    return type(name, (_LazyNormBase, base), {
        "cls_to_become": base, "__doc__": doc, "__module__": __name__, "__qualname__": name})


LazyBatchNorm1d = _lazy_norm("LazyBatchNorm1d", BatchNorm1d)
LazyBatchNorm2d = _lazy_norm("LazyBatchNorm2d", BatchNorm2d)
LazyBatchNorm3d = _lazy_norm("LazyBatchNorm3d", BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm("LazyInstanceNorm1d", InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm("LazyInstanceNorm2d", InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm("LazyInstanceNorm3d", InstanceNorm3d)

publish("hookgrad.nn.modules.linear", globals(), ["LazyLinear"])
publish("hookgrad.nn.modules.conv", globals(), [n for n in __all__ if "Conv" in n])
publish("hookgrad.nn.modules.batchnorm", globals(), [n for n in __all__ if "BatchNorm" in n])
publish("hookgrad.nn.modules.instancenorm", globals(),
        [n for n in __all__ if "InstanceNorm" in n])
# The private bases at PyTorch's paths (not in __all__, as there): tools test isinstance on them.
for _base, _path in ((_LazyConvXdMixin, "hookgrad.nn.modules.conv"),
                     (_LazyNormBase, "hookgrad.nn.modules.batchnorm")):
    _base.__module__ = _path
    setattr(importlib.import_module(_path), _base.__name__, _base)
