"""Module-path census: every public PyTorch module path imports as ``hookgrad...`` or is listed.

``module_paths.txt`` holds PyTorch's public module paths (regenerate it with
``python3 -m tests.census.generate_module_paths``); ``module_absent.txt`` lists, by reason, the
ones hookgrad does not provide. ``import torch.x.y`` and ``from torch.x.y import z`` in a
program under the alias work exactly for the paths not listed there.
"""

from __future__ import annotations

import functools
import importlib
import types
import warnings
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _lines(name: str) -> list[str]:
    text = (HERE / name).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines()
            if line.strip() and not line.startswith("#")]


@functools.cache  # three tests ask; a path that fails to import is not retried
def _imports(path: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            importlib.import_module("hookgrad" + path[len("torch"):])
        except Exception:  # noqa: BLE001 - any failure means the path does not import
            return False
    return True


def _covered(path: str, absent: list[str]) -> bool:
    return any(path == a or path.startswith(a + ".") for a in absent)


def test_every_public_module_path_imports_or_is_listed():
    paths, absent = _lines("module_paths.txt"), _lines("module_absent.txt")
    assert len(paths) > 800
    missing = [p for p in paths if not _covered(p, absent) and not _imports(p)]
    assert missing == [], "import these under hookgrad or list them in module_absent.txt"


def test_no_listed_module_path_imports_now():
    paths, absent = _lines("module_paths.txt"), _lines("module_absent.txt")
    stale = [a for a in absent
             if all(_imports(p) for p in paths if _covered(p, [a]))]
    assert stale == [], "remove these from module_absent.txt: they import now"


def test_the_listed_paths_are_pytorch_paths():
    paths, absent = set(_lines("module_paths.txt")), _lines("module_absent.txt")
    assert [a for a in absent if a not in paths] == []


# families whose hookgrad modules are stand-ins or accelerator-only (their __all__ is not kept)
_ALL_SKIPPED = ("torch.ao", "torch.quantization", "torch.xpu", "torch.mtia", "torch.mps",
                "torch.distributed.rpc", "torch.library", "torch.backends.mps",
                "torch.backends.cuda", "torch.distributed.checkpoint", "torch.onnx")


@pytest.mark.oracle
def test_each_modules_all_lists_what_pytorchs_lists(torch):
    """``from torch.x import *`` imports the names PyTorch's ``__all__`` lists (those hookgrad
    has), and ``__all__`` names nothing the module lacks."""
    wrong = []
    for path in ["torch", *_lines("module_paths.txt")]:
        if path.startswith(_ALL_SKIPPED) or not _imports(path):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                theirs = importlib.import_module(path)
            except Exception:  # noqa: BLE001 - the oracle's own optional modules
                continue
            ours = importlib.import_module("hookgrad" + path[len("torch"):])
        if getattr(theirs, "__all__", None) is None or not getattr(ours, "__file__", None):
            continue
        listed = getattr(ours, "__all__", [])
        # (a submodule named in PyTorch's list is left out: importing it is its own check)
        lacking = [n for n in theirs.__all__ if hasattr(ours, n) and n not in listed
                   and not isinstance(getattr(theirs, n, None), types.ModuleType)]
        dangling = [n for n in listed if not hasattr(ours, n)]
        if lacking or dangling:
            wrong.append((path, lacking, dangling))
    assert wrong == []
