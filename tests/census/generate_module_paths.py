"""Regenerate ``module_paths.txt``: every public module path of the installed PyTorch.

``python3 -m tests.census.generate_module_paths`` (with the oracle, torch==2.13.0). A path is
public when no part after ``torch`` starts with an underscore. `test_module_paths` reads the
file (no torch needed) and checks that each path imports as ``hookgrad...`` or is listed, with
its reason, in ``module_absent.txt``.
"""

from __future__ import annotations

import pkgutil
from pathlib import Path

OUT = Path(__file__).resolve().parent / "module_paths.txt"


def public_paths() -> list[str]:
    import torch

    paths = []
    for info in pkgutil.walk_packages(torch.__path__, "torch.", onerror=lambda _n: None):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            paths.append(info.name)
    return sorted(set(paths))


if __name__ == "__main__":
    paths = public_paths()
    OUT.write_text("".join(p + "\n" for p in paths))
    print(f"{len(paths)} module paths -> {OUT}")
