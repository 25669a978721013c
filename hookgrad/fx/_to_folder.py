"""`GraphModule.to_folder`: write a traced module out as an importable Python package.

The folder gets ``module.py`` (a class whose ``__init__`` rebuilds the children and whose
``forward`` is the generated code), ``__init__.py`` and ``state_dict.pt``. Children of the
common layer types are rebuilt from their repr; any other child is pickled beside the code
and loaded back (with a warning, as PyTorch warns).

Mirrors: ``torch.fx.GraphModule.to_folder``.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

__all__ = ["write_folder"]


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line if line.strip() else line for line in text.split("\n"))


def write_folder(gm: Any, folder: str | os.PathLike[str], module_name: str) -> None:
    from hookgrad import nn  # noqa: PLC0415 - the layer types rebuilt from their repr
    from hookgrad.serialization import save  # noqa: PLC0415

    folder = Path(folder)
    folder.mkdir(exist_ok=True)
    save(gm.state_dict(), folder / "state_dict.pt")
    tab = " " * 4
    lines = ["", "import hookgrad", "import hookgrad as torch", "",
             "from hookgrad.nn import *", f"class {module_name}(torch.nn.Module):",
             f"{tab}def __init__(self):", f"{tab * 2}super().__init__()"]
    by_repr = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.BatchNorm1d, nn.BatchNorm2d,
               nn.BatchNorm3d)
    pickled: list[str] = []
    for name, child in gm.named_children():
        if type(child) in by_repr:
            lines.append(f"{tab * 2}setattr(self, '{name}', {child!r})")
            continue
        path = folder / f"{name}.pt"
        save(child, path)
        pickled.append(name)
        summary = repr(child).replace("\r", " ").replace("\n", " ")
        lines.append(f"{tab * 2}setattr(self, '{name}', torch.load(r'{path}', "
                     f"weights_only=False)) # {summary}")
    for name, buffer in gm._buffers.items():
        if buffer is not None:
            lines.append(f"{tab * 2}self.register_buffer('{name}', torch.empty("
                         f"{list(buffer.shape)}, dtype={buffer.dtype}))")
    for name, param in gm._parameters.items():
        if param is not None:
            lines.append(f"{tab * 2}setattr(self, '{name}', torch.nn.Parameter(torch.empty("
                         f"{list(param.shape)}, dtype={param.dtype})))")
    lines.append(f"{tab * 2}self.load_state_dict(torch.load(r'{folder}/state_dict.pt'))")
    lines.append(_indent(gm.code, 4))
    (folder / "module.py").write_text("\n".join(lines) + "\n")
    (folder / "__init__.py").write_text("from .module import *")
    if pickled:
        warnings.warn("Was not able to save the following children modules as reprs -"
                      f"saved as pickled files instead: {pickled}", stacklevel=3)


