"""Bad archives and bad pickles: PyTorch's exception types, clear messages, nothing left behind."""

from __future__ import annotations

import io
import struct
import sys
import zipfile

import pytest

from tests.package.conftest import package_lib

pytestmark = pytest.mark.filterwarnings("ignore:TypedStorage is deprecated:UserWarning")


def _archive(lib):
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.save_source_string("foo", "x = 1\n")
        exp.save_source_string("bad", "import foo\nfoo.touched = True\nraise ValueError('boom')\n")
        exp.save_source_string("pkg.sub", "raise KeyError('inner')\n")
        exp.save_source_string("pkg", "", is_package=True)
        exp.save_pickle("res", "p.pkl", {"a": [1, 2, 3]})
    return buf.getvalue()


def _rewrite(raw, drop=(), add=()):
    """A copy of a ZIP without the members in `drop`, plus the (name, bytes) pairs of `add`."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if not any(info.filename.endswith(d) for d in drop):
                dst.writestr(info.filename, src.read(info))
        for name, data in add:
            dst.writestr(name, data)
    return out.getvalue()


@pytest.mark.parametrize("case", ["garbage", "empty", "truncated", "bytes"])
def test_not_an_archive(lib, case):
    raw = _archive(lib)
    arg = {"garbage": io.BytesIO(b"this is not a zip file"), "empty": io.BytesIO(b""),
           "truncated": io.BytesIO(raw[: len(raw) // 2]), "bytes": raw}[case]
    with pytest.raises(RuntimeError):
        lib.pkg.PackageImporter(arg)


def test_missing_file(lib, tmp_path):
    with pytest.raises(RuntimeError, match="No such file or directory"):
        lib.pkg.PackageImporter(str(tmp_path / "nope.pt"))


def test_missing_bookkeeping_member(lib):
    raw = _rewrite(_archive(lib), drop=[".data/extern_modules"])
    with pytest.raises(RuntimeError, match="extern_modules"):
        lib.pkg.PackageImporter(io.BytesIO(raw))


def test_missing_resource(lib):
    imp = lib.pkg.PackageImporter(io.BytesIO(_archive(lib)))
    with pytest.raises(RuntimeError, match="nope.pkl"):
        imp.load_pickle("res", "nope.pkl")


def _flip_payload_byte(raw, member):
    info = zipfile.ZipFile(io.BytesIO(raw)).getinfo(member)
    name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:
                                                   info.header_offset + 30])
    pos = info.header_offset + 30 + name_len + extra_len + 3
    bad = bytearray(raw)
    bad[pos] ^= 0xFF
    return bytes(bad)


def test_corrupted_member_is_detected():
    # PyTorch's reader does not check CRCs (it fails later, or not at all); hookgrad's does
    raw = _flip_payload_byte(_archive(package_lib("hookgrad")), "archive/res/p.pkl")
    imp = package_lib("hookgrad").pkg.PackageImporter(io.BytesIO(raw))
    with pytest.raises(RuntimeError, match="Bad CRC-32"):
        imp.load_pickle("res", "p.pkl")


@pytest.mark.parametrize("evil", ["archive/../evil.py", "/abs/evil.py", "archive/a/../../x.py",
                                  "archive\\..\\x.py"])
def test_member_paths_escaping_the_archive_folder_are_refused(evil):
    lib = package_lib("hookgrad")
    raw = _rewrite(_archive(lib), add=[(evil, b"print('evil')\n")])
    with pytest.raises(RuntimeError, match="escapes the archive folder"):
        lib.pkg.PackageImporter(io.BytesIO(raw))


def test_members_under_two_top_folders_are_refused():
    lib = package_lib("hookgrad")
    raw = _rewrite(_archive(lib), add=[("other/foo.py", b"x = 2\n")])
    with pytest.raises(RuntimeError, match="several top-level folders"):
        lib.pkg.PackageImporter(io.BytesIO(raw))


def test_any_single_top_folder_name_is_accepted():
    lib = package_lib("hookgrad")
    src = zipfile.ZipFile(io.BytesIO(_archive(lib)))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            dst.writestr("renamed/" + info.filename.partition("/")[2], src.read(info))
    assert lib.pkg.PackageImporter(io.BytesIO(out.getvalue())).import_module("foo").x == 1


def test_pickle_naming_a_module_the_archive_lacks(lib):
    pickled = b"\x80\x03cmissing_mod_xyz\nThing\nq\x00)\x81q\x01."
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.save_source_string("foo", "x = 1\n")
        exp.save_binary("res", "p.pkl", pickled)
    imp = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue()))
    with pytest.raises(ModuleNotFoundError) as info:
        imp.load_pickle("res", "p.pkl")
    assert str(info.value).startswith('No module named "missing_mod_xyz" in self-contained '
                                      'archive "<binary>"')
    assert "missing_mod_xyz" not in sys.modules and "missing_mod_xyz" not in imp.modules


def test_failing_module_body_leaves_nothing_behind():
    # PyTorch keeps the half-run module in importer.modules; hookgrad removes it, as CPython
    # removes a failed import from sys.modules, so a retry runs the body again
    lib = package_lib("hookgrad")
    imp = lib.pkg.PackageImporter(io.BytesIO(_archive(lib)))
    before = set(sys.modules)
    for _ in range(2):
        with pytest.raises(ValueError, match="boom"):
            imp.import_module("bad")
        assert "bad" not in imp.modules
    assert imp.modules["foo"].touched is True  # what it imported successfully stays
    with pytest.raises(KeyError, match="inner"):
        imp.import_module("pkg.sub")
    assert "pkg.sub" not in imp.modules and not hasattr(imp.modules["pkg"], "sub")
    assert set(sys.modules) - before == set()


def test_corrupted_npy_payload():
    import hookgrad

    lib = package_lib("hookgrad")
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.save_pickle("res", "t.pkl", hookgrad.ones(3))
    raw = _rewrite(buf.getvalue(), drop=[".data/0.npy"], add=[("archive/.data/0.npy",
                                                                b"\x93NUMPY garbage")])
    import pickle

    with pytest.raises(pickle.UnpicklingError, match=r"\.data/0\.npy"):
        lib.pkg.PackageImporter(io.BytesIO(raw)).load_pickle("res", "t.pkl")


def test_npy_payload_with_the_wrong_size():
    import numpy as np

    import hookgrad

    lib = package_lib("hookgrad")
    buf = io.BytesIO()
    with lib.pkg.PackageExporter(buf) as exp:
        exp.save_pickle("res", "t.pkl", hookgrad.ones(3))
    wrong = io.BytesIO()
    np.save(wrong, np.ones(2, dtype=np.float32))
    raw = _rewrite(buf.getvalue(), drop=[".data/0.npy"],
                   add=[("archive/.data/0.npy", wrong.getvalue())])
    import pickle

    with pytest.raises(pickle.UnpicklingError, match="expects 3 elements of float32"):
        lib.pkg.PackageImporter(io.BytesIO(raw)).load_pickle("res", "t.pkl")


def test_inconsistent_module_structure(lib):
    raw = _rewrite(_archive(lib), add=[("archive/foo/inner.py", b"")])
    with pytest.raises(ImportError, match="is not a package, but has submodules"):
        lib.pkg.PackageImporter(io.BytesIO(raw))
