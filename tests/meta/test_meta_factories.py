"""Meta tensors from factories, ``.to("meta")`` and the default device, compared with PyTorch:
metadata, repr, and the errors of everything that would need the values."""

from __future__ import annotations

import pytest

import hookgrad
from tests._errors import err
from tests.meta._lib import info

FACTORIES = {
    "empty": lambda L: L.empty(3, 4, device="meta"),
    "empty_tuple": lambda L: L.empty((2, 0, 5), device="meta"),
    "zeros_f64": lambda L: L.zeros(3, dtype=L.float64, device="meta"),
    "ones_int": lambda L: L.ones(2, 3, dtype=L.int32, device="meta"),
    "full": lambda L: L.full((2, 2), 7, device="meta"),
    "full_float": lambda L: L.full((2,), 1.5, device="meta"),
    "rand": lambda L: L.rand(4, 5, device="meta"),
    "randn": lambda L: L.randn(2, 3, dtype=L.float64, device="meta"),
    "randint": lambda L: L.randint(0, 9, (3, 2), device="meta"),
    "arange": lambda L: L.arange(10, device="meta"),
    "arange_float": lambda L: L.arange(0, 1, 0.3, device="meta"),
    "linspace": lambda L: L.linspace(0, 1, 7, device="meta"),
    "eye": lambda L: L.eye(3, 4, device="meta"),
    "tensor": lambda L: L.tensor([[1, 2], [3, 4]], device="meta"),
    "scalar": lambda L: L.tensor(2.5, device="meta"),
    "empty_like": lambda L: L.empty_like(L.ones(2, 3), device="meta"),
    "zeros_like_meta": lambda L: L.zeros_like(L.empty(4, 2, device="meta").t()),
    "ones_like_meta": lambda L: L.ones_like(L.empty(4, 2, device="meta")),
    "rand_like": lambda L: L.rand_like(L.empty(4, 2, device="meta")),
    "new_zeros": lambda L: L.empty(2, device="meta").new_zeros(3, 1),
    "to_meta": lambda L: L.ones(2, 3).to("meta"),
    "to_meta_strided": lambda L: L.ones(2, 3).t().to("meta"),
    "to_meta_dtype": lambda L: L.ones(2, 3).to("meta", L.float64),
    "to_meta_device_obj": lambda L: L.ones(2).to(L.device("meta")),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factories_match_torch(torch, name):
    make = FACTORIES[name]
    assert info(make(hookgrad)) == info(make(torch))


def test_huge_tensors_cost_nothing(torch):
    def run(L):
        return info([L.empty(10**12, device="meta"), L.rand(10**6, 10**6, device="meta"),
                     L.zeros(10**6, 10**7, dtype=L.float64, device="meta"),
                     L.arange(10**12, device="meta"), L.full((10**6, 10**6), 2, device="meta"),
                     L.linspace(0, 1, 10**12, device="meta"), L.eye(10**6, device="meta")])
    assert run(hookgrad) == run(torch)


def test_device_and_flags(torch):
    for L in (torch, hookgrad):
        x = L.empty(2, device="meta")
        assert x.is_meta and x.device.type == "meta" and str(x.device) == "meta"
        assert x.device == L.device("meta") and not L.ones(1).is_meta
        assert x.get_device() == -1 and not x.is_cpu


REPRS = {
    "plain": lambda L: L.empty(3, 4, device="meta"),
    "scalar": lambda L: L.empty((), device="meta"),
    "empty": lambda L: L.empty(0, device="meta"),
    "empty_2d": lambda L: L.empty(2, 0, device="meta"),
    "int64": lambda L: L.empty(3, dtype=L.int64, device="meta"),
    "bool": lambda L: L.empty(3, dtype=L.bool, device="meta"),
    "grad": lambda L: L.empty(3, dtype=L.float64, device="meta", requires_grad=True),
    "grad_fn": lambda L: L.empty(3, device="meta", requires_grad=True) * 2,
    "param": lambda L: L.nn.Parameter(L.empty(2, device="meta")),
}


@pytest.mark.parametrize("name", sorted(REPRS))
def test_repr_matches_torch(torch, name):
    assert repr(REPRS[name](hookgrad)) == repr(REPRS[name](torch))
    assert str(REPRS[name](hookgrad)) == str(REPRS[name](torch))


NO_DATA = {
    "item": lambda L: L.empty((), device="meta").item(),
    "item_many": lambda L: L.empty(3, device="meta").item(),
    "tolist": lambda L: L.empty(3, device="meta").tolist(),
    "bool": lambda L: bool(L.empty((), device="meta")),
    "float": lambda L: float(L.empty(1, device="meta")),
    "int": lambda L: int(L.empty((), dtype=L.int64, device="meta")),
    "to_cpu": lambda L: L.empty(3, device="meta").to("cpu"),
    "cpu": lambda L: L.empty(3, device="meta").cpu(),
    "numpy": lambda L: L.empty(3, device="meta").numpy(),
    "nonzero": lambda L: L.nonzero(L.empty(3, device="meta")),
    "mask": lambda L: L.empty(3, device="meta")[L.empty(3, dtype=L.bool, device="meta")],
    "mix_cpu": lambda L: L.empty(3, device="meta") + L.ones(3),
    "mix_cpu_left": lambda L: L.ones(3) + L.empty(3, device="meta"),
}


@pytest.mark.parametrize("name", sorted(NO_DATA))
def test_what_needs_values_raises_as_torch(torch, name):
    mine, theirs = err(lambda: NO_DATA[name](hookgrad)), err(lambda: NO_DATA[name](torch))
    assert theirs is not None and mine is not None
    assert mine[0] == theirs[0], (mine, theirs)


def test_a_0d_cpu_tensor_joins_a_meta_op(torch):
    for L in (torch, hookgrad):
        assert (L.empty(3, device="meta") + L.tensor(1.0)).device.type == "meta"


def test_default_device_context_and_setter(torch):
    def scenario(L):
        out = []
        with L.device("meta") as d:
            out += [str(d), str(L.get_default_device())]
            out += info([L.empty(2), L.tensor([1.0]), L.arange(3), L.randn(2),
                         L.zeros(2, device="cpu")])
            out.append(L.nn.Linear(2, 3).weight.device.type)
        out.append(str(L.get_default_device()))
        L.set_default_device("meta")
        try:
            out += info([L.ones(1)])
        finally:
            L.set_default_device(None)
        out += info([L.ones(1)])
        return out
    assert scenario(hookgrad) == scenario(torch)


def test_random_factories_on_meta_draw_nothing():
    state = hookgrad.get_rng_state().clone()
    hookgrad.rand(10**9, device="meta")
    hookgrad.randn(3, device="meta")
    hookgrad.randint(0, 5, (10**9,), device="meta")
    hookgrad.empty(10**9, device="meta").uniform_().normal_()
    assert hookgrad.equal(state, hookgrad.get_rng_state())
