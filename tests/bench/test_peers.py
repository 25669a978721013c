"""The peers' bench workloads (`bench.peers`) compute what the torch workloads compute.

Not oracle tests of hookgrad: they check that the harness times the same work in every library
(same data, same gradients, same SGD update). Each peer's tests skip when it is not installed
(the peers are the optional ``hookgrad[peers]`` extra, not part of ``test``).
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from bench import peers
from bench import workloads as W
from bench.peers import _data as D


@pytest.fixture(params=list(peers.PEERS))
def peer(request):
    """A peer's workloads module; skips when the peer library is not installed."""
    pytest.importorskip(peers.PEERS[request.param].distribution)
    return importlib.import_module(peers.PEERS[request.param].module)


def _torch_chain_grad(torch, hook=None):
    x = torch.tensor(D.chain_input(), requires_grad=True)
    y = x
    for _ in range(D.LINKS):
        y = torch.tanh(y * 1.01)
        if hook is not None:
            y.register_hook(hook)
    y.sum().backward()
    return x.grad.numpy()


def _recording_hook(seen: list, double_first: bool = False):
    """Records each gradient; with `double_first`, replaces the first one by twice itself."""

    def hook(g):
        seen.append(np.copy(g.numpy() if hasattr(g, "numpy") else g))  # torch's or an array
        return g * 2 if double_first and len(seen) == 1 else None

    return hook


def test_chain_gradient_equals_torch(peer, torch):
    got = peer.chain_grad(D.chain_input())
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, _torch_chain_grad(torch), rtol=1e-4, atol=1e-6)


def test_hook_workaround_sees_the_gradients_a_torch_tensor_hook_sees(peer, torch):
    ours, theirs = [], []
    peer.chain_grad(D.chain_input(), _recording_hook(ours))
    _torch_chain_grad(torch, _recording_hook(theirs))
    assert len(ours) == len(theirs) == D.LINKS
    for a, b in zip(ours, theirs, strict=True):  # same order: last link first
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_hook_workaround_replaces_the_gradient_as_torch_does(peer, torch):
    got = peer.chain_grad(D.chain_input(), _recording_hook([], double_first=True))
    want = _torch_chain_grad(torch, _recording_hook([], double_first=True))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got, 2 * _torch_chain_grad(torch), rtol=1e-4, atol=1e-6)


def test_first_values_equal_torch(peer, torch):
    torch.manual_seed(0)
    for name in peer.BUILDERS:
        _, first = peer.build(name)
        _, want = W.TABLE[name][0](torch)
        assert first == pytest.approx(want, rel=1e-5, abs=1e-5), name


def test_workloads_a_peer_cannot_express_are_unavailable(peer):
    missing = [name for name in W.TABLE if name not in peer.BUILDERS]
    assert "lstm" in missing and "hooked_mlp" in missing
    for name in missing:
        with pytest.raises(peers.Unavailable):
            peer.build(name)


def _torch_mlp_after_one_step(torch, batch, loss):
    model, x, y = W._mlp_setup(torch, batch)
    if loss == "mse":
        y, loss_fn = torch.tensor(D.mse_target(batch)), torch.nn.MSELoss()
    else:
        loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    opt.zero_grad()
    loss_fn(model(x), y).backward()
    opt.step()
    return [p.detach().numpy() for p in model.parameters()]


@pytest.mark.parametrize(("batch", "loss"), [(64, "ce"), (1, "mse")])
def test_mlp_step_is_torch_sgd_step(peer, torch, batch, loss):
    step, first, params, current = peer.mlp_step(batch, loss)
    step()
    want = _torch_mlp_after_one_step(torch, batch, loss)
    for p, w in zip(params, want, strict=True):
        got = np.asarray(p)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got.T if got.ndim == 2 else got, w, rtol=1e-4, atol=1e-6)
    for _ in range(4):
        step()
    assert current() < first


def _torch_hvp(torch):
    w1, w2, x, v1, v2 = (torch.tensor(a) for a in D.hvp())
    w1.requires_grad_(True)
    w2.requires_grad_(True)
    loss = (torch.tanh(x @ w1) @ w2).pow(2).mean()
    g1, g2 = torch.autograd.grad(loss, (w1, w2), create_graph=True)
    return torch.autograd.grad((g1 * v1).sum() + (g2 * v2).sum(), (w1, w2))


def test_hvp_equals_torch_or_is_unavailable(peer, torch):
    if "hvp" not in peer.BUILDERS:  # MyGrad: no higher-order gradients
        pytest.skip(f"{peer.__name__} has no hvp")
    step, _ = peer.build("hvp")
    for got, want in zip(step(), _torch_hvp(torch), strict=True):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-4, atol=1e-6)


def test_cnn_step_lowers_the_loss(peer):
    if "cnn" not in peer.BUILDERS:  # HIPS autograd: no convolution in autograd.numpy
        pytest.skip(f"{peer.__name__} has no cnn")
    step, first, _, current = peer.cnn_step()
    for _ in range(3):
        step()
    assert current() < first
