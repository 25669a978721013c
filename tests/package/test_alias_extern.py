"""A packaged module that does `import torch` under the alias is externed like `hookgrad`, and the
archive loads and runs under the alias (torch.package externs torch implicitly the same way)."""

from __future__ import annotations

import hookgrad
from hookgrad.package import PackageExporter, PackageImporter
from hookgrad.testing._as_torch import as_torch

SOURCE = "import torch\n\n\ndef double_relu(x):\n    return torch.relu(x) * 2\n"


def test_import_torch_under_the_alias_is_an_implicit_extern(tmp_path):
    seen = []
    path = tmp_path / "alias.pt"
    with as_torch():
        with PackageExporter(str(path)) as exp:
            exp.register_extern_hook(lambda e, name: seen.append(name))
            exp.save_source_string("uses_torch", SOURCE)
        assert "torch" in exp.externed_modules() and "torch" in seen
        mod = PackageImporter(str(path)).import_module("uses_torch")
        out = mod.double_relu(hookgrad.tensor([-1.0, 2.0]))
    assert out.tolist() == [0.0, 4.0]


def test_without_the_alias_torch_is_not_implicitly_externed(tmp_path):
    # The real torch is another library: it stays subject to the user's rules, as any module.
    exp = PackageExporter(str(tmp_path / "plain.pt"))
    assert exp._can_implicitly_extern("torch") is False
    assert exp._can_implicitly_extern("hookgrad.nn") is True
    exp.close()
