"""Modules on the meta device, compared with PyTorch: ``device="meta"`` construction, ``with
device("meta")``, ``to("meta")``, ``to_empty`` + ``reset_parameters``, accelerate's
``init_empty_weights`` pattern, ``load_state_dict(assign=True)``, forward and backward."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import hookgrad
from tests._errors import err
from tests.meta._lib import info


def _params(m):
    return [(name, *info(p), type(p).__name__, p.requires_grad)
            for name, p in m.state_dict(keep_vars=True).items()]


def _net(L, **kw):
    return L.nn.Sequential(
        L.nn.Conv2d(1, 4, 3, padding=1, **kw), L.nn.BatchNorm2d(4, **kw), L.nn.ReLU(),
        L.nn.Flatten(), L.nn.Linear(4 * 6 * 6, 8, **kw), L.nn.LayerNorm(8, **kw),
        L.nn.Linear(8, 3, **kw))


BUILDS = {
    "linear_kwarg": lambda L: L.nn.Linear(5, 3, device="meta"),
    "linear_f64": lambda L: L.nn.Linear(5, 3, device="meta", dtype=L.float64),
    "linear_positional": lambda L: L.nn.Linear(5, 3, True, "meta"),
    "conv_positional": lambda L: L.nn.Conv2d(1, 2, 3, 1, 0, 1, 1, True, "zeros", "meta"),
    "layernorm_device_obj": lambda L: L.nn.LayerNorm(3, device=L.device("meta")),
    "embedding": lambda L: L.nn.Embedding(10, 4, device="meta"),
    "lstm": lambda L: L.nn.LSTM(3, 4, num_layers=2, device="meta"),
    "net_kwarg": lambda L: _net(L, device="meta"),
    "net_context": lambda L: _in_meta(L, lambda: _net(L)),
    "to_meta": lambda L: _net(L).to("meta"),
    "transformer_layer": lambda L: L.nn.TransformerEncoderLayer(8, 2, 16, device="meta"),
}


def _in_meta(L, make):
    with L.device("meta"):
        return make()


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_meta_modules_match_torch(torch, name):
    assert _params(BUILDS[name](hookgrad)) == _params(BUILDS[name](torch))


def test_meta_construction_draws_no_random_numbers():
    hookgrad.manual_seed(0)
    _net(hookgrad, device="meta")
    a = hookgrad.rand(3)
    hookgrad.manual_seed(0)
    assert hookgrad.equal(a, hookgrad.rand(3))


def _to_empty(L):
    m = _net(L, device="meta")
    same = m.to_empty(device="cpu")
    out = [same is m] + _params(m)
    for sub in m.modules():
        if hasattr(sub, "reset_parameters"):
            sub.reset_parameters()
    out += _params(m)
    out.append(tuple(m(L.ones(2, 1, 6, 6)).shape))
    return out


def test_to_empty_then_reset_parameters(torch):
    assert _to_empty(hookgrad) == _to_empty(torch)


def test_to_empty_values_are_initialised_like_a_cpu_build():
    hookgrad.manual_seed(3)
    ref = hookgrad.nn.Linear(4, 2)
    m = hookgrad.nn.Linear(4, 2, device="meta").to_empty(device="cpu")
    hookgrad.manual_seed(3)
    m.reset_parameters()
    assert np.array_equal(m.weight.detach().numpy(), ref.weight.detach().numpy())


def _forward_backward(L):
    m = _net(L, device="meta")
    x = L.empty(2, 1, 6, 6, device="meta")
    y = m(x)
    loss = L.nn.functional.cross_entropy(y, L.empty(2, dtype=L.long, device="meta"))
    loss.backward()
    return [info(y), info(loss)] + [info(p.grad) for p in m.parameters()]


def test_forward_backward_on_meta_model(torch, mode):
    assert _forward_backward(hookgrad) == _forward_backward(torch)


@contextlib.contextmanager
def _init_empty_weights(L, include_buffers=False):
    """A small version of accelerate's ``init_empty_weights``: parameters registered while it
    is active move to meta (the constructor still runs its initialisation on CPU first)."""
    old = L.nn.Module.register_parameter

    def register_empty_parameter(module, name, param):
        old(module, name, param)
        if param is not None:
            cls = type(module._parameters[name])
            kwargs = module._parameters[name].__dict__
            kwargs["requires_grad"] = param.requires_grad
            module._parameters[name] = cls(module._parameters[name].to(L.device("meta")),
                                           **kwargs)

    L.nn.Module.register_parameter = register_empty_parameter
    try:
        yield
    finally:
        L.nn.Module.register_parameter = old


def _accelerate(L):
    with _init_empty_weights(L):
        m = _net(L)
    out = _params(m)
    sd = {k: L.zeros(v.shape, dtype=v.dtype) for k, v in m.state_dict().items()}
    result = m.load_state_dict(sd, assign=True)
    out.append((list(result.missing_keys), list(result.unexpected_keys)))
    out += _params(m)
    return out


def test_init_empty_weights_pattern_then_load_assign(torch):
    assert _accelerate(hookgrad) == _accelerate(torch)


def test_load_state_dict_without_assign_into_meta_keeps_meta(torch):
    def run(L):
        m = L.nn.Linear(3, 2, device="meta")
        with pytest.warns(UserWarning) as seen:
            m.load_state_dict(L.nn.Linear(3, 2).state_dict())
        return _params(m) + sorted(str(w.message) for w in seen)
    assert run(hookgrad) == run(torch)


def test_meta_model_to_cpu_raises_as_torch(torch):
    mine = err(lambda: hookgrad.nn.Linear(2, 2, device="meta").to("cpu"))
    theirs = err(lambda: torch.nn.Linear(2, 2, device="meta").to("cpu"))
    assert mine is not None and theirs is not None and mine[0] == theirs[0], (mine, theirs)


def test_optimizer_step_on_meta_parameters(torch):
    def run(L):
        m = L.nn.Linear(4, 3, device="meta")
        opt = L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        m(L.empty(5, 4, device="meta")).sum().backward()
        opt.step()
        return _params(m)
    assert run(hookgrad) == run(torch)


def test_adam_family_state_on_meta(torch):
    def run(L):
        m = L.nn.Linear(3, 2, device="meta")
        out = []
        for make in (L.optim.Adam, L.optim.AdamW, L.optim.RMSprop):
            opt = make(m.parameters())
            m(L.empty(4, 3, device="meta")).sum().backward()
            opt.step()
            out.append({k: info(v) for k, v in opt.state[m.weight].items()})
        return out
    assert run(hookgrad) == run(torch)


def test_skip_init_builds_on_meta_then_allocates(torch):
    def run(L):
        L.manual_seed(0)
        m = L.nn.utils.skip_init(L.nn.Linear, 5, 3)
        drawn = L.rand(2)
        L.manual_seed(0)
        return _params(m) + [L.equal(drawn, L.rand(2))]
    assert run(hookgrad) == run(torch)
