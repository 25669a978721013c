"""Where a hookgrad class lives in PyTorch, for pickles both libraries read.

`save` pickles a hookgrad class or function under PyTorch's path (``hookgrad.nn.Linear`` as
``torch.nn.modules.linear.Linear``) so ``torch.load(weights_only=False)`` finds PyTorch's class;
loading maps ``torch.*`` paths back to hookgrad's objects. The rule is "replace the leading
``hookgrad`` by ``torch``"; `_DIFFERENT` lists the classes whose file differs from PyTorch's
(a test checks the table against PyTorch for every public class of ``hookgrad.nn``,
``hookgrad.optim`` and ``hookgrad``).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

__all__ = ["torch_path", "resolve_torch"]

# "hookgrad.module:Qualname" -> "torch.module:Qualname" where the rule above does not hold:
# private and core classes written by hand, and the public classes of every module both
# libraries have, generated from PyTorch into class_paths.txt (tests/census/generate_class_paths.py)
HAND_WRITTEN = {
    "hookgrad._backend:device": "torch:device",
    "hookgrad._dtypes:Size": "torch:Size",
    "hookgrad._dtypes:dtype": "torch:dtype",
    "hookgrad._legacy:layout": "torch:layout",
    "hookgrad._legacy:memory_format": "torch:memory_format",
    "hookgrad._storage:TypedStorage": "torch.storage:TypedStorage",
    "hookgrad._storage:UntypedStorage": "torch.storage:UntypedStorage",
    "hookgrad._tensor:Tensor": "torch:Tensor",
    "hookgrad.nn.modules.batchnorm3d:BatchNorm3d": "torch.nn.modules.batchnorm:BatchNorm3d",
    "hookgrad.nn.modules.batchnorm3d:SyncBatchNorm": "torch.nn.modules.batchnorm:SyncBatchNorm",
    "hookgrad.nn.modules.conv3d:Conv3d": "torch.nn.modules.conv:Conv3d",
    "hookgrad.nn.modules.conv3d:ConvTranspose3d": "torch.nn.modules.conv:ConvTranspose3d",
    "hookgrad.nn.modules.data_parallel:DataParallel": "torch.nn.parallel.data_parallel:DataParallel",
    "hookgrad.nn.modules.nonlinearity:CELU": "torch.nn.modules.activation:CELU",
    "hookgrad.nn.modules.nonlinearity:ELU": "torch.nn.modules.activation:ELU",
    "hookgrad.nn.modules.nonlinearity:GELU": "torch.nn.modules.activation:GELU",
    "hookgrad.nn.modules.nonlinearity:GLU": "torch.nn.modules.activation:GLU",
    "hookgrad.nn.modules.nonlinearity:Hardshrink": "torch.nn.modules.activation:Hardshrink",
    "hookgrad.nn.modules.nonlinearity:Hardsigmoid": "torch.nn.modules.activation:Hardsigmoid",
    "hookgrad.nn.modules.nonlinearity:Hardswish": "torch.nn.modules.activation:Hardswish",
    "hookgrad.nn.modules.nonlinearity:Hardtanh": "torch.nn.modules.activation:Hardtanh",
    "hookgrad.nn.modules.nonlinearity:LeakyReLU": "torch.nn.modules.activation:LeakyReLU",
    "hookgrad.nn.modules.nonlinearity:LogSigmoid": "torch.nn.modules.activation:LogSigmoid",
    "hookgrad.nn.modules.nonlinearity:LogSoftmax": "torch.nn.modules.activation:LogSoftmax",
    "hookgrad.nn.modules.nonlinearity:Mish": "torch.nn.modules.activation:Mish",
    "hookgrad.nn.modules.nonlinearity:PReLU": "torch.nn.modules.activation:PReLU",
    "hookgrad.nn.modules.nonlinearity:ReLU": "torch.nn.modules.activation:ReLU",
    "hookgrad.nn.modules.nonlinearity:ReLU6": "torch.nn.modules.activation:ReLU6",
    "hookgrad.nn.modules.nonlinearity:SELU": "torch.nn.modules.activation:SELU",
    "hookgrad.nn.modules.nonlinearity:SiLU": "torch.nn.modules.activation:SiLU",
    "hookgrad.nn.modules.nonlinearity:Sigmoid": "torch.nn.modules.activation:Sigmoid",
    "hookgrad.nn.modules.nonlinearity:Softmax": "torch.nn.modules.activation:Softmax",
    "hookgrad.nn.modules.nonlinearity:Softmin": "torch.nn.modules.activation:Softmin",
    "hookgrad.nn.modules.nonlinearity:Softplus": "torch.nn.modules.activation:Softplus",
    "hookgrad.nn.modules.nonlinearity:Softshrink": "torch.nn.modules.activation:Softshrink",
    "hookgrad.nn.modules.nonlinearity:Softsign": "torch.nn.modules.activation:Softsign",
    "hookgrad.nn.modules.nonlinearity:Tanh": "torch.nn.modules.activation:Tanh",
    "hookgrad.nn.modules.nonlinearity:Tanhshrink": "torch.nn.modules.activation:Tanhshrink",
    "hookgrad.nn.modules.nonlinearity:Threshold": "torch.nn.modules.activation:Threshold",
    "hookgrad.nn.modules.normalization:BatchNorm1d": "torch.nn.modules.batchnorm:BatchNorm1d",
    "hookgrad.nn.modules.normalization:BatchNorm2d": "torch.nn.modules.batchnorm:BatchNorm2d",
    "hookgrad.nn.modules.pooling3d:AdaptiveAvgPool3d": "torch.nn.modules.pooling:AdaptiveAvgPool3d",
    "hookgrad.nn.modules.pooling3d:AdaptiveMaxPool1d": "torch.nn.modules.pooling:AdaptiveMaxPool1d",
    "hookgrad.nn.modules.pooling3d:AdaptiveMaxPool2d": "torch.nn.modules.pooling:AdaptiveMaxPool2d",
    "hookgrad.nn.modules.pooling3d:AdaptiveMaxPool3d": "torch.nn.modules.pooling:AdaptiveMaxPool3d",
    "hookgrad.nn.modules.pooling3d:AvgPool3d": "torch.nn.modules.pooling:AvgPool3d",
    "hookgrad.nn.modules.pooling3d:MaxPool3d": "torch.nn.modules.pooling:MaxPool3d",
    "hookgrad.nn.modules.pooling3d:MaxUnpool1d": "torch.nn.modules.pooling:MaxUnpool1d",
    "hookgrad.nn.modules.pooling3d:MaxUnpool2d": "torch.nn.modules.pooling:MaxUnpool2d",
    "hookgrad.nn.modules.pooling3d:MaxUnpool3d": "torch.nn.modules.pooling:MaxUnpool3d",
    "hookgrad.nn.modules.transformer_decoder:Transformer": "torch.nn.modules.transformer:Transformer",
    "hookgrad.nn.modules.transformer_decoder:TransformerDecoder": "torch.nn.modules.transformer:TransformerDecoder",
    "hookgrad.nn.modules.transformer_decoder:TransformerDecoderLayer": "torch.nn.modules.transformer:TransformerDecoderLayer",
    "hookgrad.nn.modules._backward_hook:_WrappedHook": "torch.nn.modules.module:_WrappedHook",
    "hookgrad.nn.modules._state_dict:_IncompatibleKeys":
        "torch.nn.modules.module:_IncompatibleKeys",
    "hookgrad.nn.modules.activation:NonDynamicallyQuantizableLinear":
        "torch.nn.modules.linear:NonDynamicallyQuantizableLinear",
    "hookgrad.nn.modules.normalization:_NormBase": "torch.nn.modules.batchnorm:_NormBase",
    "hookgrad.nn.modules.normalization:_BatchNorm": "torch.nn.modules.batchnorm:_BatchNorm",
    "hookgrad.nn.modules.pooling3d:_MaxUnpoolNd": "torch.nn.modules.pooling:_MaxUnpoolNd",
    "hookgrad._functional.random:Generator": "torch._C:Generator",
}


def _generated() -> dict[str, str]:
    text = (Path(__file__).with_name("class_paths.txt")).read_text(encoding="utf-8")
    return dict(line.split() for line in text.splitlines() if line and not line.startswith("#"))


_DIFFERENT = {**_generated(), **HAND_WRITTEN}
_BACK = {v: k for k, v in _DIFFERENT.items()}


def torch_path(module: str, qualname: str) -> tuple[str, str]:
    """PyTorch's ``(module, qualname)`` for a hookgrad object's; others are returned as given."""
    hit = _DIFFERENT.get(f"{module}:{qualname}")
    if hit is not None:
        mod, _, name = hit.partition(":")
        return mod, name
    if module == "hookgrad" or module.startswith("hookgrad."):
        return "torch" + module[len("hookgrad"):], qualname
    return module, qualname


def _getattr_path(obj: Any, qualname: str) -> Any:
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def resolve_torch(module: str, qualname: str) -> Any:
    """hookgrad's object for PyTorch's ``module.qualname``.

    Raises:
        AttributeError: hookgrad has no counterpart (ModuleNotFoundError for a module).
    """
    hit = _BACK.get(f"{module}:{qualname}")
    if hit is not None:
        module, _, qualname = hit.partition(":")
    else:
        module = "hookgrad" + module[len("torch"):]
    try:
        return _getattr_path(importlib.import_module(module), qualname)
    except (ImportError, AttributeError):
        pass
    for namespace in ("hookgrad.nn", "hookgrad.optim", "hookgrad"):
        if module.startswith(namespace):
            try:
                return _getattr_path(importlib.import_module(namespace), qualname)
            except AttributeError:
                continue
    raise AttributeError(f"hookgrad has no counterpart of {module.replace('hookgrad', 'torch', 1)}"
                         f".{qualname}")
