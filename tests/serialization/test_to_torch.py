"""Files written by `hookgrad.save` load in ``torch.load`` (oracle tests)."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest

import hookgrad
from tests.serialization._helpers import facts, loaded, saved, sharing, walk
from tests.serialization.test_from_torch import DTYPES, LAYERS, OPTIMIZERS, _trained_state

pytestmark = pytest.mark.oracle


def _both(torch, build):
    """`build` run on each library, hookgrad's saved and loaded by torch (weights only)."""
    ours = build(hookgrad)
    theirs = loaded(torch, saved(hookgrad, ours), weights_only=True)
    return ours, theirs


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_with_views_loads_equal_in_torch(torch, dtype):
    def build(lib):
        base = lib.arange(-6, 18).reshape(4, 6) * 7
        t = (base % 2 == 0) if dtype == "bool" else base.to(getattr(lib, dtype))
        return [t, t[1:, ::2], t.t(), t[2, 3], t[4:]]

    ours, theirs = _both(torch, build)
    assert [facts(t) for t in theirs] == [facts(t) for t in ours]
    assert sharing(theirs) == sharing(ours)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_state_dicts_of_every_layer_type_load_in_torch(torch, name):
    ours = LAYERS[name](hookgrad.nn).state_dict()
    theirs = loaded(torch, saved(hookgrad, ours), weights_only=True)
    assert type(theirs).__name__ == type(ours).__name__
    assert walk(theirs) == walk(ours)
    LAYERS[name](torch.nn).load_state_dict(theirs)  # strict


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_states_load_in_torch(torch, name):
    ours = _trained_state(hookgrad, name)
    theirs = loaded(torch, saved(hookgrad, ours), weights_only=True)
    assert walk(theirs) == walk(ours)
    model = torch.nn.Linear(3, 2)
    getattr(torch.optim, name)(model.parameters(), **OPTIMIZERS[name]).load_state_dict(theirs)


def test_sharing_offsets_parameters_and_containers_load_in_torch(torch):
    def build(lib):
        b = lib.arange(20.0)
        p = lib.nn.Parameter(lib.ones(3))
        frozen = lib.nn.Parameter(lib.zeros(2), requires_grad=False)
        leaf = lib.ones(2, requires_grad=True)
        return {"b": b, "slice": b[3:9], "t": b.view(4, 5).t(), "empty": b[7:7],
                "p": p, "pd": p.detach(), "frozen": frozen, "leaf": leaf,
                "n": [1, 2.5, None, "s", (True, -3)], "size": lib.Size([2]),
                "dtype": lib.float64, "device": lib.device("cpu")}

    ours, theirs = _both(torch, build)
    assert walk(theirs) == walk({**ours, "size": torch.Size([2]), "dtype": torch.float64,
                                 "device": torch.device("cpu")})
    assert sharing(list(theirs.values())[:8]) == sharing(list(ours.values())[:8])
    assert type(theirs["p"]) is torch.nn.Parameter and not theirs["frozen"].requires_grad


def test_pickled_class_paths_are_torch_paths(torch):
    data = saved(hookgrad, hookgrad.nn.Sequential(hookgrad.nn.Linear(2, 2), hookgrad.nn.GELU()))
    assert sorted(torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data))) == [
        "torch.nn.modules.activation.GELU", "torch.nn.modules.container.Sequential",
        "torch.nn.modules.linear.Linear"]
    assert sorted(hookgrad.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data))) \
        == sorted(torch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data)))


@pytest.mark.parametrize("name", ["Linear", "Conv2d", "Sequential", "LayerNorm", "GRU"])
def test_whole_modules_load_in_torch_and_compute_the_same(torch, name):
    ours = LAYERS[name](hookgrad.nn)
    data = saved(hookgrad, ours)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        loaded(torch, data)  # weights_only=True, as in torch
    theirs = loaded(torch, data, weights_only=False)
    assert isinstance(theirs, torch.nn.Module) and type(theirs).__name__ == type(ours).__name__
    x = {"Linear": (2, 4), "Conv2d": (1, 2, 5, 5), "Sequential": (3, 2), "LayerNorm": (2, 4),
         "GRU": (5, 2, 3)}[name]
    arr = np.linspace(-1, 1, int(np.prod(x)), dtype=np.float32).reshape(x)
    out_t, out_h = theirs(torch.from_numpy(arr)), ours(hookgrad.from_numpy(arr))
    if isinstance(out_t, tuple):
        out_t, out_h = out_t[0], out_h[0]
    np.testing.assert_allclose(out_t.detach().numpy(), out_h.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    back = loaded(hookgrad, data, weights_only=False)  # and hookgrad reads its own module
    assert type(back) is type(ours)


def test_any_picklable_object_round_trips_with_weights_only_false(torch):
    obj = {"arr": np.arange(4.0), "np": np.float32(2.5), "fn": len, "t": hookgrad.ones(2)}
    data = saved(hookgrad, obj)
    theirs = loaded(torch, data, weights_only=False)
    assert theirs["arr"].tolist() == [0, 1, 2, 3] and theirs["fn"] is len
    assert theirs["t"].tolist() == [1.0, 1.0]
    ours = loaded(hookgrad, data, weights_only=False)
    assert type(ours["np"]) is np.float32 and ours["t"].tolist() == [1.0, 1.0]


def test_archive_layout_matches_torch_save(torch, tmp_path):
    import zipfile

    hookgrad.save({"w": hookgrad.ones(2)}, tmp_path / "model.pt")
    torch.save({"w": torch.ones(2)}, tmp_path / "ref.pt")
    ours = zipfile.ZipFile(tmp_path / "model.pt").namelist()
    theirs = zipfile.ZipFile(tmp_path / "ref.pt").namelist()
    assert [n.split("/", 1)[1] for n in ours] == [n.split("/", 1)[1] for n in theirs]
    assert {n.split("/", 1)[0] for n in ours} == {"model"}
    assert torch.load(tmp_path / "model.pt", mmap=True)["w"].tolist() == [1.0, 1.0]


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated:UserWarning")
def test_a_tensor_and_its_untyped_storage_cannot_be_saved_together(torch):
    for lib in (torch, hookgrad):
        t = lib.arange(3.0)
        with pytest.raises(RuntimeError, match="view the same data as different types"):
            saved(lib, [t, t.untyped_storage()])
    s = hookgrad.arange(3.0).untyped_storage()
    theirs = loaded(torch, saved(hookgrad, s), weights_only=True)
    assert theirs.nbytes() == 12  # torch returns a TypedStorage of uint8 here
    assert type(loaded(hookgrad, saved(hookgrad, s))).__name__ == type(theirs).__name__


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_whole_module_of_every_layer_type_loads_in_torch(torch, name):
    ours = LAYERS[name](hookgrad.nn)
    theirs = loaded(torch, saved(hookgrad, ours), weights_only=False)
    assert type(theirs) is getattr(torch.nn, name)
    assert repr(theirs) == repr(ours)
    assert walk(theirs.state_dict()) == walk(ours.state_dict())


def test_legacy_format_written_by_hookgrad_loads_in_torch(torch):
    def build(lib):
        t = lib.arange(12.0).reshape(3, 4)
        many = [lib.full((2,), float(i)) for i in range(12)]  # keys "10", "11" sort as text
        return {"w": t, "v": t[1:, ::2], "p": lib.nn.Parameter(lib.ones(2)), "many": many,
                "i": lib.arange(5, dtype=lib.int16)}

    ours = build(hookgrad)
    data = saved(hookgrad, ours, _use_new_zipfile_serialization=False)
    assert not data.startswith(b"PK")
    theirs = loaded(torch, data, weights_only=True)
    assert walk(theirs) == walk(ours)
    assert sharing([theirs["w"], theirs["v"]]) == [(0, 1)]
    assert walk(loaded(hookgrad, data)) == walk(ours)
