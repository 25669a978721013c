"""``hookgrad.package``: hermetic archives of code, pickled objects and resources.

A mirror of ``torch.package``: `PackageExporter` writes a model together with the Python source
it needs (interned), the names of modules the loading process must provide (externed), stubs
for modules it should not need (mocked), and refuses modules it must not touch (denied);
``register_extern_hook`` / ``register_mock_hook`` / ``register_intern_hook`` observe every
decision. `PackageImporter` loads such an archive in a private module namespace.

Tensors are stored as ``.npy`` members (never pickled arrays). Loading an archive runs its
code: open only archives you trust; `hookgrad.load` reads data-only checkpoints without
running anything.
"""

from hookgrad.package._directory import Directory
from hookgrad.package._errors import EmptyMatchError, PackagingError, PackagingErrorReason
from hookgrad.package._glob import GlobGroup
from hookgrad.package._importers import (
    Importer,
    ObjMismatchError,
    ObjNotFoundError,
    OrderedImporter,
    sys_importer,
)
from hookgrad.package.analyze import is_from_package
from hookgrad.package.package_exporter import PackageExporter
from hookgrad.package.package_importer import PackageImporter

__all__ = [
    "PackageExporter", "PackageImporter", "PackagingError", "PackagingErrorReason",
    "EmptyMatchError", "GlobGroup", "Importer", "OrderedImporter", "sys_importer",
    "ObjNotFoundError", "ObjMismatchError", "Directory", "is_from_package",
]
