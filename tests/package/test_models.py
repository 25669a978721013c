"""Packaged models: hooks, parameters, shared storages, tensor payloads, a fresh process."""

from __future__ import annotations

import io
import json
import pickletools
import subprocess
import sys
import warnings
import zipfile
from importlib import import_module
from pathlib import Path

import numpy as np
import pytest

import hookgrad
from hookgrad.package import PackageExporter, PackageImporter
from tests.package.conftest import package_lib

# torch.package itself warns about its own use of TypedStorage
pytestmark = pytest.mark.filterwarnings("ignore:TypedStorage is deprecated:UserWarning")
TEMPLATE = Path(__file__).with_name("models") / "net_template.txt"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def net_module(tmp_path, monkeypatch):
    """``net_<lib>`` modules written from the template into a temporary sys.path entry."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def make(lib_name):
        (tmp_path / f"net_{lib_name}.py").write_text(TEMPLATE.read_text().replace("LIB", lib_name))
        sys.modules.pop(f"net_{lib_name}", None)
        return import_module(f"net_{lib_name}")

    yield make
    for name in ("net_hookgrad", "net_torch"):
        sys.modules.pop(name, None)


def _export(lib, obj, target=None, module=None):
    target = target if target is not None else io.BytesIO()
    with lib.pkg.PackageExporter(target) as exp:
        if module:
            exp.intern(module)
        exp.save_pickle("model", "model.pkl", obj)
    return target


def _run(lib, net, x):
    """Output and input/parameter gradients of one forward/backward."""
    x = lib.lib.tensor(x, requires_grad=True)
    out = net(x)
    (out * out).sum().backward()
    grads = {n: p.grad.detach().numpy().copy() for n, p in net.named_parameters()}
    return out.detach().numpy(), x.grad.numpy(), grads


X = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(3, 4)


def test_model_round_trip_matches_torch(torch, net_module):
    ours_cls, theirs_cls = net_module("hookgrad").Net, net_module("torch").Net
    hookgrad.manual_seed(0)
    ours = ours_cls()
    theirs = theirs_cls()
    theirs.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in
                            ours.state_dict().items()})
    results = []
    for name, net in (("hookgrad", ours), ("torch", theirs)):
        lib = package_lib(name)
        buf = _export(lib, net, module=f"net_{name}")
        loaded = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue())).load_pickle("model",
                                                                                 "model.pkl")
        assert type(loaded).__module__.endswith(f">.net_{name}")
        assert type(loaded) is not type(net)
        assert loaded.same is loaded.fc2  # one module object, as in the original
        assert isinstance(loaded.fc1.weight, lib.lib.nn.Parameter)
        assert list(loaded._forward_pre_hooks.values())[0].__name__ == "shift_input"
        source_events = import_module(f"net_{name}").EVENTS
        before = _run(lib, net, X)
        packaged_events = type(loaded).__init__.__globals__["EVENTS"]
        after = _run(lib, loaded, X)
        loaded_module_events = list(packaged_events)
        # the full backward hook travelled with the model and fires in the archive's module
        assert loaded_module_events == [("backward", "Linear", (3, 3))]
        assert source_events == [("backward", "Linear", (3, 3))]
        for a, b in zip(before[:2], after[:2], strict=False):
            np.testing.assert_array_equal(a, b)
        assert before[2].keys() == after[2].keys()
        for k in before[2]:
            np.testing.assert_array_equal(before[2][k], after[2][k])
        results.append(after)
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-5, atol=1e-6)
    for k in results[0][2]:
        np.testing.assert_allclose(results[0][2][k], results[1][2][k], rtol=1e-5, atol=1e-6)


FRESH = """
import io, json, sys
import numpy as np
import hookgrad
from hookgrad.package import PackageImporter
imp = PackageImporter(sys.argv[1])
net = imp.load_pickle("model", "model.pkl")
x = hookgrad.tensor(np.array(json.loads(sys.argv[2]), dtype=np.float32), requires_grad=True)
out = net(x)
(out * out).sum().backward()
print(json.dumps({"out": out.detach().numpy().tolist(), "xgrad": x.grad.numpy().tolist(),
                  "grads": {n: p.grad.numpy().tolist() for n, p in net.named_parameters()},
                  "param": type(net.fc1.weight).__name__,
                  "net_in_sys_modules": any("net_hookgrad" in m for m in sys.modules)}))
"""


def test_model_loads_in_a_fresh_process_from_the_archive_alone(net_module, tmp_path):
    cls = net_module("hookgrad").Net
    hookgrad.manual_seed(1)
    net = cls()
    path = tmp_path / "archive_dir" / "net.pt"
    path.parent.mkdir()
    _export(package_lib("hookgrad"), net, str(path), module="net_hookgrad")
    out, xgrad, grads = _run(package_lib("hookgrad"), net, X)
    proc = subprocess.run([sys.executable, "-c", FRESH, str(path), json.dumps(X.tolist())],
                          capture_output=True, text=True, cwd=str(path.parent), timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    np.testing.assert_array_equal(np.array(got["out"], dtype=np.float32), out)
    np.testing.assert_array_equal(np.array(got["xgrad"], dtype=np.float32), xgrad)
    for k, v in grads.items():
        np.testing.assert_array_equal(np.array(got["grads"][k], dtype=np.float32), v)
    assert got["param"] == "Parameter" and not got["net_in_sys_modules"]


def test_shared_storages_stay_shared(lib):
    base = lib.lib.arange(10.0)
    obj = {"base": base, "view": base[2:5], "again": base, "other": lib.lib.zeros(3)}
    buf = _export(lib, obj)
    names = zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
    payloads = [n for n in names if n.startswith("archive/.data/") and n[-4:] in (".npy",
                                                                                "rage")]
    assert len(payloads) == 2  # one per memory buffer, the view adds none
    loaded = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue())).load_pickle("model",
                                                                             "model.pkl")
    assert loaded["again"] is loaded["base"]
    assert loaded["view"].tolist() == [2.0, 3.0, 4.0]
    assert loaded["view"].storage_offset() == 2 and loaded["view"]._base is None
    assert loaded["view"].untyped_storage().nbytes() == 40
    loaded["base"][3] = 100.0
    assert loaded["view"].tolist() == [2.0, 100.0, 4.0]
    assert loaded["other"].tolist() == [0.0, 0.0, 0.0]


def test_parameters_stay_parameters(lib):
    nn = lib.lib.nn
    obj = {"p": nn.Parameter(lib.lib.ones(2)), "frozen": nn.Parameter(lib.lib.ones(2),
                                                                       requires_grad=False),
           "t": lib.lib.ones(2, requires_grad=True), "plain": lib.lib.ones(2)}
    loaded = lib.pkg.PackageImporter(io.BytesIO(_export(lib, obj).getvalue())).load_pickle(
        "model", "model.pkl")
    assert type(loaded["p"]) is nn.Parameter and loaded["p"].requires_grad
    assert type(loaded["frozen"]) is nn.Parameter and not loaded["frozen"].requires_grad
    assert type(loaded["t"]) is lib.lib.Tensor and loaded["t"].requires_grad
    assert loaded["t"].is_leaf and not loaded["plain"].requires_grad


def _hook(grad):
    return grad


def test_backward_hook_warning_matches_torch(lib):
    t = lib.lib.ones(2, requires_grad=True) * 1
    t.register_hook(_hook)
    with pytest.warns(UserWarning) as record:
        loaded_buf = _export(lib, t)
    texts = [str(w.message) for w in record if "will not be serialized" in str(w.message)]
    assert texts == [f"backward hook {_hook!r} on tensor will not be serialized.  If this is "
                     f"expected, you can decorate the function with @{lib.name}.utils.hooks."
                     "unserializable_hook to suppress this warning"]
    loaded = lib.pkg.PackageImporter(io.BytesIO(loaded_buf.getvalue())).load_pickle(
        "model", "model.pkl")
    assert not loaded._backward_hooks


def test_parameter_hooks_are_dropped_silently_as_in_torch(lib):
    p = lib.lib.nn.Parameter(lib.lib.ones(2))
    p.register_hook(_hook)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*will not be serialized")
        warnings.filterwarnings("ignore", message="TypedStorage is deprecated")
        _export(lib, p)


def test_unserializable_hook_suppresses_the_warning(lib):
    t = lib.lib.ones(2, requires_grad=True) * 1
    t.register_hook(lib.lib.utils.hooks.unserializable_hook(lambda g: g))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*will not be serialized")
        warnings.filterwarnings("ignore", message="TypedStorage is deprecated")
        _export(lib, t)


DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_payloads_are_npy_members(dtype):
    arr = (np.arange(12) % 5).astype(dtype).reshape(3, 4)
    t = hookgrad.from_numpy(arr).t()  # a non-contiguous view keeps its strides
    buf = _export(package_lib("hookgrad"), {"t": t, "scalar": hookgrad.tensor(3),
                                            "empty": hookgrad.zeros(0, 2)})
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        member = np.load(io.BytesIO(zf.read("archive/.data/0.npy")), allow_pickle=False)
        data = zf.read("archive/model/model.pkl")
    np.testing.assert_array_equal(member, arr.reshape(-1))
    globals_ = [arg for op, arg, _ in pickletools.genops(data) if op.name == "GLOBAL"]
    assert not any(str(g).startswith("numpy") for g in globals_)  # no pickled arrays
    loaded = PackageImporter(io.BytesIO(buf.getvalue())).load_pickle("model", "model.pkl")
    assert loaded["t"].dtype == t.dtype and loaded["t"].stride() == t.stride()
    np.testing.assert_array_equal(loaded["t"].numpy(), arr.T)
    assert loaded["scalar"].item() == 3 and tuple(loaded["empty"].shape) == (0, 2)


def test_payload_alignment():
    buf = _export(package_lib("hookgrad"), {"a": hookgrad.ones(5), "b": hookgrad.ones(7)})
    raw = buf.getvalue()
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        for info in zf.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            name_len, extra_len = np.frombuffer(raw[info.header_offset + 26:
                                                    info.header_offset + 30], "<u2")
            assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, info.filename


def test_reads_archives_written_by_torch(torch):
    import torch.package as tp

    buf = io.BytesIO()
    base = torch.arange(10.0)
    with tp.PackageExporter(buf) as exp:
        exp.save_pickle("res", "t.pkl", {"w": torch.nn.Parameter(torch.ones(2, 3)),
                                         "view": base[2:5], "base": base,
                                         "i": torch.tensor([1, 2], dtype=torch.int64)})
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="TypedStorage is deprecated")
        loaded = PackageImporter(io.BytesIO(buf.getvalue())).load_pickle("res", "t.pkl")
    assert type(loaded["w"]) is hookgrad.nn.Parameter and loaded["w"].shape == (2, 3)
    assert loaded["view"].tolist() == [2.0, 3.0, 4.0] and loaded["i"].dtype == hookgrad.int64
    loaded["base"][2] = -1.0
    assert loaded["view"][0].item() == -1.0


def test_reduce_package_protocol(lib):
    class Holder:
        def __init__(self, value):
            self.value = value

        def __reduce_package__(self, exporter):
            return (_make_holder, (self.value,))

    h = Holder(5)
    with lib.pkg.PackageExporter(buf := io.BytesIO()) as exp:
        exp.extern("tests.**")  # where _make_holder lives
        exp.save_pickle("res", "h.pkl", [h, h])
    loaded = lib.pkg.PackageImporter(io.BytesIO(buf.getvalue())).load_pickle("res", "h.pkl")
    assert loaded[0] is loaded[1] and loaded[0] == ("made", 5)


def _make_holder(importer, value):
    assert hasattr(importer, "import_module")
    return ("made", value)


def test_map_location():
    lib = package_lib("hookgrad")
    buf = _export(lib, {"a": hookgrad.ones(2), "b": hookgrad.zeros(3)})
    imp = PackageImporter(io.BytesIO(buf.getvalue()))
    seen = []

    def relocate(storage, location):
        seen.append((storage.dtype.name, location))
        return storage * 2  # a callable may return a replacement storage

    loaded = imp.load_pickle("model", "model.pkl", map_location=relocate)
    assert seen == [("float32", "cpu"), ("float32", "cpu")]
    assert loaded["a"].tolist() == [2.0, 2.0]
    for where in ("cpu", {"cpu": "cpu"}, None):
        assert imp.load_pickle("model", "model.pkl", map_location=where)["a"].tolist() == [1, 1]
    try:
        import cupy  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="on a CUDA device"):
            imp.load_pickle("model", "model.pkl", map_location="cuda")


class _Pipe(io.RawIOBase):
    """A write-only, non-seekable stream (a pipe or socket)."""

    def __init__(self):
        self.data = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.data += b
        return len(b)


def test_export_to_a_non_seekable_stream():
    pipe = _Pipe()
    with PackageExporter(pipe) as exp:
        exp.save_pickle("r", "t.pkl", hookgrad.arange(5.0))
    raw = bytes(pipe.data)
    loaded = PackageImporter(io.BytesIO(raw)).load_pickle("r", "t.pkl")
    assert loaded.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        for info in zf.infolist():
            name_len, extra_len = np.frombuffer(raw[info.header_offset + 26:
                                                    info.header_offset + 30], "<u2")
            assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0


def test_user_attributes_on_tensors_travel(lib):
    t = lib.lib.ones(2)
    t.note = "hello"
    p = lib.lib.nn.Parameter(lib.lib.zeros(1))
    p.tag = 7
    loaded = lib.pkg.PackageImporter(io.BytesIO(_export(lib, [t, p]).getvalue())).load_pickle(
        "model", "model.pkl")
    assert loaded[0].note == "hello" and loaded[1].tag == 7
    assert type(loaded[1]) is lib.lib.nn.Parameter
