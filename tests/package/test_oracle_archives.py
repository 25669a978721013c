"""Whole exports compared with torch.package: members, extern list, graph, loaded values."""

from __future__ import annotations

import io
import zipfile

import package_a
import package_c
import pytest

from tests.package.conftest import package_lib


def _scenario(lib, protocol, nested):
    obj = {"f": package_c.make, "pa": package_a.PackageAObject(3), "star": package_c.__all__}
    if nested:
        obj.update(inner=package_c.make(), cls=package_c.Outer.Inner)
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.intern(["package_c", "package_b.**", "package_a.**"])
        exp.extern("module_a")
        exp.save_pickle("res", "o.pkl", obj, pickle_protocol=protocol)
        exp.save_source_string("star", "from package_c import *\nX = make().v\n")
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        names = sorted(n for n in zf.namelist() if not n.endswith("serialization_id"))
        externs = zf.read("archive/.data/extern_modules")
        version = zf.read("archive/.data/version")
    imp = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue()))
    loaded = imp.load_pickle("res", "o.pkl")
    values = (loaded["f"]().v, loaded["pa"].return_result(), imp.import_module("star").X)
    if nested:
        values += (type(loaded["inner"]).__qualname__, loaded["inner"].v)
    return dict(names=names, externs=externs, version=version,
                nodes=list(exp.dependency_graph.nodes), dot=exp.dependency_graph_string(),
                lists=(exp.externed_modules(), exp.interned_modules(), exp.mocked_modules()),
                values=values)


@pytest.mark.parametrize("protocol,nested", [(3, True), (4, False)])
def test_export_matches_torch(torch, protocol, nested):
    ours = _scenario(package_lib("hookgrad"), protocol, nested)
    theirs = _scenario(package_lib("torch"), protocol, nested)
    assert ours == theirs
    assert ours["externs"].startswith(b"os\njson\n") and ours["version"] == b"6\n"


def test_protocol_4_nested_classes_load():
    # torch.package's unpickler cannot load a protocol-4 nested qualname (it calls getattr
    # with the dotted name); hookgrad walks the qualname
    values = _scenario(package_lib("hookgrad"), 4, True)["values"]
    assert values == (4, "package_a", 4, "Outer.Inner", 4)


def test_packaged_module_attributes(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.intern(["package_b.**"])
        exp.extern("module_a")
        exp.save_module("package_b")
    imp = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue()))
    mod = imp.import_module("package_b.helper")
    assert mod.__spec__.origin == "<package_importer>" and mod.__spec__.name == "package_b.helper"
    assert mod.__loader__ is imp and mod.__cached__ is None
    assert mod.__builtins__["__import__"] == imp.__import__
    assert imp.modules["package_b.helper"] is mod and imp.import_module("package_b").helper is mod
    assert mod.extra is imp.import_module("package_b.extra")  # relative import, in the archive
