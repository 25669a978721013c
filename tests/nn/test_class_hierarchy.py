"""Every public nn module class has PyTorch's base classes, private ones included.

Tools dispatch on the bases (``isinstance(m, nn.modules.conv._ConvNd)``, ``_DropoutNd``,
``_BatchNorm``, ``_Loss``...), so the ancestry within ``nn.modules`` must be PyTorch's: same
names, same order, each at PyTorch's module path.
"""

from __future__ import annotations

import inspect

import pytest

import hookgrad

# Differences hookgrad keeps on purpose, with the reason.
DEPARTURES = {
}


def _torch_lineage(cls: type) -> list[tuple[str, str]]:
    """(file, name) of each ``torch.nn.modules`` class in `cls`'s MRO, Module excluded."""
    return [(c.__module__.rsplit(".", 1)[-1], c.__name__) for c in cls.__mro__
            if c.__module__.startswith("torch.nn.modules.") and c.__name__ != "Module"]


def _public_classes(torch) -> list[str]:
    return sorted(n for n, c in vars(torch.nn).items()
                  if inspect.isclass(c) and issubclass(c, torch.nn.Module) and not n.startswith("_"))


def test_public_module_classes_have_torchs_ancestry(torch):
    """The torch-named classes in each MRO, in order, are the objects at PyTorch's paths."""
    diffs = {}
    for name in _public_classes(torch):
        ours = getattr(hookgrad.nn, name, None)
        if ours is None or name in DEPARTURES:
            continue
        theirs = _torch_lineage(getattr(torch.nn, name))
        names = {n for _, n in theirs}
        mine = [c for c in ours.__mro__ if c.__name__ in names]
        expected = []
        for file, base in theirs:
            module = getattr(hookgrad.nn.modules, file, None)
            expected.append(getattr(module, base, None))
        if mine != expected:
            diffs[name] = ([f"{f}.{n}" for f, n in theirs], [c.__qualname__ for c in mine])
    assert not diffs, "\n".join(f"{k}: torch {v[0]} hookgrad {v[1]}" for k, v in diffs.items())
