"""Find the torch names real libraries use: ``python3 -m tests.census.usage_scan DIR...``.

Reads every ``.py`` file under the given directories (installed libraries, outside their test
folders) and collects each ``import torch.x``, ``from torch.x import y`` and attribute chain on
a name bound to torch (``torch.a.b``, ``F.relu`` after ``import torch.nn.functional as F``).
Each chain is cut to its longest prefix that resolves in the oracle PyTorch (attributes of
tensors and modules are not names). ``--write`` merges the result into ``library_names.txt``;
the census test then checks that each of them resolves in hookgrad or is listed, with its
reason, in ``library_absent.txt``.
"""

from __future__ import annotations

import ast
import importlib
import os
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAMES = HERE / "library_names.txt"


def _aliases_and_refs(tree: ast.AST) -> set[str]:
    alias: dict[str, str] = {}
    refs: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "torch" or a.name.startswith("torch."):
                    refs.add(a.name)
                    alias[a.asname or "torch"] = a.name if a.asname else "torch"
        elif (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
              and (node.module == "torch" or node.module.startswith("torch."))):
            for a in node.names:
                if a.name != "*":
                    refs.add(f"{node.module}.{a.name}")
                    alias[a.asname or a.name] = f"{node.module}.{a.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain, cur = [], node
            while isinstance(cur, ast.Attribute):
                chain.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name) and cur.id in alias:
                refs.add(".".join([alias[cur.id], *reversed(chain)]))
    return refs


def scan(dirs: list[str]) -> set[str]:
    refs: set[str] = set()
    for root in dirs:
        for path, _, files in os.walk(root):
            if "/test" in path:
                continue
            for f in files:
                if f.endswith(".py"):
                    try:
                        tree = ast.parse(Path(path, f).read_text(errors="ignore"))
                    except SyntaxError:
                        continue
                    refs |= _aliases_and_refs(tree)
    return refs


def resolves(root: str, dotted: str) -> bool:
    """Whether ``root.<rest of dotted>`` names an object (importing modules as needed)."""
    parts = [root, *dotted.split(".")[1:]]
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except Exception:  # noqa: BLE001 - any import failure means "not this prefix"
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except Exception:  # noqa: BLE001
            return False
        return True
    return False


def torch_names(refs: set[str]) -> set[str]:
    out = set()
    for ref in refs:
        parts = ref.split(".")
        k = len(parts)
        while k > 1 and not resolves("torch", ".".join(parts[:k])):
            k -= 1
        if k > 1:
            out.add(".".join(parts[:k]))
    return out


def main(argv: list[str]) -> None:
    warnings.simplefilter("ignore")
    write = "--write" in argv
    found = torch_names(scan([a for a in argv if a != "--write"]))
    if write:
        old = set(NAMES.read_text().split()) if NAMES.exists() else set()
        NAMES.write_text("".join(f"{n}\n" for n in sorted(old | found)))
    missing = sorted(n for n in found if not resolves("hookgrad", n))
    print(f"{len(found)} torch names used; {len(missing)} do not resolve in hookgrad:")
    for n in missing:
        print("  " + n)


if __name__ == "__main__":
    main(sys.argv[1:])
