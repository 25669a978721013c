"""``hookgrad.hooktools.capture_activations``: on hookgrad models and, unchanged, on torch ones."""

from __future__ import annotations

import ast
import inspect

import pytest

import hookgrad
from hookgrad.hooktools import capture, capture_activations, monitor
from tests.hooktools._models import batch, close, cnn, mlp, pair


@pytest.mark.parametrize("mod", [capture, monitor], ids=["capture", "monitor"])
def test_tool_imports_nothing_library_specific(mod):
    """Only public hook APIs: the same tool must run on torch models."""
    tree = ast.parse(inspect.getsource(mod))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            imported.add((node.module or "").split(".")[0])
    assert imported <= {"__future__", "collections", "typing", "math", "numpy"}


@pytest.mark.oracle
@pytest.mark.parametrize(("build", "shape"), [(mlp, (5, 4)), (cnn, (2, 1, 6, 6))],
                         ids=["mlp", "cnn"])
def test_capture_every_leaf_matches_torch(torch, build, shape):
    tm, hm = pair(torch, build)
    x, _ = batch(shape)
    got = {}
    for lib, model in ((torch, tm), (hookgrad, hm)):
        with capture_activations(model) as acts:
            model(lib.tensor(x))
        got[lib.__name__] = acts
    t, h = got["torch"], got["hookgrad"]
    assert h.keys() == t.keys() == [str(i) for i in range(len(hm))]
    for name in h.names:
        assert tuple(h[name].shape) == tuple(t[name].shape)
        assert close(h[name].numpy(), t[name].numpy())


@pytest.mark.oracle
def test_capture_named_subset_keep_all_matches_torch(torch):
    tm, hm = pair(torch, mlp)
    x1, _ = batch((3, 4), seed=1)
    x2, _ = batch((2, 4), seed=2)
    got = {}
    for lib, model in ((torch, tm), (hookgrad, hm)):
        with capture_activations(model, ["1", "4"], keep_all=True) as acts:
            model(lib.tensor(x1))
            model(lib.tensor(x2))
        got[lib.__name__] = acts
    t, h = got["torch"], got["hookgrad"]
    assert h.names == ["1", "4"] and "0" not in h and "1" in h
    for name in ("1", "4"):
        assert len(h.calls[name]) == len(t.calls[name]) == 2
        for a, b in zip(h.calls[name], t.calls[name], strict=True):
            assert close(a.numpy(), b.numpy())
        assert h[name] is h.calls[name][-1]


def test_capture_detaches_by_default():
    model = mlp(hookgrad)
    x = hookgrad.ones(2, 4)
    with capture_activations(model, ["0"]) as acts:
        out = model(x)
    assert out.requires_grad and not acts["0"].requires_grad and acts["0"].grad_fn is None
    assert acts.calls["0"] == []  # keep_all is off


def test_capture_without_detach_keeps_graph():
    model = mlp(hookgrad)
    with capture_activations(model, ["2"], detach=False) as acts:
        model(hookgrad.ones(2, 4)).sum().backward()
    assert acts["2"].grad_fn is not None
    assert acts["2"].grad_fn.name() == "AddmmBackward0"


def test_capture_removes_hooks_on_exit_and_on_error():
    model = mlp(hookgrad)
    with capture_activations(model):
        assert all(len(m._forward_hooks) == 1 for m in model)
    assert all(len(m._forward_hooks) == 0 for m in model)
    with pytest.raises(ValueError, match="boom"), capture_activations(model):
        raise ValueError("boom")
    assert all(len(m._forward_hooks) == 0 for m in model)


def test_capture_unknown_name_raises_key_error():
    with pytest.raises(KeyError, match="no submodule named 'nope'"):
        capture_activations(mlp(hookgrad), ["0", "nope"])


def test_capture_tuple_and_dict_outputs_detached():
    class Split(hookgrad.nn.Module):
        def forward(self, x):
            return (x * 2, x * 3), {"sum": x.sum()}

    model = hookgrad.nn.Sequential()
    model.add_module("split", Split())
    x = hookgrad.ones(2, requires_grad=True)
    with capture_activations(model, ["split"]) as acts:
        model(x)
    (a, b), d = acts["split"]
    assert not a.requires_grad and not b.requires_grad and not d["sum"].requires_grad
    assert b.tolist() == [3.0, 3.0] and d["sum"].item() == 2.0
