"""``hookgrad package inspect ARCHIVE``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hookgrad.cli import main
from tests.package.conftest import package_lib

pytestmark = pytest.mark.filterwarnings("ignore:TypedStorage is deprecated:UserWarning")


def _write(lib, path):
    with lib.pkg.PackageExporter(str(path)) as exp:
        exp.extern("module_a")
        exp.mock("mockme")
        exp.intern(["package_b.**", "uses_mockme"])
        exp.save_source_string("foo", "import package_b\nimport uses_mockme\n")
        exp.save_pickle("res", "w.pkl", lib.lib.ones(2))


@pytest.mark.parametrize("writer", ["hookgrad", "torch"])
def test_inspect_prints_tree_and_actions(writer, tmp_path, capsys):
    lib = package_lib(writer)
    path = tmp_path / "model.pt"
    _write(lib, path)
    assert main(["package", "inspect", str(path)]) == 0
    out = capsys.readouterr().out
    tree = str(lib.pkg.PackageImporter(str(path)).file_structure())
    assert out.startswith(tree.rstrip("\n") + "\n")
    assert "interned (5): foo, package_b, package_b.extra, package_b.helper, uses_mockme\n" in out
    assert "mocked (1): mockme\n" in out
    externed = [line for line in out.splitlines() if line.startswith("externed")][0]
    assert "module_a" in externed and "json" in externed and "os" in externed


def test_inspect_does_not_run_packaged_code(tmp_path, capsys):
    lib = package_lib("hookgrad")
    path = tmp_path / "evil.pt"
    marker = tmp_path / "ran"
    with lib.pkg.PackageExporter(str(path)) as exp:
        exp.save_source_string("evil", f"open({str(marker)!r}, 'w').close()\n",
                               dependencies=False)
    assert main(["package", "inspect", str(path)]) == 0
    assert "interned (1): evil" in capsys.readouterr().out and not marker.exists()


@pytest.mark.parametrize("content", [None, b"", b"not an archive", b"PK\x03\x04 truncated"])
def test_missing_or_bad_archive_is_one_line_and_exit_2(tmp_path, capsys, content):
    path = tmp_path / "bad.pt"
    if content is not None:
        path.write_bytes(content)
    assert main(["package", "inspect", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hookgrad package inspect: error: ")


def test_console_entry_point(tmp_path):
    path = tmp_path / "m.pt"
    _write(package_lib("hookgrad"), path)
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-m", "hookgrad", "package", "inspect", str(path)],
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert "mocked (1): mockme" in proc.stdout
