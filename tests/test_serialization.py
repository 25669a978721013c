"""`hookgrad.save` / `hookgrad.load`: round trips, atomic writes, and refusal of code payloads."""

from __future__ import annotations

import io
import json
import math
import os
import pickle
import zipfile
from collections import Counter, OrderedDict

import numpy as np
import pytest

import hookgrad
from hookgrad import serialization
from hookgrad._serialization import _torch_writer
from tests.optim._oracle import plain

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    hookgrad.save(obj, buf)
    buf.seek(0)
    return hookgrad.load(buf, **load_kwargs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (0, 3), (4,), (2, 3, 1)], ids=str)
def test_tensor_round_trip_keeps_dtype_shape_and_values(dtype, shape):
    rng = np.random.default_rng(1)
    arr = np.asarray(rng.standard_normal(shape) * 50).astype(dtype)
    out = _roundtrip(hookgrad.from_numpy(arr))
    assert isinstance(out, hookgrad.Tensor)
    assert out.dtype is getattr(hookgrad, dtype if dtype != "bool" else "bool")
    assert tuple(out.shape) == shape
    np.testing.assert_array_equal(out.numpy(), arr)


def test_non_contiguous_views_are_saved_by_value():
    base = hookgrad.from_numpy(np.arange(12.0).reshape(3, 4))
    view = hookgrad.from_numpy(base.numpy().T)
    np.testing.assert_array_equal(_roundtrip(view).numpy(), base.numpy().T)


def test_nested_state_round_trip_keeps_types_and_exact_floats():
    t = hookgrad.ones(2)
    obj = OrderedDict(
        a=[1, 2.5, -0.0, math.inf, -math.inf, None, True, False, "x", ("y", 3)],
        b={0: {"w": t, "again": t}, 1: [], "t": (t,), (1, "k"): 2},
        c=Counter({3: 2, 9: 1}),
        d=0.1 + 0.2,
        e=1.5,
        f=7,
    )
    out = _roundtrip(obj)
    assert type(out) is OrderedDict
    assert list(out) == ["a", "b", "c", "d", "e", "f"]
    assert out["a"][:5] == [1, 2.5, -0.0, math.inf, -math.inf]
    assert math.copysign(1.0, out["a"][2]) == -1.0
    assert out["a"][5:] == [None, True, False, "x", ("y", 3)]
    assert type(out["a"][9]) is tuple and type(out["b"]) is dict and out["b"][(1, "k")] == 2
    assert type(out["c"]) is Counter and out["c"] == Counter({3: 2, 9: 1})
    assert out["d"] == 0.1 + 0.2 and (out["e"], out["f"]) == (1.5, 7)
    w = out["b"][0]["w"]
    assert w is out["b"][0]["again"] and w is out["b"]["t"][0]  # shared once, loaded once
    assert math.isnan(_roundtrip(math.nan))


@pytest.mark.oracle
def test_container_structure_matches_a_torch_round_trip(torch, tmp_path):
    def build(lib):
        return {"s": OrderedDict(w=lib.arange(6).reshape(2, 3) * 1.5),
                "l": [lib.tensor(3), (1, "two", None)], 0: {"n": 2.0, "b": True}}

    torch.save(build(torch), tmp_path / "t.pt")
    theirs = torch.load(tmp_path / "t.pt")
    hookgrad.save(build(hookgrad), tmp_path / "h.hg")
    mine = hookgrad.load(tmp_path / "h.hg")
    assert plain(mine) == plain(theirs)
    assert type(mine["s"]) is type(theirs["s"])


def test_requires_grad_and_parameters_are_restored():
    p = hookgrad.nn.Parameter(hookgrad.ones(2))
    frozen = hookgrad.nn.Parameter(hookgrad.ones(1), requires_grad=False)
    leaf = hookgrad.ones(3, requires_grad=True)
    out = _roundtrip([p, frozen, leaf, hookgrad.zeros(1)])
    assert isinstance(out[0], hookgrad.nn.Parameter) and out[0].requires_grad
    assert isinstance(out[1], hookgrad.nn.Parameter) and not out[1].requires_grad
    assert type(out[2]) is hookgrad.Tensor and out[2].requires_grad and out[2].is_leaf
    assert not out[3].requires_grad


def test_module_state_dict_round_trip(tmp_path):
    src = hookgrad.nn.Linear(3, 2)
    hookgrad.save(src.state_dict(), tmp_path / "m.ckpt")
    dst = hookgrad.nn.Linear(3, 2)
    dst.load_state_dict(hookgrad.load(tmp_path / "m.ckpt"))
    for a, b in zip(src.parameters(), dst.parameters(), strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_optimizer_state_dict_round_trip_continues_identically(tmp_path):
    def make():
        p = hookgrad.from_numpy(np.linspace(-1, 1, 5).astype(np.float32)).requires_grad_()
        return p, hookgrad.optim.Adam([p], lr=0.1, amsgrad=True)

    p, opt = make()
    for _ in range(3):
        p.grad = hookgrad.ones(5)
        opt.step()
    hookgrad.save({"opt": opt.state_dict(), "p": p.detach()}, str(tmp_path / "o.ckpt"))
    ckpt = hookgrad.load(tmp_path / "o.ckpt")
    q, opt2 = make()
    with hookgrad.no_grad():
        q.copy_(ckpt["p"])
    opt2.load_state_dict(ckpt["opt"])
    assert opt2.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
    for t, o in ((p, opt), (q, opt2)):
        t.grad = hookgrad.full((5,), 0.5)
        o.step()
    np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    assert opt2.state[q]["step"].item() == 4.0


def test_file_objects_and_non_seekable_streams(tmp_path):
    path = tmp_path / "f.ckpt"
    with open(path, "wb") as fh:
        hookgrad.save({"x": hookgrad.arange(3)}, fh)

    class Stream(io.RawIOBase):
        def __init__(self, data):
            self._inner = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            return self._inner.readinto(b)

    out = hookgrad.load(Stream(path.read_bytes()))
    assert out["x"].tolist() == [0, 1, 2]


@pytest.mark.parametrize("map_location", [None, "cpu", hookgrad.device("cpu"), {"cpu": "cpu"},
                                          lambda storage, loc: storage, lambda storage, loc: None])
def test_map_location_variants(map_location):
    out = _roundtrip(hookgrad.ones(2), map_location=map_location)
    assert out.tolist() == [1.0, 1.0] and out.device == hookgrad.device("cpu")


def test_weights_only_false_gives_the_same_state_dicts():
    obj = {"t": hookgrad.ones(1), "n": [1, 2.0, None]}
    assert plain(_roundtrip(obj)) == plain(_roundtrip(obj, weights_only=False))


def test_numpy_scalars_need_weights_only_false_as_in_torch():
    obj = {"e": np.float64(1.5), "f": np.int64(7)}
    with pytest.raises(pickle.UnpicklingError, match="numpy"):
        _roundtrip(obj)
    out = _roundtrip(obj, weights_only=False)
    assert out == obj and type(out["e"]) is np.float64


def test_unpicklable_objects_raise_and_write_nothing(tmp_path):
    path = tmp_path / "x.ckpt"
    with pytest.raises(TypeError):
        hookgrad.save({"gen": (i for i in range(2))}, path)
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------ atomicity
def test_failure_mid_write_keeps_the_old_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "model.ckpt"
    hookgrad.save({"version": 1, "w": hookgrad.ones(3)}, path)
    old_bytes = path.read_bytes()
    calls = []
    real_write = _torch_writer.write_storage

    def failing_write(member, arr):
        calls.append(arr.shape)
        if len(calls) == 2:
            raise OSError("disk full (simulated)")
        real_write(member, arr)

    monkeypatch.setattr(_torch_writer, "write_storage", failing_write)
    with pytest.raises(OSError, match="simulated"):
        hookgrad.save({"version": 2, "a": hookgrad.zeros(4), "b": hookgrad.zeros(5)}, path)
    assert len(calls) == 2  # it failed after writing part of the new archive
    assert path.read_bytes() == old_bytes
    assert hookgrad.load(path)["version"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["model.ckpt"]  # no temporary left over


def test_failure_at_rename_keeps_the_old_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "model.ckpt"
    hookgrad.save([1], path)

    def failing_replace(src, dst):
        raise OSError("crash before rename (simulated)")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="simulated"):
        hookgrad.save([2], path)
    monkeypatch.undo()
    assert hookgrad.load(path) == [1]
    assert [p.name for p in tmp_path.iterdir()] == ["model.ckpt"]


def test_saved_file_has_default_permissions(tmp_path):
    path = tmp_path / "p.ckpt"
    hookgrad.save(1, path)
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask


# ------------------------------------------------------------------------------ refusal
class _Exploit:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))  # executed by a naive unpickler


def _zip_with(members: dict) -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    buf.seek(0)
    return buf


def _manifest(root, tensors=()):
    return json.dumps({"format": "hookgrad-checkpoint", "version": 1, "tensors": list(tensors),
                       "root": root})


def test_pickle_payload_is_refused_without_running_it(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.ckpt"
    path.write_bytes(pickle.dumps(_Exploit(str(marker)), protocol=2))
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):  # as in PyTorch
        hookgrad.load(path)
    assert not marker.exists()


def test_object_array_inside_a_checkpoint_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    arr = io.BytesIO()
    np.save(arr, np.array([_Exploit(str(marker))], dtype=object), allow_pickle=True)
    entry = {"file": "arrays/0.npy", "dtype": "float32", "shape": [1]}
    buf = _zip_with({"hookgrad_checkpoint.json": _manifest({"kind": "tensor", "ref": 0},
                                                          [entry]),
                     "arrays/0.npy": arr.getvalue()})
    with pytest.raises(pickle.UnpicklingError, match="bad array"):
        hookgrad.load(buf)
    assert not marker.exists()


@pytest.mark.parametrize(
    ("members", "match"),
    [
        ({"data.pkl": pickle.dumps([1])}, "version"),
        ({"hookgrad_checkpoint.json": "{not json"}, "not valid JSON"),
        ({"hookgrad_checkpoint.json": _manifest({"kind": "pickle", "value": "gASV"})},
         "unknown node kind"),
        ({"hookgrad_checkpoint.json": _manifest({"kind": "int", "value": "1"})},
         "expected a JSON int"),
        ({"hookgrad_checkpoint.json": _manifest({"kind": "tensor", "ref": 3})}, "out of range"),
        ({"hookgrad_checkpoint.json": json.dumps({"format": "other", "version": 1})},
         "unknown format"),
    ],
    ids=["torch-style-pickle", "bad-json", "unknown-kind", "bad-int", "bad-ref", "bad-format"],
)
def test_malformed_checkpoints_are_refused(members, match):
    # a PyTorch archive without its version record: its zip reader's RuntimeError
    kind = RuntimeError if "data.pkl" in members else pickle.UnpicklingError
    with pytest.raises(kind, match=match):
        hookgrad.load(_zip_with(members))


def test_array_that_disagrees_with_its_manifest_is_refused():
    arr = io.BytesIO()
    np.save(arr, np.zeros(3, dtype=np.float64))
    entry = {"file": "arrays/0.npy", "dtype": "float32", "shape": [3]}
    buf = _zip_with({"hookgrad_checkpoint.json": _manifest({"kind": "tensor", "ref": 0},
                                                          [entry]),
                     "arrays/0.npy": arr.getvalue()})
    with pytest.raises(pickle.UnpicklingError, match="does not match"):
        hookgrad.load(buf)


def test_encrypted_members_of_old_archives_are_refused_typed():
    arr = io.BytesIO()
    np.save(arr, np.zeros(2, np.float32))
    data = bytearray(_zip_with({"hookgrad_checkpoint.json": _manifest({"kind": "none"}),
                                "arrays/0.npy": arr.getvalue()}).getvalue())
    for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(sig)
        while at >= 0:
            data[at + off] |= 1
            at = data.find(sig, at + 4)
    with pytest.raises(RuntimeError, match="encrypted"):  # PyTorch's zip reader's type
        hookgrad.load(io.BytesIO(bytes(data)))
