"""Regenerate ``hookgrad/_surface/torch_all.txt``: ``torch.__all__`` of the installed oracle.

``python3 -m tests.census.generate_torch_all``. ``hookgrad.__all__`` is that list, in PyTorch's
order, less the names hookgrad does not have (tools crawl ``torch.__all__`` to find every
public function, and ``from torch import *`` imports exactly it).
"""

from __future__ import annotations

from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "hookgrad" / "_surface" / "torch_all.txt"

if __name__ == "__main__":
    import torch

    OUT.write_text("".join(name + "\n" for name in torch.__all__))
    print(f"{len(torch.__all__)} names -> {OUT}")
