"""hookgrad classes pickle under PyTorch's paths, and PyTorch's paths resolve to them."""

from __future__ import annotations

import inspect
import warnings

import pytest

import hookgrad
from hookgrad._serialization import _class_paths
from hookgrad._serialization._full_unpickler import resolve
from tests.census.generate_class_paths import module_pairs

pytestmark = pytest.mark.oracle


def _pairs(torch):
    """Every public class of every torch module hookgrad also has (the generator's scope)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for hns, tns in module_pairs():
            for name in dir(tns):
                ours, theirs = getattr(hns, name, None), getattr(tns, name, None)
                if not name.startswith("_") and inspect.isclass(ours) and \
                        inspect.isclass(theirs) and ours.__module__.startswith("hookgrad") \
                        and theirs.__module__.startswith("torch"):
                    yield name, ours, theirs


def test_every_public_class_maps_to_torchs_path_and_back(torch):
    pairs = list(_pairs(torch))
    assert len(pairs) > 500
    wrong = [(name, _class_paths.torch_path(ours.__module__, ours.__qualname__),
              (theirs.__module__, theirs.__qualname__)) for name, ours, theirs in pairs
             if _class_paths.torch_path(ours.__module__, ours.__qualname__)
             != (theirs.__module__, theirs.__qualname__)]
    # one hookgrad class standing for two PyTorch classes maps to one of them only
    wrong = [w for w in wrong if resolve(*w[2]) is not resolve(*w[1])]
    assert wrong == [], "regenerate with python3 -m tests.census.generate_class_paths"
    # storage classes resolve to the unpickler's storage types (a pickle names them as dtypes)
    unresolved = [name for name, ours, theirs in pairs if not name.endswith("Storage")
                  and resolve(theirs.__module__, theirs.__qualname__) is not ours]
    assert unresolved == []


def test_whole_objects_pickled_by_one_library_load_in_the_other(torch, tmp_path):
    nn = hookgrad.nn
    obj = [nn.Sequential(nn.Conv3d(1, 2, 1), nn.BatchNorm2d(2), nn.MaxPool3d(2),
                         nn.DataParallel(nn.Linear(2, 2))),
           hookgrad.distributions.transforms.ExpTransform(),
           hookgrad.utils.data.WeightedRandomSampler([0.5, 0.5], 2)]
    hookgrad.save(obj, tmp_path / "h.pt")
    back = torch.load(tmp_path / "h.pt", weights_only=False)
    assert [type(m).__name__ for m in back[0]] == ["Conv3d", "BatchNorm2d", "MaxPool3d",
                                                   "DataParallel"]
    assert isinstance(back[1], torch.distributions.transforms.ExpTransform)
    assert isinstance(back[2], torch.utils.data.WeightedRandomSampler)
    torch.save(back, tmp_path / "t.pt")
    again = hookgrad.load(tmp_path / "t.pt", weights_only=False)
    assert isinstance(again[0][1], nn.BatchNorm2d) and isinstance(again[0][3], nn.DataParallel)
    assert isinstance(again[1], hookgrad.distributions.transforms.ExpTransform)


def test_unknown_torch_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no counterpart"):
        resolve("torch.nn.modules.linear", "NoSuchLayer")
