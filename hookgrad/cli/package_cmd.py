"""``hookgrad package inspect ARCHIVE``: what an archive holds, without running any of it.

Prints the member tree, then the modules that were interned (source in the archive), externed
(listed in ``.data/extern_modules``) and mocked (a mock stub in the archive). Only the ZIP
directory and the small text members are read; no packaged code is imported or executed.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from hookgrad.package._directory import directory_from_file_list
from hookgrad.package._zip_io import open_reader
from hookgrad.package.package_exporter import _MOCK_IMPL


def add_parser(sub: Any) -> None:
    """Register ``package`` (with its ``inspect`` subcommand) on the CLI's subparsers."""
    p = sub.add_parser("package", help="inspect hookgrad.package / torch.package archives",
                       description="Tools for package archives.")
    inner = p.add_subparsers(dest="package_command", required=True, metavar="{inspect}",
                             parser_class=type(p))
    i = inner.add_parser("inspect", help="print an archive's files and module actions",
                         description="Print the file structure of a package archive and which "
                                     "modules were interned, externed and mocked. Nothing in "
                                     "the archive is executed.")
    i.add_argument("archive", help="archive file (or unzipped archive folder)")
    p.set_defaults(subparser=p)
    i.set_defaults(subparser=i)


def _modules(records: list[str], read: Any) -> tuple[list[str], list[str]]:
    """``(interned, mocked)`` module names from the ``.py`` members."""
    interned, mocked = [], []
    for name in records:
        if not name.endswith(".py") or name.startswith(".data/") or name == "_mock.py":
            continue
        module = name[:-3].replace("/", ".")
        if module.endswith(".__init__"):
            module = module[: -len(".__init__")]
        (mocked if read(name) == _MOCK_IMPL.encode() else interned).append(module)
    return sorted(interned), sorted(mocked)


def inspect_archive(path: str) -> str:
    """The report printed by ``hookgrad package inspect``; raises on a missing/bad archive."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    filename, reader = open_reader(path)
    records = reader.get_all_records()
    externed = reader.get_record(".data/extern_modules").decode("utf-8").splitlines()
    interned, mocked = _modules(records, reader.get_record)
    lines = [str(directory_from_file_list(filename, records)).rstrip("\n")]
    for label, names in (("interned", interned), ("externed", [n for n in externed if n]),
                         ("mocked", mocked)):
        lines.append(f"{label} ({len(names)}): {', '.join(names) if names else '-'}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``hookgrad package <command>``: 0 on success, 2 with one line on stderr on error."""
    try:
        print(inspect_archive(args.archive))
    except (OSError, RuntimeError, ImportError, UnicodeDecodeError) as e:
        print(f"hookgrad package inspect: error: {e}", file=sys.stderr)
        return 2
    return 0
