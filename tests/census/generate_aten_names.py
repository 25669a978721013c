"""Write ``hookgrad/utils/aten_op_names.txt``: every ATen operator and overload name of the
oracle PyTorch (``python3 -m tests.census.generate_aten_names``), one op per line as
``name overload overload ...`` (``default`` for the unnamed overload), sorted."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TARGET = Path(__file__).resolve().parents[2] / "hookgrad" / "utils" / "aten_op_names.txt"


def aten_names() -> dict[str, list[str]]:
    import torch  # the oracle

    table: dict[str, set[str]] = defaultdict(set)
    for full in torch._C._dispatch_get_all_op_names():
        ns, _, rest = full.partition("::")
        if ns != "aten":
            continue
        name, _, overload = rest.partition(".")
        table[name].add(overload or "default")
    return {name: sorted(table[name]) for name in sorted(table)}


def render(table: dict[str, list[str]]) -> str:
    return "".join(f"{name} {' '.join(ovs)}\n" for name, ovs in table.items())


if __name__ == "__main__":
    TARGET.write_text(render(aten_names()))
    print(f"wrote {TARGET}")
