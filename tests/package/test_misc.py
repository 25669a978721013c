"""Archive introspection and importer behaviour (port of upstream test_misc.py, and more)."""

from __future__ import annotations

import importlib.resources
import inspect
import io
import platform
import sys
import zipfile

import package_a.inspect_me
import package_a.subpackage
import pytest

from tests.package.conftest import package_lib


def _export_b(lib, buf=None, **kw):
    buf = buf or io.BytesIO()
    with lib.pkg.PackageExporter(buf, **kw) as exp:
        exp.extern("module_a")
        exp.intern("package_b.**")
        exp.save_source_string("foo", "import package_b\nimport module_a\n")
        exp.save_text("package_b", "notes.txt", "some notes")
        exp.save_binary("package_b", "blob.bin", b"\x00\x01")
    return exp, buf


def test_file_structure_matches_torch(torch):
    trees = []
    for name in ("hookgrad", "torch"):
        lib = package_lib(name)
        imp = lib.pkg.PackageImporter(io.BytesIO(_export_b(lib)[1].getvalue()))
        trees.append((str(imp.file_structure()),
                      str(imp.file_structure(include=["**/*.py"], exclude="package_b/extra.py"))))
    assert trees[0] == trees[1]
    full, filtered = trees[0]
    assert full.startswith("\u2500\u2500\u2500 <binary>\n    \u251c\u2500\u2500 .data\n")
    assert "extra.py" not in filtered and "notes.txt" not in filtered


def test_file_structure_of_a_path_is_named_after_it(lib, tmp_path):
    path = tmp_path / "my_model.pt"
    _export_b(lib, buf=str(path))
    imp = lib.pkg.PackageImporter(str(path))
    assert imp.filename == str(path)
    assert str(imp.file_structure()).startswith(f"\u2500\u2500\u2500 {path}\n")
    # members live under the file's stem
    assert all(n.startswith("my_model/") for n in zipfile.ZipFile(path).namelist())


def test_has_file(lib):
    imp = lib.pkg.PackageImporter(io.BytesIO(_export_b(lib)[1].getvalue()))
    tree = imp.file_structure()
    assert tree.has_file("package_b/helper.py")
    assert tree.has_file("package_b")  # folders count too (spec amendment 1)
    assert not tree.has_file("package_b/nope.py")
    assert not tree.has_file("package_b/helper.py/x")


def test_python_version(lib):
    imp = lib.pkg.PackageImporter(io.BytesIO(_export_b(lib)[1].getvalue()))
    assert imp.python_version() == platform.python_version()


def test_exporter_content_lists_and_rdeps(lib):
    exp, _ = _export_b(lib)
    assert exp.externed_modules() == ["json", "module_a", "os"]
    assert exp.interned_modules() == ["foo", "package_b", "package_b.extra", "package_b.helper"]
    assert exp.mocked_modules() == [] and exp.denied_modules() == []
    assert exp.get_rdeps("module_a") == ["package_b", "foo"]
    assert exp.get_rdeps("not_there") == []


def test_dependency_graph_string_matches_torch(torch):
    outs = [_export_b(package_lib(n))[0].dependency_graph_string() for n in ("hookgrad", "torch")]
    assert outs[0] == outs[1]
    assert outs[0].startswith('digraph G {\nrankdir = LR;\nnode [shape=box];\n"foo" -> ')


def _graph(lib):
    from importlib import import_module

    graph = import_module(f"{lib.name}.package._digraph").DiGraph()
    for u, v in [("a", "b"), ("b", "c"), ("a", "c"), ("d", "c"), ("c", "e")]:
        graph.add_edge(u, v)
    return graph


def test_graph_queries_match_torch_on_one_letter_names(torch):
    # torch's all_paths iterates over the characters of its arguments (set(src)), so it only
    # works for one-character names; there both must agree
    ours, theirs = _graph(package_lib("hookgrad")), _graph(package_lib("torch"))
    assert ours.all_paths("a", "c") == theirs.all_paths("a", "c") == (
        'digraph G {\nrankdir = LR;\nnode [shape=box];\n"b" -> "c";\n"a" -> "c";\n'
        '"a" -> "b";\n}\n')
    assert ours.first_path("e") == theirs.first_path("e") == ["a", "c", "e"]
    assert ours.to_dot() == theirs.to_dot()
    assert list(ours.predecessors("c")) == list(theirs.predecessors("c"))


def test_all_paths_with_long_names():
    exp, _ = _export_b(package_lib("hookgrad"))
    assert exp.all_paths("foo", "os") == (
        'digraph G {\nrankdir = LR;\nnode [shape=box];\n"package_b.extra" -> "os";\n'
        '"package_b.helper" -> "package_b.extra";\n"package_b" -> "package_b.helper";\n'
        '"foo" -> "package_b";\n}\n')


def test_is_from_package(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.extern("module_a")
        exp.save_module("package_a")
        exp.save_source_string("foo", "import module_a")
        exp.save_pickle("obj", "obj.pkl", package_a.PackageAObject(1))
    imp = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue()))
    mod = imp.import_module("package_a")
    assert lib.pkg.is_from_package(mod)
    assert lib.pkg.is_from_package(imp.load_pickle("obj", "obj.pkl"))
    assert not lib.pkg.is_from_package(package_a)
    assert not lib.pkg.is_from_package(package_a.PackageAObject(1))
    assert not lib.pkg.is_from_package(imp.import_module("module_a"))  # externed


def test_inspect_class(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.save_module("package_a.inspect_me")
    imp = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue()))
    packaged = imp.import_module("package_a.inspect_me").Inspected
    assert packaged is not package_a.inspect_me.Inspected
    lines, _ = inspect.getsourcelines(packaged)
    assert lines == inspect.getsourcelines(package_a.inspect_me.Inspected)[0]
    assert inspect.getfile(packaged) == f"{imp.id()}.package_a/inspect_me.py"


def test_dunder_torch_package(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.save_source_string("foo", "def is_in_package():\n    return '__torch_package__' in "
                                      "globals()\n")
    mod = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue())).import_module("foo")
    assert mod.__torch_package__ is True and mod.is_in_package()
    if lib.name == "hookgrad":
        assert mod.__hookgrad_package__ is True


def test_std_lib_sys_hackery(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.save_module("package_a.std_sys_module_hacks")
        exp.save_source_string("t", "import typing\nimport typing.io\nimport typing.re\n"
                                    "x = typing.io\n")
    imp = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue()))
    module = imp.import_module("package_a.std_sys_module_hacks").Module()
    assert module.forward().endswith("test")
    assert imp.import_module("t").x is sys.modules["typing"].io


def test_mangling(lib):
    buf = _export_b(lib)[1]
    imp1 = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue()))
    imp2 = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue()))
    assert imp1.id() != imp2.id() and imp1.id().startswith(f"<{lib.prefix}_")
    m1, m2 = imp1.import_module("package_b.helper"), imp2.import_module("package_b.helper")
    assert m1 is not m2
    assert m1.__name__ == f"{imp1.id()}.package_b.helper"
    assert m1.__file__ == f"{imp1.id()}.package_b/helper.py"
    assert imp1.import_module(m1.__name__) is m1  # mangled names are accepted
    assert lib.mangling.is_mangled(m1.__name__) and not lib.mangling.is_mangled("package_b")
    assert lib.mangling.demangle(m1.__name__) == "package_b.helper"
    assert lib.mangling.demangle(imp1.id()) == ""
    assert lib.mangling.get_mangle_prefix(m1.__name__) == imp1.id()
    assert imp1.import_module("hookgrad_package_importer" if lib.name == "hookgrad"
                              else "torch_package_importer") is imp1


def test_extern_is_shared_and_allow_list(lib):
    imp = lib.pkg.PackageImporter(io.BytesIO(_export_b(lib)[1].getvalue()))
    assert imp.extern_modules == ["json", "module_a", "os"]
    assert imp.import_module("json") is sys.modules["json"]
    assert imp.import_module("numpy") is sys.modules["numpy"]  # implicit allow-list
    with pytest.raises(ModuleNotFoundError) as info:
        imp.import_module("csv")
    assert str(info.value) == (
        'No module named "csv" in self-contained archive "<binary>" and the module is also not '
        "in the list of allowed external modules: ['json', 'module_a', 'os']")
    assert "csv" not in imp.modules


def test_module_allowed(lib):
    buf = _export_b(lib)[1]
    with pytest.raises(ImportError, match="needs the external module 'module_a' but that module "
                                          "has been disallowed"):
        lib.pkg.PackageImporter(io.BytesIO(buf.getvalue()),
                                module_allowed=lambda name: name != "module_a")


def test_resources_and_get_source(lib):
    imp = lib.pkg.PackageImporter(io.BytesIO(_export_b(lib)[1].getvalue()))
    assert imp.load_text("package_b", "notes.txt") == "some notes"
    assert imp.load_binary("package_b", "blob.bin") == b"\x00\x01"
    assert imp.get_source("package_b.helper").startswith('"""A helper with a relative import')
    with pytest.raises(TypeError, match="'foo' is not a package"):
        imp.load_text("foo", "x.txt")
    pkg = imp.import_module("package_b")
    assert importlib.resources.files(pkg).joinpath("notes.txt").read_text() == "some notes"
    reader = imp.get_resource_reader("package_b")
    assert reader.is_resource("notes.txt") and not reader.is_resource("nope.txt")
    assert {"notes.txt", "blob.bin", "helper.py"} <= set(reader.contents())


def test_save_text_rejects_paths(lib):
    with lib.pkg.PackageExporter(io.BytesIO()) as exp:
        with pytest.raises(ValueError, match="'sub/a.txt' must be only a file name"):
            exp.save_text("res", "sub/a.txt", "x")


def test_writing_a_member_twice(lib):
    with lib.pkg.PackageExporter(io.BytesIO()) as exp:
        exp.save_text("res", "a.txt", "x")
        with pytest.raises(AssertionError, match="Tried to write file 'res/a.txt', but it "
                                                 "already exists in this archive"):
            exp.save_text("res", "a.txt", "y")


def test_exporter_argument_errors(lib):
    with pytest.raises(TypeError, match="importer arg should be an Importer or a sequence"):
        lib.pkg.PackageExporter(io.BytesIO(), importer=3)
    with lib.pkg.PackageExporter(io.BytesIO()) as exp:
        with pytest.raises(TypeError, match="save_module\\(\\) expects a string input"):
            exp.save_module(package_a)
        with pytest.raises(AssertionError, match="only supports pickle protocols 3 and 4, got 2"):
            exp.save_pickle("res", "x.pkl", 1, pickle_protocol=2)
    assert [exp.get_unique_id() for _ in range(3)] == ["0", "1", "2"]


@pytest.mark.parametrize("protocol", [3, 4])
def test_pickle_protocols_find_dependencies(lib, protocol):
    obj = package_a.PackageAObject(package_a.subpackage.PackageASubpackageObject())
    with lib.pkg.PackageExporter(io.BytesIO()) as exp:
        exp.intern("package_a.**")
        exp.save_pickle("obj", "obj.pkl", [obj, obj], pickle_protocol=protocol)
        assert exp.get_rdeps("package_a.subpackage") == ["<obj.obj.pkl>"]
        assert exp.interned_modules() == ["package_a", "package_a.subpackage"]


def test_directory_archive(lib, tmp_path):
    buf = _export_b(lib)[1]
    out = tmp_path / "unzipped"
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        zf.extractall(out)
    imp = lib.pkg.PackageImporter(str(out / "archive"))
    assert imp.import_module("package_b.helper").VALUE == 3
    reader = imp.get_resource_reader("package_b")
    assert reader.resource_path("notes.txt").endswith("notes.txt")


def test_save_source_file_directory(lib, tmp_path):
    root = tmp_path / "srcpkg"
    (root / "inner").mkdir(parents=True)
    (root / "__init__.py").write_text("from .inner import mod\n")
    (root / "inner" / "__init__.py").write_text("")
    (root / "inner" / "mod.py").write_text("VALUE = 5\n")
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.save_source_file("srcpkg", str(root))
    imp = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue()))
    assert imp.import_module("srcpkg").mod.VALUE == 5


def test_repackaging_keeps_demangled_names(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.intern("package_a.**")
        exp.save_pickle("obj", "obj.pkl", package_a.PackageAObject(2))
    imp = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue()))
    loaded = imp.load_pickle("obj", "obj.pkl")
    buf2 = io.BytesIO()
    with lib.pkg.PackageExporter(buf2, importer=(imp, lib.pkg.sys_importer)) as exp:
        exp.intern("package_a.**")
        exp.save_pickle("obj", "obj.pkl", loaded)
    imp2 = lib.pkg.PackageImporter(io.BytesIO(buf2.getvalue()))
    again = imp2.load_pickle("obj", "obj.pkl")
    assert again.obj == 2 and type(again).__module__ == f"{imp2.id()}.package_a"
    with pytest.raises(Exception, match="Can't pickle"):
        with lib.pkg.PackageExporter(io.BytesIO()) as exp:  # sys_importer alone cannot find it
            exp.intern("package_a.**")
            exp.save_pickle("obj", "obj.pkl", loaded)


def test_traceback_shows_packaged_source(lib):
    import traceback

    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.save_source_string("crash", "def go():\n    raise RuntimeError('from the archive')\n")
    imp = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue()))
    with pytest.raises(RuntimeError) as info:
        imp.import_module("crash").go()
    text = "".join(traceback.format_exception(info.value))
    assert f'File "{imp.id()}.crash.py", line 2, in go' in text
    assert "raise RuntimeError('from the archive')" in text


def test_obj_mismatch_error(lib):
    class Stray:  # looks like package_a.PackageAObject by name, but is another class
        pass

    Stray.__module__, Stray.__qualname__ = "package_a", "PackageAObject"
    with pytest.raises(lib.pkg.ObjMismatchError) as info:
        lib.pkg.sys_importer.get_name(Stray)
    assert str(info.value) == (
        "\n\nThe object provided is from 'package_a', which is coming from the current Python "
        "environment.\nHowever, when we import 'package_a', it's coming from the current Python "
        "environment.\nTo fix this, make sure this 'PackageExporter's importer lists "
        "'sys_importer' before 'sys_importer'.")
    with pytest.raises(lib.pkg.ObjNotFoundError, match="was not found as package_a.Nope"):
        lib.pkg.sys_importer.get_name(package_a.PackageAObject, "Nope")


def test_packaging_error_carries_the_graph(lib):
    with pytest.raises(lib.pkg.PackagingError) as info:
        with lib.pkg.PackageExporter(io.BytesIO()) as exp:
            exp.save_source_string("foo", "import module_a")
    graph = info.value.dependency_graph
    assert list(graph.nodes) == ["foo", "module_a"]
    assert graph.nodes["module_a"]["error"] is lib.reason.NO_ACTION


def test_save_source_file_single_file(lib, tmp_path):
    path = tmp_path / "single.py"
    path.write_text("import json\nVALUE = json.dumps([1])\n")
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.save_source_file("single", str(path))
    assert lib.pkg.PackageImporter(io.BytesIO(buf.getvalue())).import_module(
        "single").VALUE == "[1]"


def test_dunder_import_inside_packaged_code(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.intern("package_b.**")
        exp.extern("module_a")
        exp.save_source_string(
            "dyn", "mod = __import__('package_b.helper', fromlist=['VALUE'])\n"
                   "top = __import__('package_b.helper')\n"
                   "from package_b import *\n")
    mod = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue())).import_module("dyn")
    assert mod.mod.VALUE == 3 and mod.top.__name__.endswith(">.package_b")
    assert mod.result == "package_b"


def test_loaders_that_remap_files(lib):
    """The source is read from the file the module's loader names, not from ``__file__``."""
    import os
    from importlib.abc import MetaPathFinder
    from importlib.machinery import SourceFileLoader

    class RemappingLoader(SourceFileLoader):
        def get_filename(self, name):
            real = super().get_filename(name)
            if name != "module_a":
                return real
            return os.path.join(os.path.dirname(real), "module_a_remapped_path.py")

    class RemappingFinder(MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            if fullname != "module_a":
                return None
            for finder in sys.meta_path:
                if finder is not self and hasattr(finder, "find_spec"):
                    spec = finder.find_spec(fullname, path, target)
                    if spec is not None:
                        spec.loader = RemappingLoader(spec.loader.name, spec.loader.path)
                        return spec
            return None

    finder = RemappingFinder()
    saved = sys.modules.pop("module_a")
    sys.meta_path.insert(0, finder)
    try:
        buf = io.BytesIO()
        with lib.pkg.PackageExporter(buf) as exp:
            exp.save_module("module_a")
        imp = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue()))
        assert "remapped_path" in imp.get_source("module_a")
        assert imp.import_module("module_a").result == "module_a_remapped_path"
    finally:
        sys.meta_path.remove(finder)
        sys.modules["module_a"] = saved


def test_denied_modules_list(lib):
    with pytest.raises(lib.pkg.PackagingError), lib.pkg.PackageExporter(io.BytesIO()) as exp:
        exp.deny("package_a")
        exp.save_pickle("obj", "obj.pkl", package_a.PackageAObject(1))
        assert exp.denied_modules() == ["package_a"]


def test_packaged_code_reaches_its_importer(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.save_text("res", "hello.txt", "from the archive")
        exp.save_source_string(
            "reader", "import torch_package_importer\n"
                      "def read():\n"
                      "    return torch_package_importer.load_text('res', 'hello.txt')\n")
        if lib.name == "hookgrad":
            exp.save_source_string("reader2", "import hookgrad_package_importer as imp\n")
    imp = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue()))
    assert imp.import_module("reader").read() == "from the archive"
    if lib.name == "hookgrad":
        assert imp.import_module("reader2").imp is imp
