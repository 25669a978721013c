"""``distributed.checkpoint.state_dict`` against PyTorch (one process, no process group):
FQN-keyed model and optimizer state dicts, their options, loading them back; and the sharded
DCP names that exist only to raise NotImplementedError."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _setup(lib):
    rng = np.random.default_rng(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.normal(size=tuple(p.shape)).astype(np.float32)))
    model[0].bias.requires_grad_(False)
    adam = lib.optim.Adam([{"params": [model[0].weight, model[1].weight], "lr": 0.1},
                           {"params": [model[1].bias, model[2].weight, model[2].bias]}], lr=0.01)
    sgd = lib.optim.SGD([model[0].bias], lr=0.5, momentum=0.9)
    x = lib.tensor(rng.normal(size=(5, 3)).astype(np.float32))
    model(x).pow(2).sum().backward()
    adam.step()
    return model, adam, sgd, x


def _plain(obj):
    if hasattr(obj, "detach"):
        return np.round(obj.detach().numpy().astype(np.float64), 4).tolist()  # float32 noise
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def _scenario(lib):
    sd = importlib.import_module(lib.__name__ + ".distributed.checkpoint.state_dict")
    model, adam, sgd, x = _setup(lib)
    out = {"model": _plain(sd.get_model_state_dict(model)),
           "model_keys": list(sd.get_model_state_dict(model)),
           "unfrozen": list(sd.get_model_state_dict(
               model, options=sd.StateDictOptions(ignore_frozen_params=True))),
           "optim": _plain(sd.get_optimizer_state_dict(model, adam)),
           "both": _plain(sd.get_optimizer_state_dict(model, (adam, sgd))),
           "flat": _plain(sd.get_optimizer_state_dict(
               model, adam, options=sd.StateDictOptions(flatten_optimizer_state_dict=True)))}
    msd, osd = sd.get_state_dict(model, adam)
    flat = sd.get_optimizer_state_dict(
        model, adam, options=sd.StateDictOptions(flatten_optimizer_state_dict=True))
    model2, adam2, _, _ = _setup(lib)
    for p in model2.parameters():
        p.data.mul_(0)
    out["set"] = str(sd.set_state_dict(model2, adam2, model_state_dict=msd, optim_state_dict=osd))
    model2(x).pow(2).sum().backward()
    adam2.step()
    out["after_step"] = _plain(list(model2.parameters()))
    model3, adam3, _, _ = _setup(lib)
    sd.set_optimizer_state_dict(model3, adam3, flat)
    out["from_flat"] = _plain(adam3.state_dict())
    out["partial"] = str(sd.set_model_state_dict(
        model2, {"0.weight": msd["0.weight"]}, options=sd.StateDictOptions(strict=False)))
    try:
        sd.set_model_state_dict(model2, {"0.weight": msd["0.weight"]})
    except Exception as e:  # noqa: BLE001 - type and text compared
        out["strict"] = [type(e).__name__, str(e).replace(type(model2).__name__, "M")]
    return out


def test_state_dicts_match_torch(torch):
    ours, theirs = _scenario(hookgrad), _scenario(torch)
    assert sorted(ours) == sorted(theirs)
    for key in theirs:
        assert ours[key] == theirs[key], key


def test_dcp_names_exist_and_raise(torch):
    import torch.distributed.checkpoint as tdcp

    from hookgrad._unsupported.table import GROUPS
    from hookgrad.distributed import checkpoint as dcp

    names = [n for g in GROUPS if g.owner.startswith("hookgrad.distributed.checkpoint")
             for n in g.names.split()]
    assert len(names) == 25
    for name in names:
        assert hasattr(tdcp, name), name  # every stand-in names something PyTorch has
        with pytest.raises(NotImplementedError, match="hookgrad"):
            getattr(dcp, name)("path")
    assert dcp.HuggingFaceStorageReader is dcp.hf_storage.HuggingFaceStorageReader
    assert issubclass(dcp.CheckpointException, BaseException)
    assert dcp.CheckpointException("m", {0: "x"}).failures == {0: "x"}
