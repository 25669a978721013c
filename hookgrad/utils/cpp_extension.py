"""Building C++/CUDA extensions against the library. Mirrors: ``torch.utils.cpp_extension``.

A PyTorch extension is C++ compiled against PyTorch's headers and ATen tensors; hookgrad has
neither (its tensors are NumPy arrays), so nothing can be built against it. The module exists
because libraries import it at load time to offer optional fused kernels: the queries answer
as PyTorch's do on a machine without CUDA (``CUDA_HOME is None``, no include paths), and every
build entry point raises ``NotImplementedError`` (a ``RuntimeError``, the error a failed build
raises in PyTorch), so a library's usual ``except`` falls back to its Python code.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["get_default_build_root", "check_compiler_ok_for_platform",
           "get_compiler_abi_compatibility_and_version", "BuildExtension", "CppExtension",
           "CUDAExtension", "SyclExtension", "include_paths", "library_paths", "load",
           "load_inline", "is_ninja_available", "verify_ninja_availability",
           "remove_extension_h_precompiler_headers", "get_cxx_compiler", "check_compiler_is_gcc"]

CUDA_HOME: str | None = None
CUDNN_HOME: str | None = None
ROCM_HOME: str | None = None
SYCL_HOME: str | None = None
IS_HIP_EXTENSION = False
IS_WINDOWS = os.name == "nt"
IS_MACOS = False
IS_LINUX = not IS_WINDOWS
TORCH_LIB_PATH = ""
_NO_BUILD = ("hookgrad cannot build {what}: extensions are C++ compiled against PyTorch's "
             "ATen tensors, and hookgrad's tensors are NumPy arrays (use a Python fallback)")


def _refuse(what: str) -> NotImplementedError:
    return NotImplementedError(_NO_BUILD.format(what=what))


def load(name: str, sources: Any, *args: Any, **kwargs: Any) -> Any:
    """JIT-compile and import an extension. Mirrors: ``torch.utils.cpp_extension.load``."""
    raise _refuse(f"the extension {name!r}")


def load_inline(name: str, cpp_sources: Any, *args: Any, **kwargs: Any) -> Any:
    """Mirrors: ``torch.utils.cpp_extension.load_inline`` (see `load`)."""
    raise _refuse(f"the inline extension {name!r}")


def CppExtension(name: str, sources: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N802
    """Mirrors: ``torch.utils.cpp_extension.CppExtension`` (a setuptools Extension)."""
    raise _refuse(f"the C++ extension {name!r}")


def CUDAExtension(name: str, sources: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N802
    """Mirrors: ``torch.utils.cpp_extension.CUDAExtension``."""
    raise _refuse(f"the CUDA extension {name!r}")


def SyclExtension(name: str, sources: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N802
    """Mirrors: ``torch.utils.cpp_extension.SyclExtension``."""
    raise _refuse(f"the SYCL extension {name!r}")


class BuildExtension:
    """The setuptools ``build_ext`` command for extensions. Mirrors:
    ``torch.utils.cpp_extension.BuildExtension`` (running it refuses, see the module)."""

    @classmethod
    def with_options(cls, **options: Any) -> type:
        return cls

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise _refuse("extensions with BuildExtension")


def include_paths(device_type: str = "cpu", torch_include_dirs: bool = True) -> list[str]:
    """PyTorch's C++ header folders: none exist for hookgrad."""
    return []


def library_paths(device_type: str = "cpu", torch_include_dirs: bool = True) -> list[str]:
    """PyTorch's libraries to link: none exist for hookgrad."""
    return []


def get_default_build_root() -> str:
    """Mirrors: ``torch.utils.cpp_extension.get_default_build_root``."""
    return os.path.realpath(os.path.join(os.path.expanduser("~"), ".cache", "torch_extensions"))


def get_cxx_compiler() -> str:
    """The compiler PyTorch would use (``$CXX`` or ``c++``)."""
    return os.environ.get("CXX", "cl" if IS_WINDOWS else "c++")


def is_ninja_available() -> bool:
    """Whether the ``ninja`` build tool is on the PATH."""
    import shutil  # noqa: PLC0415

    return shutil.which("ninja") is not None


def verify_ninja_availability() -> None:
    """Mirrors: ``torch.utils.cpp_extension.verify_ninja_availability``."""
    if not is_ninja_available():
        raise RuntimeError("Ninja is required to load C++ extensions (pip install ninja to get it)")


def check_compiler_ok_for_platform(compiler: str) -> bool:
    """Mirrors: ``torch.utils.cpp_extension.check_compiler_ok_for_platform``."""
    return True


def check_compiler_is_gcc(compiler: str) -> bool:
    """Whether `compiler` names GCC (by its name; no process is started)."""
    return "g++" in os.path.basename(compiler) or "gcc" in os.path.basename(compiler)


def get_compiler_abi_compatibility_and_version(compiler: str) -> tuple[bool, Any]:
    """Mirrors: ``torch.utils.cpp_extension.get_compiler_abi_compatibility_and_version``."""
    raise _refuse("against an ABI (no PyTorch binary to match)")


def remove_extension_h_precompiler_headers() -> None:
    """Nothing to remove: no precompiled headers are ever made."""
