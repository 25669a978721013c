"""Regenerate ``surface.json``: PyTorch's public surface, names per module, from the installed oracle.

Run ``python3 -m tests.census.generate`` with the oracle (torch==2.13.0) installed. The scope is the
one named in issue 21 and in docs/census.md: each entry maps a torch module path (or a class, for
``torch.Tensor`` and a few enum-like classes) to the names it exposes. The census test reads the
JSON file only, so it runs without torch.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import sys
import typing
import warnings
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "surface.json"

# Modules whose whole public namespace is in scope.
MODULES = [
    "torch", "torch.nn", "torch.nn.modules", "torch.nn.functional", "torch.nn.init",
    "torch.nn.parameter", "torch.nn.utils", "torch.linalg", "torch.special", "torch.autograd",
    "torch.autograd.anomaly_mode", "torch.autograd.forward_ad", "torch.autograd.function",
    "torch.autograd.functional", "torch.autograd.grad_mode", "torch.autograd.gradcheck",
    "torch.autograd.graph", "torch.autograd.profiler", "torch.autograd.variable",
    "torch.optim", "torch.optim.optimizer", "torch.optim.lr_scheduler", "torch.utils.data",
    "torch.utils.data.distributed", "torch.utils.data.dataloader", "torch.utils.data.dataset",
    "torch.utils.data.sampler", "torch.utils.data._utils.collate", "torch.utils.hooks",
    "torch.utils.checkpoint", "torch.distributed", "torch.overrides", "torch.testing",
    "torch.backends", "torch.backends.cuda", "torch.backends.cudnn", "torch.backends.mps",
    "torch.backends.mkldnn", "torch.backends.mkl", "torch.backends.openmp", "torch.accelerator",
    "torch.amp", "torch.cuda.amp", "torch.onnx",
]
# Classes whose public attributes are in scope (methods, properties, enum members).
CLASSES = ["torch.Tensor", "torch.distributed.Backend", "torch.distributed.ReduceOp",
           "torch.nn.Module", "torch.optim.Optimizer"]
# Namespaces where only the part tools reach for is in scope (the rest is CUDA-only or internal).
CURATED = {
    "torch.cuda": [
        "is_available", "device_count", "current_device", "set_device", "device",
        "get_device_name", "get_device_capability", "get_device_properties", "synchronize",
        "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
        "max_memory_reserved", "reset_peak_memory_stats", "manual_seed", "manual_seed_all",
        "seed", "seed_all", "initial_seed", "get_rng_state", "set_rng_state",
        "get_rng_state_all", "set_rng_state_all", "is_initialized", "init", "is_bf16_supported",
        "amp", "nvtx", "Stream", "Event", "stream", "current_stream", "default_stream",
        "device_of", "memory_stats", "memory_summary", "OutOfMemoryError", "_is_compiled",
    ],
    "torch._C": [
        "_log_api_usage_once", "_get_tracing_state", "_set_grad_enabled", "_is_torch_function_enabled",
        "_disabled_torch_function_impl", "_get_cudnn_enabled", "_set_cudnn_enabled",
        "_get_default_device", "_functions", "_autograd", "_nn", "_VariableFunctions",
        "Generator", "_EngineBase", "_ImperativeEngine", "_TensorBase", "TensorBase",
        "_FunctionBase", "_LinAlgError", "_get_privateuse1_backend_name",
        "_cuda_getDeviceCount", "_set_autograd_fallback_mode", "_get_autograd_fallback_mode",
        "DisableTorchFunctionSubclass", "DisableTorchFunction", "_has_storage",
        "_get_cpp_backtrace", "ScriptFunction", "_jit_set_profiling_executor",
    ],
    # Settable backend flags live on module subclasses (properties), invisible to dir(module).
    "torch.backends.cudnn": ["enabled", "benchmark", "deterministic", "allow_tf32",
                             "benchmark_limit", "is_available", "version", "flags"],
    "torch.backends.mkldnn": ["enabled", "deterministic", "is_available", "flags"],
    "torch.backends.cuda.matmul": ["allow_tf32", "allow_fp16_reduced_precision_reduction",
                                   "allow_bf16_reduced_precision_reduction"],
}
# Files of PyTorch's own Python sources that must import and run under the alias: every
# torch name they reach (private ones included) is in scope.
SOURCE_DIRS = ["nn/utils"]

_STDLIB_TYPES = (typing.TypeVar,)


def _in_scope(mod: object, name: str, value: object) -> bool:
    """A public name of `mod` that PyTorch itself defines (not a stdlib or typing import)."""
    if name.startswith("_") or name == "TYPE_CHECKING":
        return False
    if inspect.ismodule(value):
        return value.__name__ == f"{mod.__name__}.{name}"
    if isinstance(value, _STDLIB_TYPES) or type(value).__module__ in ("typing", "__future__"):
        return False
    if inspect.isclass(value) or inspect.isroutine(value):
        owner = getattr(value, "__module__", None)
        return owner is None or owner.startswith("torch")
    return True


def module_names(path: str) -> list[str]:
    mod = importlib.import_module(path)
    return sorted(n for n in dir(mod) if _in_scope(mod, n, getattr(mod, n)))


def class_names(path: str) -> list[str]:
    modpath, _, attr = path.rpartition(".")
    obj = getattr(importlib.import_module(modpath), attr)
    # attributes inherited from a builtin base (``Backend`` is a ``str``) are Python's, not torch's
    inherited = {n for base in obj.__mro__[1:] if base.__module__ == "builtins" for n in dir(base)}
    return sorted(n for n in dir(obj) if not n.startswith("_") and n not in inherited)


def nn_module_files() -> dict[str, list[str]]:
    """Every class at its module path: ``torch.nn.modules.<file>.<Class>``."""
    import torch.nn.modules as mods
    out = {}
    for info in pkgutil.iter_modules(mods.__path__):
        if info.name.startswith("_"):
            continue
        path = f"torch.nn.modules.{info.name}"
        mod = importlib.import_module(path)
        names = getattr(mod, "__all__", None) or module_names(path)
        out[path] = sorted(set(names))
    return out


def submodules(package: str) -> dict[str, list[str]]:
    pkg = importlib.import_module(package)
    out = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        if not info.name.startswith("_"):
            path = f"{package}.{info.name}"
            out[path] = module_names(path)
    return out


def _record(out: dict[str, set], chain: list[str]) -> None:
    import torch
    obj, mod = torch, "torch"
    for part in chain[1:]:
        if not hasattr(obj, part):
            return
        nxt = getattr(obj, part)
        if inspect.ismodule(nxt) and nxt.__name__ == f"{mod}.{part}":
            obj, mod = nxt, nxt.__name__
            continue
        out.setdefault(mod, set()).add(part)
        return


def _chain(node: ast.AST) -> list[str]:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return parts[::-1]


def source_names() -> dict[str, set]:
    """Names PyTorch's own sources in SOURCE_DIRS reach through ``torch.`` or ``from torch...``."""
    import torch
    root = Path(torch.__file__).parent
    out: dict[str, set] = {}
    for sub in SOURCE_DIRS:
        for file in sorted((root / sub).glob("*.py")):
            for node in ast.walk(ast.parse(file.read_text())):
                if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Store):
                    chain = _chain(node)
                    if chain and chain[0] == "torch":
                        _record(out, chain)
                elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("torch"):
                    for alias in node.names:
                        _record(out, [*node.module.split("."), alias.name])
    return out


def build() -> dict[str, list[str]]:
    import torch
    surface: dict[str, set] = {}
    for path in MODULES:
        surface[path] = set(module_names(path))
    surface.update({k: set(v) for k, v in nn_module_files().items()})
    surface.update({k: set(v) for k, v in submodules("torch.nn.utils").items()})
    for path in CLASSES:
        surface[path] = set(class_names(path))
    for path, names in CURATED.items():
        modpath, _, attr = path.rpartition(".")
        try:
            mod = importlib.import_module(path)
        except ImportError:  # an object, not a module (backends.cuda.matmul)
            mod = getattr(importlib.import_module(modpath), attr)
        surface[path] = {n for n in names if hasattr(mod, n)}
    for path, names in source_names().items():
        surface.setdefault(path, set()).update(names)
    return {"_torch_version": [torch.__version__],
            **{k: sorted(v) for k, v in sorted(surface.items())}}


def main() -> None:
    warnings.simplefilter("ignore")  # deprecated aliases warn when dir() walks them
    data = build()
    OUT.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")
    total = sum(len(v) for k, v in data.items() if not k.startswith("_"))
    print(f"wrote {OUT.relative_to(Path.cwd()) if OUT.is_relative_to(Path.cwd()) else OUT}: "
          f"{len(data) - 1} namespaces, {total} names (torch {data['_torch_version'][0]})",
          file=sys.stderr)


if __name__ == "__main__":
    main()
