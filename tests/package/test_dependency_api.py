"""intern / extern / mock / deny (port of upstream test_dependency_api.py) on both libraries."""

from __future__ import annotations

import io
import sys
import types

import module_a
import package_a
import package_a.subpackage
import pytest

from tests.package.conftest import package_lib

# torch.package itself warns about its own use of TypedStorage
pytestmark = pytest.mark.filterwarnings("ignore:TypedStorage is deprecated:UserWarning")

def _reload(lib, buf):
    return lib.pkg.PackageImporter(io.BytesIO(buf.getvalue()))


def test_extern(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.extern(["package_a.subpackage", "module_a"])
        exp.save_source_string("foo", "import package_a.subpackage; import module_a")
    imp = _reload(lib, buf)
    assert imp.import_module("package_a.subpackage") is package_a.subpackage
    assert imp.import_module("module_a") is module_a
    package_a_im = imp.import_module("package_a")
    assert package_a_im is not package_a  # the parent is the archive's (empty) package
    assert package_a_im.subpackage is package_a.subpackage
    assert imp.import_module("foo").module_a is module_a


def test_extern_glob(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.extern(["package_a.*", "module_*"])
        exp.save_module("package_a")
        exp.save_source_string("test_module", "import package_a.subpackage\nimport module_a\n")
    imp = _reload(lib, buf)
    assert imp.import_module("package_a.subpackage") is package_a.subpackage
    assert imp.import_module("module_a") is module_a
    package_a_im = imp.import_module("package_a")
    assert package_a_im is not package_a
    assert package_a_im.result == "package_a"  # interned source, run again in the archive


@pytest.mark.parametrize("action", ["extern", "mock", "intern"])
def test_glob_allow_empty(lib, action):
    with pytest.raises(lib.pkg.EmptyMatchError, match=r"did not match any modules") as info:
        with lib.pkg.PackageExporter(io.BytesIO()) as exp:
            getattr(exp, action)("package_b.*", allow_empty=False)
            exp.save_module("package_a.subpackage")
    assert str(info.value) == (
        "Exporter did not match any modules to GlobGroup(include=package_b.*, exclude=()), "
        "which was marked as allow_empty=False")


def test_deny(lib):
    with pytest.raises(lib.pkg.PackagingError, match="denied") as info:
        with lib.pkg.PackageExporter(io.BytesIO()) as exp:
            exp.deny(["package_a.subpackage", "module_a"])
            exp.save_source_string("foo", "import package_a.subpackage")
    assert str(info.value) == (
        "\n* Module was denied by a pattern.\n    package_a.subpackage\n\nSet debug=True when "
        "invoking PackageExporter for a visualization of where broken modules are coming "
        "from!\n")


def test_deny_glob(lib):
    with pytest.raises(lib.pkg.PackagingError, match="denied"):
        with lib.pkg.PackageExporter(io.BytesIO()) as exp:
            exp.deny(["package_a.*", "module_*"])
            exp.save_source_string("test_module", "import package_a.subpackage\nimport module_a")


def test_deny_never_raises_empty_match(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.deny("nothing.**")
        exp.save_source_string("foo", "x = 1")
    assert _reload(lib, buf).import_module("foo").x == 1


def test_mock(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.mock(["package_a.subpackage", "module_a"])
        exp.save_source_string("foo", "import package_a.subpackage")
    imp = _reload(lib, buf)
    mocked = imp.import_module("package_a.subpackage")
    with pytest.raises(NotImplementedError, match="was mocked out"):
        mocked.result()
    with pytest.raises(NotImplementedError, match=r"being used in __call__"):
        mocked.leaf_function(1, 2)
    prefix = imp.id()
    expected = f"MockedObject({prefix}.package_a.subpackage.leaf_function)"
    assert repr(mocked.leaf_function) == expected
    assert package_a.subpackage.result == "package_a.subpackage"  # the real one is untouched


def test_mock_glob(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.mock(["package_a.*", "module*"])
        exp.save_module("package_a")
        exp.save_source_string("test_module", "import package_a.subpackage\nimport module_a")
    imp = _reload(lib, buf)
    sub = imp.import_module("package_a.subpackage")
    with pytest.raises(NotImplementedError, match="was mocked out"):
        sub.result()
    assert imp.import_module("package_a").result == "package_a"


@pytest.mark.parametrize("method", ["__add__", "__getitem__", "__len__", "__iter__", "__bool__"])
def test_mocked_object_refuses_dunders(lib, method):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.mock("mockme")
        exp.save_source_string("foo", "import mockme")
    thing = _reload(lib, buf).import_module("mockme").thing
    use = {"__add__": lambda: thing + 1, "__getitem__": lambda: thing[0],
           "__len__": lambda: len(thing), "__iter__": lambda: iter(thing),
           "__bool__": lambda: bool(thing)}[method]
    with pytest.raises(NotImplementedError, match=f"being used in {method}"):
        use()


def test_pickle_mocked(lib):
    obj2 = package_a.PackageAObject(package_a.subpackage.PackageASubpackageObject())
    with pytest.raises(lib.pkg.PackagingError) as info:
        with lib.pkg.PackageExporter(io.BytesIO()) as exp:
            exp.mock("package_a.subpackage")
            exp.intern("**")
            exp.save_pickle("obj", "obj.pkl", obj2)
    text = str(info.value)
    assert lib.reason.MOCKED_BUT_STILL_USED.value in text
    assert ("Object(s) '['PackageASubpackageObject']' from module `package_a.subpackage` was "
            "mocked out during packaging but is being used in resource - `obj.pkl` in package "
            "`obj`.") in text


def test_pickle_mocked_all(lib):
    obj2 = package_a.PackageAObject(package_a.subpackage.PackageASubpackageObject())
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.intern("package_a.**")
        exp.mock("**")  # the first matching rule wins: the classes are interned
        exp.save_pickle("obj", "obj.pkl", obj2)
    loaded = _reload(lib, buf).load_pickle("obj", "obj.pkl")
    assert loaded.return_result() == "package_a"
    assert type(loaded) is not package_a.PackageAObject


def test_allow_empty_with_error(lib):
    with pytest.raises(ModuleNotFoundError), lib.pkg.PackageExporter(io.BytesIO()) as exp:
        exp.extern("foo", allow_empty=False)
        exp.save_module("aodoifjodisfj")  # the import error wins over the empty match
        exp.save_source_string("bar", "import foo\n")


def test_implicit_intern(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.extern("module_a")  # package_a matches no rule, but save_module interns it
        exp.save_module("package_a")
        assert exp.interned_modules() == ["package_a"]
    assert _reload(lib, buf).import_module("package_a").result == "package_a"


INTERN_ERROR = ("\n* Module did not match against any action pattern. Extern, mock, or intern "
                "it.\n    package_a\n    package_a.subpackage\n\nSet debug=True when invoking "
                "PackageExporter for a visualization of where broken modules are coming from!\n")


def test_intern_error(lib):
    obj2 = package_a.PackageAObject(package_a.subpackage.PackageASubpackageObject())
    with pytest.raises(lib.pkg.PackagingError) as info:
        with lib.pkg.PackageExporter(io.BytesIO()) as exp:
            exp.save_pickle("obj", "obj.pkl", obj2)
    assert str(info.value) == INTERN_ERROR
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:  # interning the dependencies fixes it
        exp.intern(["package_a", "package_a.subpackage"])
        exp.save_pickle("obj", "obj.pkl", obj2)
    assert _reload(lib, buf).load_pickle("obj", "obj.pkl").obj is not None


def _fake_module(name, filename):
    mod = types.ModuleType(name)
    if filename is not None:
        mod.__file__ = filename
    return mod


def test_broken_dependency(lib):
    class BrokenImporter(lib.pkg.Importer):
        def __init__(self):
            self.modules = {"foo": _fake_module("foo", "a.so"), "bar": _fake_module("bar", None)}

        def import_module(self, module_name):
            return self.modules[module_name]

    with pytest.raises(lib.pkg.PackagingError) as info:
        with lib.pkg.PackageExporter(io.BytesIO(), importer=BrokenImporter()) as exp:
            exp.intern(["foo", "bar"])
            exp.save_source_string("my_module", "import foo; import bar")
    assert str(info.value) == (
        "\n* Module is a C extension module. torch.package supports Python modules only.\n"
        "    foo\n* Module had no __file__ defined.\n    bar\n\nSet debug=True when invoking "
        "PackageExporter for a visualization of where broken modules are coming from!\n")


def test_invalid_import(lib):
    with pytest.raises(lib.pkg.PackagingError) as info:
        with lib.pkg.PackageExporter(io.BytesIO()) as exp:
            exp.save_source_string("foo", "from ........ import lol")
    assert str(info.value) == (
        "\n* Dependency resolution failed.\n    foo\n      Context: attempted relative import "
        "beyond top-level package\n\nSet debug=True when invoking PackageExporter for a "
        "visualization of where broken modules are coming from!\n")


def test_repackage_mocked_module(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.mock("package_a")
        exp.save_source_string("foo", "import package_a")
    imp = _reload(lib, buf)
    with pytest.raises(NotImplementedError):
        imp.import_module("package_a").PackageAObject()
    buf2 = io.BytesIO()
    with lib.pkg.PackageExporter(buf2, importer=(imp, lib.pkg.sys_importer)) as exp:
        exp.intern("**")
        exp.save_module("foo")
    imp2 = _reload(lib, buf2)
    with pytest.raises(NotImplementedError):
        imp2.import_module("package_a").PackageAObject()
    assert imp2.file_structure().has_file("_mock.py")


def test_sys_and_io_are_never_implicitly_externed(lib):
    with pytest.raises(lib.pkg.PackagingError) as info:
        with lib.pkg.PackageExporter(io.BytesIO()) as exp:
            exp.save_source_string("foo", "import sys\nimport io\nimport json\n")
    text = str(info.value)
    assert "    sys\n      Note: While we usually use modules" in text
    assert 'PackageExporter.extern("`io`")' in text
    assert "json" not in text  # other standard-library modules are externed implicitly
    assert sys.modules["json"]


def test_implicit_extern_beats_user_rules(lib):
    with lib.pkg.PackageExporter(io.BytesIO()) as exp:
        exp.intern("json.**")
        exp.save_source_string("foo", "import json")
        assert "json" in exp.externed_modules() and "json" not in exp.interned_modules()


def test_first_matching_rule_wins(lib):
    with lib.pkg.PackageExporter(io.BytesIO()) as exp:
        exp.intern("mockme")
        exp.mock("mockme")
        exp.save_source_string("foo", "import mockme")
        assert exp.interned_modules() == ["foo", "mockme"] and exp.mocked_modules() == []


def test_debug_mode_prints_paths(lib):
    with pytest.raises(lib.pkg.PackagingError) as info:
        with lib.pkg.PackageExporter(io.BytesIO(), debug=True) as exp:
            exp.intern("uses_mockme")
            exp.save_source_string("foo", "import uses_mockme")
    assert str(info.value) == (
        "\n* Module did not match against any action pattern. Extern, mock, or intern it.\n"
        "    mockme\n      A path to mockme: foo -> uses_mockme -> mockme\n")


def test_repackage_mocked_module_with_the_importer_alone(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.mock("package_a")
        exp.save_source_string("foo", "import package_a")
    imp = _reload(lib, buf)
    with pytest.raises(NotImplementedError):
        imp.import_module("foo").package_a.get_something()
    buf2 = io.BytesIO()
    with lib.pkg.PackageExporter(buf2, importer=imp) as exp:
        exp.intern("package_a")  # the stub itself is interned now; everything else mocked
        exp.mock("**")
        exp.save_source_string("foo", "import package_a")
    imp2 = _reload(lib, buf2)
    with pytest.raises(NotImplementedError):
        imp2.import_module("foo").package_a.get_something()


def test_library_itself_is_always_externed(lib):
    """Intern-everything still takes the library (torch / hookgrad) from the process."""
    nn = lib.lib.nn
    model = nn.Sequential(nn.Linear(4, 4), nn.GELU(), nn.LayerNorm(4))
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.intern("**")
        exp.save_pickle("model", "model.pkl", model)
        assert exp.interned_modules() == []
        assert all(m.split(".")[0] in (lib.name, "builtins", "collections")
                   for m in exp.externed_modules())
    loaded = _reload(lib, buf).load_pickle("model", "model.pkl")
    x = lib.lib.ones(2, 4)
    assert lib.lib.equal(loaded(x), model(x))


def test_unreadable_source_file_is_an_error():
    # spec amendment 2: PyTorch packages an unreadable .py as empty source; hookgrad refuses
    lib = package_lib("hookgrad")

    class GhostImporter(lib.pkg.Importer):
        def __init__(self):
            self.modules = {"ghost": _fake_module("ghost", "/nonexistent/dir/ghost.py"),
                            "pyc": _fake_module("pyc", "/nonexistent/dir/pyc.pyc")}

        def import_module(self, module_name):
            return self.modules[module_name]

    with pytest.raises(lib.pkg.PackagingError) as info:
        with lib.pkg.PackageExporter(io.BytesIO(), importer=GhostImporter()) as exp:
            exp.intern(["ghost", "pyc"])
            exp.save_source_string("my_module", "import ghost; import pyc")
    assert str(info.value).startswith(
        "\n* Module had a __file__, but we could not find it in your filesystem.\n    ghost\n"
        "      Context: filename: /nonexistent/dir/ghost.py\n    pyc\n"
        "      Context: filename: /nonexistent/dir/pyc.pyc\n")
