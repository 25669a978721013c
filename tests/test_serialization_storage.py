"""Storage layout across save/load, package archives, pickling and deepcopy, vs PyTorch.

Each scenario builds tensors that share storages (views, transposes, strided slices,
parameters, expands), sends them through one round trip of each library, and compares what
the loaded tensors say about their storages: offsets, strides, storage sizes, which of them
share a storage (``untyped_storage().data_ptr()``), ``data_ptr`` differences, ``is_set_to``,
``_base`` (loaded tensors are not autograd views) and whether an in-place write through one is
seen by the others.
"""

from __future__ import annotations

import copy
import io
import pickle
import warnings

import numpy as np
import pytest

import hookgrad

# torch.package and Tensor.storage() warn about PyTorch's own use of TypedStorage
pytestmark = pytest.mark.filterwarnings("ignore:TypedStorage is deprecated:UserWarning")


# ------------------------------------------------------------------------- round trips
def _save_load(lib, obj):
    buf = io.BytesIO()
    lib.save(obj, buf)
    buf.seek(0)
    return lib.load(buf)


def _package(lib, obj):
    if lib is hookgrad:
        import hookgrad.package as pkg
    else:
        import torch.package as pkg
    buf = io.BytesIO()
    with pkg.PackageExporter(buf) as exp:
        exp.save_pickle("res", "obj.pkl", obj)
    with warnings.catch_warnings():  # torch.package itself uses TypedStorage
        warnings.simplefilter("ignore", UserWarning)
        return pkg.PackageImporter(io.BytesIO(buf.getvalue())).load_pickle("res", "obj.pkl")


def _pickle(lib, obj):
    return pickle.loads(pickle.dumps(obj))


def _deepcopy(lib, obj):
    return copy.deepcopy(obj)


ROUND_TRIPS = {"save": _save_load, "package": _package, "pickle": _pickle,
               "deepcopy": _deepcopy}
# PyTorch pickles each tensor's storage on its own, so tensors sharing a storage load unshared;
# hookgrad's pickle keeps them shared (NOTE [Tensor copy protocols] in _tensor_copy.py).
SHARING = {"save", "package", "deepcopy"}


# ------------------------------------------------------------------------- scenarios
def _views(lib):
    b = lib.arange(10.0)
    return [b[2:5], b]


def _lone_view(lib):
    return [lib.arange(10.0)[2:5]]


def _transposes(lib):
    m = lib.arange(12.0).reshape(3, 4)
    return [m, m.t(), m[:, 1:3], m[1:].t()]


def _lone_transpose(lib):
    return [lib.arange(12.0).reshape(3, 4)[1:].t()]


def _strided(lib):
    b = lib.arange(24.0)
    return [b, b[1::3], b.view(4, 6)[1:, ::2], b[7:8].view(())]


def _parameters(lib):
    p = lib.nn.Parameter(lib.arange(6.0))
    q = lib.nn.Parameter(lib.arange(8.0)[2:6], requires_grad=False)  # a parameter of a view
    return [p.detach()[1:3], p, q]


def _requires_grad(lib):
    w = lib.arange(6.0).requires_grad_()
    return [w, w.detach()[3:], w.detach().view(2, 3).t()]


def _expand_and_ints(lib):
    b = lib.arange(3.0)
    i = lib.arange(10)
    return [b, b.expand(4, 3), i[3:], i, i[::2].detach()]


def _set_storage(lib):
    b = lib.arange(10.0)
    x = lib.empty(0)
    x.set_(b.untyped_storage(), 2, (2, 2), (3, 1))
    return [b, x, b.detach()[4:7]]


SCENARIOS = [_views, _lone_view, _transposes, _lone_transpose, _strided, _parameters,
             _requires_grad, _expand_and_ints, _set_storage]


# ------------------------------------------------------------------------- observations
def _tensor_facts(t):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # TypedStorage is deprecated
        typed = t.storage()
        typed_facts = (typed.size(), typed.element_size(), typed.data_ptr())
    store = t.untyped_storage()
    return {"type": type(t).__name__, "values": t.tolist(), "shape": tuple(t.shape),
            "stride": t.stride(), "offset": t.storage_offset(), "nbytes": store.nbytes(),
            "typed": typed_facts[:2], "typed_ptr_ok": typed_facts[2] == store.data_ptr(),
            "base_is_none": t._base is None, "leaf": t.is_leaf,
            "requires_grad": t.requires_grad, "contiguous": t.is_contiguous(),
            "elem_ptr_ok": t.data_ptr() == store.data_ptr() + t.storage_offset() * t.itemsize}


def _relations(ts):
    """Which tensors share a storage (index of the first sharer), data_ptr differences to it,
    and ``is_set_to`` between every pair."""
    ptrs = [t.untyped_storage().data_ptr() for t in ts]
    groups = [ptrs.index(p) for p in ptrs]
    deltas = [t.data_ptr() - ts[g].data_ptr() if t.numel() and ts[g].numel() else None
              for t, g in zip(ts, groups, strict=True)]  # an empty tensor's data_ptr is 0
    set_to = [[a.is_set_to(b) for b in ts] for a in ts]
    return groups, deltas, set_to


def _write_through_first(lib, ts):
    """Negate the first tensor in place; return every tensor's values afterwards."""
    with lib.no_grad():
        ts[0].mul_(-1)
    return [t.tolist() for t in ts]


def _observe(lib, scenario, how):
    originals = scenario(lib)
    before = [_tensor_facts(t) for t in originals]
    try:
        loaded = ROUND_TRIPS[how](lib, {"ts": originals})["ts"]
    except Exception as exc:  # noqa: BLE001 - the oracle's exception type is the expectation
        return ("raised", type(exc).__name__)
    facts = [_tensor_facts(t) for t in loaded]
    if how not in SHARING:
        return before, facts
    return before, facts, _relations(loaded), _write_through_first(lib, loaded)


# ------------------------------------------------------------------------- tests
@pytest.mark.oracle
@pytest.mark.parametrize("how", list(ROUND_TRIPS))
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__.strip("_"))
def test_storage_layout_survives_round_trips_as_in_torch(torch, scenario, how):
    assert _observe(hookgrad, scenario, how) == _observe(torch, scenario, how)


@pytest.mark.oracle
@pytest.mark.parametrize("how", ["save", "package"])
def test_the_issue_example(torch, how):
    for lib in (hookgrad, torch):
        b = lib.arange(10.0)
        w = ROUND_TRIPS[how](lib, b[2:5])
        assert (w.storage_offset(), w.untyped_storage().nbytes(), w._base) == (2, 40, None)
        d = ROUND_TRIPS[how](lib, {"v": b[2:5], "b": b})
        assert d["v"].storage_offset() == 2 and d["v"].data_ptr() - d["b"].data_ptr() == 8
        assert d["v"].untyped_storage().data_ptr() == d["b"].untyped_storage().data_ptr()


def _views_of_loaded(lib, how):
    d = ROUND_TRIPS[how](lib, {"v": lib.arange(10.0)[2:6]})["v"]
    w = d[1:]
    s = d.as_strided((2,), (2,), 1)  # PyTorch's offsets count from the storage's start
    return (w.storage_offset(), w._base is d, w.untyped_storage().nbytes(),
            d.detach().storage_offset(), d.data.storage_offset(), s.tolist(),
            s.storage_offset(), w.is_set_to(d[1:]))


@pytest.mark.oracle
@pytest.mark.parametrize("how", sorted(SHARING | {"pickle"}))
def test_views_detach_and_as_strided_of_loaded_tensors(torch, how):
    assert _views_of_loaded(hookgrad, how) == _views_of_loaded(torch, how)


def _autograd_after_load(lib, how):
    """Loaded tensors sharing a storage are separate leaves: an in-place op on one does not
    rebase the other's graph or bump its version, but its memory changes under it."""
    b0 = lib.arange(6.0)
    d = ROUND_TRIPS[how](lib, {"v": b0[1:4], "b": b0})
    b, v = d["b"].requires_grad_(), d["v"]
    versions = (b._version, v._version)
    y = (b * b).sum()  # saves b
    v.add_(10.0)
    bumps = (b._version - versions[0], v._version - versions[1])
    y.backward()
    return (b.grad.tolist(), b.grad_fn, v.grad_fn, v.is_leaf, v._base is None, b.tolist(),
            bumps)


@pytest.mark.oracle
@pytest.mark.parametrize("how", ["save", "package", "deepcopy"])
def test_in_place_on_one_loaded_tensor_leaves_the_others_graph_alone(torch, how):
    assert _autograd_after_load(hookgrad, how) == _autograd_after_load(torch, how)


def test_pickle_keeps_tensors_of_one_storage_shared():
    # a documented difference: PyTorch pickles each tensor's storage separately
    b = hookgrad.arange(10.0)
    lb, lv = pickle.loads(pickle.dumps([b, b[2:5]]))
    assert lv.storage_offset() == 2 and lv.untyped_storage().data_ptr() == lb.data_ptr()
    lb[3] = -1.0
    assert lv.tolist() == [2.0, -1.0, 4.0]


@pytest.mark.oracle
def test_is_set_to_rejects_non_tensors_as_torch_does(torch):
    for lib in (hookgrad, torch):
        with pytest.raises(TypeError, match="must be Tensor, not int"):
            lib.ones(2).is_set_to(3)


def test_save_writes_each_storage_once_as_raw_little_endian_bytes():
    import zipfile

    b = hookgrad.arange(10.0)
    buf = io.BytesIO()
    hookgrad.save({"v": b[2:5], "t": b.view(2, 5).t(), "b": b, "o": hookgrad.ones(2)}, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        names = sorted(n for n in zf.namelist() if "/data/" in n)
        assert names == ["archive/data/0", "archive/data/1"]
        flat = np.frombuffer(zf.read("archive/data/0"), dtype="<f4")
    np.testing.assert_array_equal(flat, np.arange(10.0, dtype=np.float32))


def _torch_archive_scenario(lib):
    b = lib.arange(10.0)
    m = lib.arange(12.0).reshape(3, 4)
    return [b, b[2:5], b[5:5], m[1:].t(), lib.nn.Parameter(m), b[1::3]]


@pytest.mark.oracle
def test_package_reads_torch_archives_with_their_layout(torch):
    import torch.package as tp

    buf = io.BytesIO()
    with tp.PackageExporter(buf) as exp:
        exp.save_pickle("res", "obj.pkl", {"ts": _torch_archive_scenario(torch)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ours = hookgrad.package.PackageImporter(io.BytesIO(buf.getvalue())).load_pickle(
            "res", "obj.pkl")["ts"]
        theirs = tp.PackageImporter(io.BytesIO(buf.getvalue())).load_pickle("res",
                                                                            "obj.pkl")["ts"]
    assert [_tensor_facts(t) for t in ours] == [_tensor_facts(t) for t in theirs]
    assert _relations(ours) == _relations(theirs)
    assert ours[2].storage_offset() == 5  # an empty view keeps its offset too


# ------------------------------------------------------------------------- hostile files
def _checkpoint(manifest, arrays):
    import json
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("hookgrad_checkpoint.json", json.dumps(manifest))
        for name, arr in arrays.items():
            npy = io.BytesIO()
            np.save(npy, arr, allow_pickle=False)
            zf.writestr(name, npy.getvalue())
    buf.seek(0)
    return buf


def _v2(tensor=None, storage=None, arrays=None, **top):
    storage_entry = {"file": "storages/0.npy", "dtype": "float32", "numel": 10,
                     "device": "cpu", **(storage or {})}
    tensor_entry = {"storage": 0, "offset": 2, "shape": [3], "stride": [1],
                    "dtype": "float32", "requires_grad": False, "parameter": False,
                    **(tensor or {})}
    manifest = {"format": "hookgrad-checkpoint", "version": 2, "storages": [storage_entry],
                "tensors": [tensor_entry], "root": {"kind": "tensor", "ref": 0}, **top}
    if arrays is None:
        arrays = {"storages/0.npy": np.arange(10, dtype=np.float32)}
    return _checkpoint(manifest, arrays)


def test_a_well_formed_v2_file_loads():
    t = hookgrad.load(_v2())
    assert t.tolist() == [2.0, 3.0, 4.0] and t.storage_offset() == 2


@pytest.mark.parametrize(("bad", "match"), [
    ({"tensor": {"offset": 8}}, "outside its storage"),
    ({"tensor": {"offset": -1}}, "outside its storage"),
    ({"tensor": {"stride": [-1]}}, "outside its storage"),
    ({"tensor": {"shape": [3, 1]}}, "outside its storage"),
    ({"tensor": {"shape": [2 ** 40], "stride": [1]}}, "outside its storage"),
    ({"tensor": {"stride": [1.0]}}, "list of ints"),
    ({"tensor": {"offset": True}}, "JSON int"),
    ({"tensor": {"storage": 1}}, "storage reference out of range"),
    ({"tensor": {"dtype": "float64"}}, "dtype differs"),
    ({"tensor": {"requires_grad": True, "dtype": "int64"},
      "storage": {"dtype": "int64"},
      "arrays": {"storages/0.npy": np.arange(10)}}, "only floating"),
    ({"storage": {"numel": 11}}, "does not match"),
    ({"storage": {"dtype": "float64"}}, "does not match"),
    ({"arrays": {"storages/0.npy": np.zeros((2, 5), dtype=np.float32)}}, "does not match"),
    ({"arrays": {}}, "missing"),
    ({"storages": "x"}, "JSON list"),
    ({"version": True}, "unsupported checkpoint version"),
], ids=lambda v: str(v)[:40] if isinstance(v, dict) else None)
def test_malformed_v2_files_are_refused(bad, match):
    bad = dict(bad)
    top = {k: bad.pop(k) for k in ("storages", "version") if k in bad}
    with pytest.raises(pickle.UnpicklingError, match=match):
        hookgrad.load(_v2(**bad, **top))


def test_two_storages_may_not_share_one_member():
    arr = np.arange(10, dtype=np.float32)
    entry = {"file": "storages/0.npy", "dtype": "float32", "numel": 10, "device": "cpu"}
    manifest = {"format": "hookgrad-checkpoint", "version": 2, "storages": [entry, entry],
                "tensors": [], "root": {"kind": "none"}}
    with pytest.raises(pickle.UnpicklingError, match="share one array member"):
        hookgrad.load(_checkpoint(manifest, {"storages/0.npy": arr}))


def test_version_1_files_still_load():
    entry = {"file": "arrays/0.npy", "dtype": "float32", "shape": [2, 2],
             "requires_grad": True, "parameter": True, "device": "cpu"}
    manifest = {"format": "hookgrad-checkpoint", "version": 1, "tensors": [entry],
                "root": {"kind": "list", "items": [{"kind": "tensor", "ref": 0}]}}
    out = hookgrad.load(_checkpoint(manifest, {"arrays/0.npy": np.ones((2, 2), np.float32)}))
    assert type(out[0]) is hookgrad.nn.Parameter and out[0].requires_grad
    assert out[0].tolist() == [[1.0, 1.0], [1.0, 1.0]] and out[0].storage_offset() == 0
