"""Packaging errors: the reasons, `PackagingError` (all problems at once) and `EmptyMatchError`."""

from __future__ import annotations

import io
from collections import defaultdict
from enum import Enum
from typing import Any

# Modules of the standard library that are never externed implicitly: they give packaged code
# system-level access, so the user has to extern them on purpose.
DISALLOWED_MODULES = ("sys", "io")


class PackagingErrorReason(Enum):
    """Why a module could not be packaged; the values are the texts PyTorch prints.

    Mirrors: ``torch.package.package_exporter.PackagingErrorReason``.
    """

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}.{self.name}>"

    # PyTorch's product name stays in this one text so ported assertEqual tests pass (spec 7.2).
    IS_EXTENSION_MODULE = ("Module is a C extension module. torch.package supports Python "
                           "modules only.")
    NO_DUNDER_FILE = "Module had no __file__ defined."
    SOURCE_FILE_NOT_FOUND = "Module had a __file__, but we could not find it in your filesystem."
    DEPENDENCY_RESOLUTION_FAILED = "Dependency resolution failed."
    NO_ACTION = "Module did not match against any action pattern. Extern, mock, or intern it."
    DENIED = "Module was denied by a pattern."
    MOCKED_BUT_STILL_USED = (
        "Module was mocked out, but is still being used in the package. Please intern or extern "
        "the mocked modules if objects are supposed to be in the package.")


class EmptyMatchError(Exception):
    """A pattern declared with ``allow_empty=False`` matched no module.

    Mirrors: ``torch.package.EmptyMatchError``.
    """


class PackagingError(Exception):
    """Every broken module of an export, grouped by reason, in one message.

    Mirrors: ``torch.package.PackagingError``.
    """

    def __init__(self, dependency_graph: Any, debug: bool = False) -> None:
        broken: dict[PackagingErrorReason, list[str]] = defaultdict(list)
        for name, attrs in dependency_graph.nodes.items():
            if attrs.get("error") is not None:
                broken[attrs["error"]].append(name)
        out = io.StringIO()
        out.write("\n")
        for reason, names in broken.items():
            out.write(f"* {reason.value}\n")
            for name in names:
                _write_module(out, name, dependency_graph, debug)
        if not debug:
            out.write("\nSet debug=True when invoking PackageExporter for a visualization of "
                      "where broken modules are coming from!\n")
        self.dependency_graph = dependency_graph
        super().__init__(out.getvalue())


def _write_module(out: io.StringIO, name: str, graph: Any, debug: bool) -> None:
    out.write(f"    {name}\n")
    context = graph.nodes[name].get("error_context")
    if context is not None:
        out.write(f"      Context: {context}\n")
    if name in DISALLOWED_MODULES:
        out.write(
            "      Note: While we usually use modules in the python standard library from the "
            f"local environment, `{name}` has a lot of system level access and therefore can "
            f"pose a security risk. We heavily recommend removing `{name}` from your packaged "
            "code. However, if that is not possible, add it to the extern list by calling "
            f'PackageExporter.extern("`{name}`")\n')
    if debug:
        out.write(f"      A path to {name}: {' -> '.join(graph.first_path(name))}\n")
