"""``importlib.resources`` support for packages loaded from an archive."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any


class PackageResourceReader:
    """The ``importlib.abc.ResourceReader`` of one package of a `PackageImporter`."""

    def __init__(self, importer: Any, fullname: str) -> None:
        self.importer = importer
        self.fullname = fullname

    def open_resource(self, resource: str) -> io.BytesIO:
        return io.BytesIO(self.importer.load_binary(self.fullname, resource))

    def resource_path(self, resource: str) -> str:
        reader = self.importer.zip_reader
        directory = getattr(reader, "directory", None)
        rel = os.path.join(self.fullname.replace(".", "/"), resource)
        if directory is not None and reader.has_record(rel):
            return os.path.join(directory, rel)
        raise FileNotFoundError

    def is_resource(self, name: str) -> bool:
        path = self.importer._zipfile_path(self.fullname, name)
        return self.importer.zip_reader.has_record(path)

    def contents(self) -> Iterator[str]:
        base = PurePosixPath(self.importer._zipfile_path(self.fullname))
        seen = set()
        for filename in self.importer.zip_reader.get_all_records():
            try:
                relative = PurePosixPath(filename).relative_to(base)
            except ValueError:
                continue
            first = relative.parts[0]
            if len(relative.parts) == 1:
                yield first
            elif first not in seen:
                seen.add(first)
                yield first
