"""The three dependency hooks (port of upstream test_dependency_hooks.py, plus order checks)."""

from __future__ import annotations

import io

import pytest


def test_single_hook(lib):
    seen = set()
    with lib.pkg.PackageExporter(io.BytesIO()) as exp:
        exp.extern(["package_a.subpackage", "module_a"])
        exp.register_extern_hook(lambda e, name: seen.add(name))
        exp.save_source_string("foo", "import module_a")
    assert seen == {"module_a"}


@pytest.mark.parametrize("kind", ["extern", "mock"])
def test_hooks_of_one_kind_run_in_registration_order(lib, kind):
    names = set()
    with lib.pkg.PackageExporter(io.BytesIO()) as exp:
        getattr(exp, kind)(["package_a.subpackage", "module_a"])
        register = getattr(exp, f"register_{kind}_hook")
        register(lambda e, name: names.add(name))
        register(lambda e, name: names.remove(name))  # only works if the first ran before it
        exp.save_source_string("foo", "import module_a")
    assert names == set()


def test_remove_hooks(lib):
    first, second = set(), set()
    with lib.pkg.PackageExporter(io.BytesIO()) as exp:
        exp.extern(["package_a.subpackage", "module_a"])
        handle = exp.register_extern_hook(lambda e, name: first.add(name))
        exp.register_extern_hook(lambda e, name: second.add(name))
        handle.remove()
        exp.save_source_string("foo", "import module_a")
    assert first == set() and second == {"module_a"}


def test_extern_and_mock_hook(lib):
    externs, mocks = set(), set()
    with lib.pkg.PackageExporter(io.BytesIO()) as exp:
        exp.extern("module_a")
        exp.mock("package_a")
        exp.register_extern_hook(lambda e, name: externs.add(name))
        exp.register_mock_hook(lambda e, name: mocks.add(name))
        exp.save_source_string("foo", "import module_a; import package_a")
    assert externs == {"module_a"} and mocks == {"package_a"}


SOURCE = ("import json\nimport module_a\nimport package_a.subpackage\nimport os\n"
          "from package_b import helper\nimport uses_mockme\n")


def _logged_export(lib, buf=None):
    """Every hook call of a mixed export, in call order, plus the archive."""
    log = []
    buf = buf or io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.extern("module_a")
        exp.mock(["package_a.**", "mockme"])
        exp.intern(["package_b.**", "uses_mockme"])
        for kind in ("extern", "mock", "intern"):
            getattr(exp, f"register_{kind}_hook")(
                lambda e, name, kind=kind: log.append((kind, name, e is exp)))
        exp.save_source_string("foo", SOURCE)
        exp.save_pickle("res", "data.pkl", {"x": [1, 2]})
        assert log == [], "hooks run only inside close()"
    return log, buf


def test_hook_order_and_arguments_match_torch(torch):
    from tests.package.conftest import package_lib

    ours, _ = _logged_export(package_lib("hookgrad"))
    theirs, _ = _logged_export(package_lib("torch"))
    assert ours == theirs
    assert ("intern", "<res.data.pkl>", True) in ours  # pickle pseudo-nodes reach intern hooks
    assert ("extern", "json", True) in ours  # implicit externs reach extern hooks


def test_hooks_see_modules_decided_before_registration(lib):
    seen = []
    with lib.pkg.PackageExporter(io.BytesIO()) as exp:
        exp.extern("module_a")
        exp.save_source_string("foo", "import module_a")
        exp.register_extern_hook(lambda e, name: seen.append(name))
    assert seen == ["module_a"]


def test_no_hook_runs_when_validation_fails(lib):
    seen = []
    with pytest.raises(lib.pkg.PackagingError), lib.pkg.PackageExporter(io.BytesIO()) as exp:
        exp.extern("module_a")
        exp.register_extern_hook(lambda e, name: seen.append(name))
        exp.save_source_string("foo", "import module_a\nimport package_a")
    assert seen == []


def test_hook_may_write_resources(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.extern("module_a")
        exp.register_extern_hook(
            lambda e, name: e.save_text("hooks", name + ".txt", f"externed {name}"))
        exp.save_source_string("foo", "import module_a")
    imp = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue()))
    assert imp.file_structure().has_file("hooks/module_a.txt")
    assert imp.zip_reader.get_record("hooks/module_a.txt") == b"externed module_a"


def test_hook_exception_propagates_out_of_close(lib):
    def boom(exporter, name):
        raise KeyError(name)

    with pytest.raises(KeyError, match="module_a"):
        with lib.pkg.PackageExporter(io.BytesIO()) as exp:
            exp.extern("module_a")
            exp.register_extern_hook(boom)
            exp.save_source_string("foo", "import module_a")


def test_hook_return_values_are_ignored(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.extern("module_a")
        exp.register_extern_hook(lambda e, name: "ignored")
        exp.save_source_string("foo", "import module_a")
    assert lib.pkg.PackageImporter(io.BytesIO(buf.getvalue())).extern_modules == ["module_a"]
