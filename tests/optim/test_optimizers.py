"""Built-in optimizers against the oracle: same weights and gradients, 20 steps, every step."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1,
             "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    ("Adam", {"maximize": True, "betas": (0.3, 0.9), "eps": 1e-6}),  # lerp's large-weight branch
    ("AdamW", {"lr": 0.01}),
    ("AdamW", {"amsgrad": True, "weight_decay": 0.1, "maximize": True}),
    ("RMSprop", {}),
    ("RMSprop", {"momentum": 0.9, "centered": True, "weight_decay": 0.1}),
    ("RMSprop", {"centered": True, "maximize": True, "alpha": 0.3}),
    ("Adagrad", {}),
    ("Adagrad", {"lr_decay": 0.01, "weight_decay": 0.1, "initial_accumulator_value": 0.1,
                 "maximize": True, "eps": 1e-8}),
]
# float32: centered RMSprop subtracts two close averages; a different (equally valid) operation
# order on another CPU shows ~1e-6 absolute noise there, so atol is 1e-5 in float32.
TOL = {np.float32: {"rtol": 1e-5, "atol": 1e-5}, np.float64: {"rtol": 1e-12, "atol": 1e-13}}
SHAPES = [(5, 3), (37,), ()]


def _case_id(case: tuple) -> str:
    name, kw = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in kw.items())


class _Run:
    """One library's copy of the experiment: params built from the same NumPy arrays."""

    def __init__(self, lib, name, kwargs, init):
        self.lib = lib
        self.params = [lib.from_numpy(a.copy()).requires_grad_() for a in init]
        self.opt = getattr(lib.optim, name)(self.params, **kwargs)

    def step(self, grads):
        for p, g in zip(self.params, grads, strict=True):
            p.grad = None if g is None else self.lib.from_numpy(g.copy())
        return self.opt.step()


def _assert_state_close(mine: dict, theirs: dict, tol: dict) -> None:
    assert mine["param_groups"] == theirs["param_groups"]
    assert mine["state"].keys() == theirs["state"].keys()
    for pid, their_state in theirs["state"].items():
        my_state = mine["state"][pid]
        assert my_state.keys() == their_state.keys()
        for key, value in their_state.items():
            mine_v = my_state[key]
            assert str(mine_v.dtype) == str(value.dtype), key
            assert tuple(mine_v.shape) == tuple(value.shape), key
            np.testing.assert_allclose(mine_v.numpy(), value.numpy(), **tol, err_msg=key)


@pytest.mark.oracle
@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_optimizer_matches_torch_step_by_step(torch, case, dt):
    name, kwargs = case
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s).astype(dt) for s in SHAPES]
    mine, theirs = _Run(hookgrad, name, kwargs, init), _Run(torch, name, kwargs, init)
    for step in range(20):
        grads = [rng.standard_normal(s).astype(dt) for s in SHAPES]
        if step % 2:
            grads[2] = None  # a parameter without gradient is skipped (and gets no state)
        mine.step(grads)
        theirs.step(grads)
        for p, q in zip(mine.params, theirs.params, strict=True):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), **TOL[dt])
        _assert_state_close(mine.opt.state_dict(), theirs.opt.state_dict(), TOL[dt])


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_state_step_is_a_tensor_like_torch(torch, name):
    def run(lib):
        p = lib.ones(3, requires_grad=True)
        opt = getattr(lib.optim, name)([p], lr=0.1, **({"momentum": 0.5} if name == "SGD" else {}))
        p.grad = lib.ones(3)
        opt.step()
        opt.step()
        return {k: (type(v).__name__, str(v.dtype), tuple(v.shape), v.tolist())
                for k, v in opt.state[p].items()}

    mine, theirs = run(hookgrad), run(torch)
    assert list(mine) == list(theirs)
    for key in theirs:  # same dtype and shape exactly, values to float tolerance
        assert mine[key][1:3] == theirs[key][1:3]
        np.testing.assert_allclose(mine[key][3], theirs[key][3], rtol=1e-6)
    assert all(v[0] == "Tensor" for v in mine.values())


def test_step_updates_in_place_and_bumps_version():
    p = hookgrad.ones(3, requires_grad=True)
    data = p._data
    opt = hookgrad.optim.Adam([p], lr=0.1)
    p.grad = hookgrad.ones(3)
    before = p._version
    opt.step()
    assert p._data is data  # no new array: an in-place update
    assert p._version == before + 1
    assert opt.state[p]["exp_avg"]._version == 1


@pytest.mark.parametrize("enabled", [True, False])
def test_step_restores_the_callers_grad_mode(enabled):
    p = hookgrad.ones(1, requires_grad=True)
    p.grad = hookgrad.ones(1)
    opt = hookgrad.optim.SGD([p], lr=0.1)
    with hookgrad.set_grad_enabled(enabled):
        opt.step()
        assert hookgrad.is_grad_enabled() is enabled


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_closure_is_called_with_grad_enabled_and_its_loss_returned(name):
    p = hookgrad.ones(2, requires_grad=True)
    opt = getattr(hookgrad.optim, name)([p], lr=0.1)
    modes = []

    def closure():
        modes.append(hookgrad.is_grad_enabled())
        p.grad = hookgrad.ones(2)
        return 3.5

    with hookgrad.no_grad():
        assert opt.step(closure) == 3.5
    assert modes == [True]
    assert p.tolist() != [1.0, 1.0]


@pytest.mark.parametrize(
    ("name", "kwargs", "message"),
    [
        ("SGD", {"lr": -1.0}, "Invalid learning rate: -1.0"),
        ("SGD", {"momentum": -0.1}, "Invalid momentum value: -0.1"),
        ("SGD", {"nesterov": True}, "Nesterov momentum requires a momentum and zero dampening"),
        ("Adam", {"betas": (1.0, 0.9)}, "Invalid beta parameter at index 0: 1.0"),
        ("Adam", {"eps": -1.0}, "Invalid epsilon value: -1.0"),
        ("RMSprop", {"alpha": -1.0}, "Invalid alpha value: -1.0"),
        ("Adagrad", {"lr_decay": -1.0}, "Invalid lr_decay value: -1.0"),
    ],
)
def test_invalid_hyperparameters_raise_torch_messages(name, kwargs, message):
    p = hookgrad.ones(1, requires_grad=True)
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(") + "$"):
        getattr(hookgrad.optim, name)([p], **kwargs)


def test_unsupported_modes_are_rejected():
    p = hookgrad.ones(1, requires_grad=True)
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        hookgrad.optim.SGD([p], differentiable=True)
    with pytest.raises(NotImplementedError, match="capturable=True"):
        hookgrad.optim.Adam([p], capturable=True)
