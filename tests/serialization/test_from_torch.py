"""Files written by ``torch.save`` load in hookgrad with equal contents (oracle tests)."""

from __future__ import annotations

import pytest

import hookgrad
from tests.serialization._helpers import facts, loaded, saved, sharing, walk

pytestmark = pytest.mark.oracle

# constructors run with `lib` = torch or hookgrad; both must accept the same arguments
LAYERS = {
    "Linear": lambda nn: nn.Linear(4, 3),
    "Bilinear": lambda nn: nn.Bilinear(2, 3, 4),
    "Conv1d": lambda nn: nn.Conv1d(2, 3, 3),
    "Conv2d": lambda nn: nn.Conv2d(2, 3, 3, bias=False),
    "Conv3d": lambda nn: nn.Conv3d(1, 2, 2),
    "ConvTranspose1d": lambda nn: nn.ConvTranspose1d(2, 3, 3),
    "ConvTranspose2d": lambda nn: nn.ConvTranspose2d(2, 3, 3),
    "ConvTranspose3d": lambda nn: nn.ConvTranspose3d(1, 2, 2),
    "BatchNorm1d": lambda nn: nn.BatchNorm1d(3),
    "BatchNorm2d": lambda nn: nn.BatchNorm2d(3),
    "BatchNorm3d": lambda nn: nn.BatchNorm3d(3),
    "LayerNorm": lambda nn: nn.LayerNorm(4),
    "GroupNorm": lambda nn: nn.GroupNorm(2, 4),
    "InstanceNorm1d": lambda nn: nn.InstanceNorm1d(3, affine=True, track_running_stats=True),
    "Embedding": lambda nn: nn.Embedding(5, 3),
    "RNN": lambda nn: nn.RNN(3, 4, num_layers=2),
    "LSTM": lambda nn: nn.LSTM(3, 4, bidirectional=True),
    "GRU": lambda nn: nn.GRU(3, 4),
    "RNNCell": lambda nn: nn.RNNCell(3, 4),
    "LSTMCell": lambda nn: nn.LSTMCell(3, 4),
    "GRUCell": lambda nn: nn.GRUCell(3, 4),
    "MultiheadAttention": lambda nn: nn.MultiheadAttention(4, 2),
    "TransformerEncoderLayer": lambda nn: nn.TransformerEncoderLayer(4, 2, 8),
    "TransformerDecoderLayer": lambda nn: nn.TransformerDecoderLayer(4, 2, 8),
    "PReLU": lambda nn: nn.PReLU(3),
    "Sequential": lambda nn: nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)),
    "ModuleDict": lambda nn: nn.ModuleDict({"a": nn.Linear(2, 2), "b": nn.LayerNorm(2)}),
}


def _available(name):
    return hasattr(hookgrad.nn, name)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_state_dict_of_every_layer_type_loads_equal(torch, name):
    if not _available(name):
        pytest.skip(f"hookgrad.nn has no {name}")
    theirs = LAYERS[name](torch.nn).state_dict()
    data = saved(torch, theirs)
    ours = loaded(hookgrad, data)
    assert type(ours) is type(theirs)
    assert walk(ours) == walk(theirs)
    assert getattr(ours, "_metadata", None) == getattr(theirs, "_metadata", None)
    module = LAYERS[name](hookgrad.nn)
    module.load_state_dict(ours)  # strict: the keys are hookgrad's own
    assert walk(module.state_dict()) == walk(theirs)


OPTIMIZERS = {
    "SGD": dict(lr=0.1, momentum=0.9, nesterov=True),
    "Adam": dict(lr=0.01, amsgrad=True),
    "AdamW": dict(lr=0.01, weight_decay=0.1),
    "Adamax": dict(lr=0.01),
    "NAdam": dict(lr=0.01),
    "RAdam": dict(lr=0.01),
    "RMSprop": dict(lr=0.01, momentum=0.5, centered=True),
    "Adagrad": dict(lr=0.1),
    "Adadelta": dict(lr=1.0),
    "LBFGS": dict(lr=0.5, history_size=3),
}


def _trained_state(lib, name):
    model = lib.nn.Linear(3, 2)
    opt = getattr(lib.optim, name)(model.parameters(), **OPTIMIZERS[name])
    x = lib.arange(6.0).reshape(2, 3) / 6

    def closure():
        opt.zero_grad()
        loss = (model(x) ** 2).sum()
        loss.backward()
        return loss

    for _ in range(2):
        opt.step(closure)
    return opt.state_dict()


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_state_of_every_optimizer_loads_equal(torch, name):
    if not hasattr(hookgrad.optim, name):
        pytest.skip(f"hookgrad.optim has no {name}")
    theirs = _trained_state(torch, name)
    ours = loaded(hookgrad, saved(torch, theirs))
    assert walk(ours) == walk(theirs)
    model = hookgrad.nn.Linear(3, 2)
    opt = getattr(hookgrad.optim, name)(model.parameters(), **OPTIMIZERS[name])
    opt.load_state_dict(ours)
    assert walk(opt.state_dict()["param_groups"]) == walk(theirs["param_groups"])


DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_loads_equal(torch, dtype):
    base = torch.arange(-6, 18).reshape(4, 6) * 7
    t = (base % 2 == 0) if dtype == "bool" else base.to(getattr(torch, dtype))
    obj = [t, t[1:, ::2], t.t(), t[2, 3]]
    ours = loaded(hookgrad, saved(torch, obj))
    assert [facts(o) for o in ours] == [facts(o) for o in obj]
    assert sharing(ours) == sharing(obj) == [(i, j) for i in range(4) for j in range(i + 1, 4)]


def test_bfloat16_loads_as_bfloat16_with_its_bits(torch):
    t = torch.tensor([1.5, -2.25, 3e38, 1e-38, float("inf")], dtype=torch.bfloat16)
    ours = loaded(hookgrad, saved(torch, {"b": t, "v": t[1:4:2]}))
    assert ours["b"].dtype is hookgrad.bfloat16
    assert ours["b"].view(hookgrad.int16).tolist() == t.view(torch.int16).tolist()
    assert ours["b"].tolist() == t.tolist()
    assert (ours["v"].storage_offset(), ours["v"].stride()) == (1, (2,))
    assert sharing([ours["b"], ours["v"]]) == [(0, 1)]


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2"])
def test_dtypes_hookgrad_lacks_are_refused_by_name(torch, dtype):
    data = saved(torch, torch.zeros(2, dtype=getattr(torch, dtype)))
    with pytest.raises(RuntimeError, match=dtype):
        loaded(hookgrad, data)


def test_shared_and_viewed_storages_stay_shared(torch):
    def scenario(lib):
        b = lib.arange(20.0)
        m = b.view(4, 5)
        p = lib.nn.Parameter(lib.ones(3))
        return {"b": b, "slice": b[3:9], "t": m.t(), "empty": b[7:7], "step": b[1::4],
                "p": p, "pd": p.data, "other": lib.zeros(2), "again": b}

    theirs = scenario(torch)
    ours = loaded(hookgrad, saved(torch, theirs))
    assert walk(ours) == walk(theirs)
    assert sharing(list(ours.values())) == sharing(list(theirs.values()))
    assert ours["again"] is ours["b"]
    ours["b"].add_(1)  # one storage: the write shows through every view, as in torch
    assert ours["slice"].tolist() == list(range(4, 10))


def test_training_checkpoint_with_nested_containers_and_scalars(torch):
    model = torch.nn.Linear(2, 2)
    opt = torch.optim.Adam(model.parameters())
    ckpt = {"model": model.state_dict(), "optimizer": opt.state_dict(), "iter_num": 7,
            "best_val_loss": 1.25, "config": {"n_layer": 2, "bias": True, "name": "gpt",
                                               "betas": (0.9, 0.95), "tags": {"a", "b"}},
            "blob": b"\x00\x01", "z": complex(1, 2), "dtype": torch.float16,
            "device": torch.device("cpu"), "size": torch.Size([2, 3]), "none": None}
    ours = loaded(hookgrad, saved(torch, ckpt))
    assert walk(ours) == walk({**ckpt, "dtype": hookgrad.float16,
                               "device": hookgrad.device("cpu"), "size": hookgrad.Size([2, 3])})
    assert ours["dtype"] is hookgrad.float16 and type(ours["size"]) is hookgrad.Size


def test_legacy_non_zip_format_loads(torch):
    obj = {"w": torch.arange(6.0).reshape(2, 3), "n": 3}
    obj["v"] = obj["w"][:, 1:]
    data = saved(torch, obj, _use_new_zipfile_serialization=False)
    assert not data.startswith(b"PK")
    ours = loaded(hookgrad, data)
    assert walk(ours) == walk(obj)
    assert sharing([ours["w"], ours["v"]]) == [(0, 1)]


def test_whole_torch_modules_load_with_weights_only_false(torch):
    theirs = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                 torch.nn.Linear(27, 2))
    data = saved(torch, theirs)
    ours = loaded(hookgrad, data, weights_only=False)
    assert type(ours) is hookgrad.nn.Sequential and type(ours[0]) is hookgrad.nn.Conv2d
    x = torch.arange(50.0).reshape(1, 2, 5, 5) / 50
    expect = theirs(x).detach().numpy()
    got = ours(hookgrad.from_numpy(x.numpy())).detach().numpy()
    assert got.ravel().tolist() == pytest.approx(expect.ravel().tolist(), rel=1e-5)
    out = ours(hookgrad.from_numpy(x.numpy())).sum()
    out.backward()  # a trainable module, hooks and all
    assert ours[0].weight.grad is not None


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated:UserWarning")
def test_storages_saved_alone_load_as_storages(torch):
    t = torch.arange(3.0)
    ours = loaded(hookgrad, saved(torch, [t.untyped_storage(), t.clone()]))
    theirs = loaded(torch, saved(torch, [t.untyped_storage(), t.clone()]))
    assert type(ours[0]).__name__ == type(theirs[0]).__name__ == "TypedStorage"
    assert ours[0].nbytes() == 12 and ours[0].tolist() == theirs[0].tolist()
    assert ours[1].tolist() == [0.0, 1.0, 2.0]


def test_cuda_locations_need_map_location_as_in_torch(torch):
    import io
    import zipfile

    src = saved(torch, {"w": torch.ones(2)})
    zin, out = zipfile.ZipFile(io.BytesIO(src)), io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name in zin.namelist():
            data = zin.read(name)
            if name.endswith("data.pkl"):
                data = data.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
            zf.writestr(name, data)
    data = out.getvalue()
    with pytest.raises(RuntimeError) as theirs:
        loaded(torch, data)
    with pytest.raises(RuntimeError) as ours:
        loaded(hookgrad, data)
    assert str(ours.value) == str(theirs.value)
    for where in ("cpu", torch.device("cpu"), {"cuda:0": "cpu"}):
        assert loaded(torch, data, map_location=where)["w"].tolist() == [1.0, 1.0]
        hg_where = hookgrad.device("cpu") if not isinstance(where, (str, dict)) else where
        assert loaded(hookgrad, data, map_location=hg_where)["w"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_whole_module_of_every_layer_type_loads_with_weights_only_false(torch, name):
    theirs = LAYERS[name](torch.nn)
    ours = loaded(hookgrad, saved(torch, theirs), weights_only=False)
    assert type(ours) is getattr(hookgrad.nn, name)
    assert repr(ours) == repr(theirs)
    assert walk(ours.state_dict()) == walk(theirs.state_dict())


def test_big_endian_archives_are_byte_swapped_as_in_torch(torch):
    import io
    import zipfile

    import numpy as np

    src = saved(torch, {"f": torch.arange(5.0) / 3, "i": torch.arange(4) * 1000,
                        "h": torch.arange(3, dtype=torch.float16)})
    zin, out = zipfile.ZipFile(io.BytesIO(src)), io.BytesIO()
    dtypes = {"0": "<f4", "1": "<i8", "2": "<f2"}
    with zipfile.ZipFile(out, "w") as zf:
        for name in zin.namelist():
            data = zin.read(name)
            key = name.rsplit("/", 1)[1]
            if name.endswith("/byteorder"):
                data = b"big"
            elif "/data/" in name:
                data = np.frombuffer(data, dtypes[key]).astype(dtypes[key].replace("<", ">"))
                data = data.tobytes()
            zf.writestr(name, data)
    data = out.getvalue()
    assert walk(loaded(hookgrad, data)) == walk(loaded(torch, data))
    assert loaded(hookgrad, data)["i"].tolist() == [0, 1000, 2000, 3000]
