"""Weight reparametrisations built on hooks, against PyTorch: ``nn.utils.parametrize``,
``parametrizations.weight_norm``/``spectral_norm``, the forward-pre-hook ``weight_norm`` and
``spectral_norm``, and ``nn.utils.prune``. Same weights in both libraries; compared: state-dict
keys and values, outputs, gradients, hook order, class names and errors."""

from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest

import hookgrad
from tests.nn._compare import copy_state, to_lib

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(3)


def _mod(lib, name):
    return importlib.import_module(f"{lib.__name__}.nn.utils.{name}")


def _run_both(torch, build, steps):
    """`build(lib)` -> module; copy torch's state into hookgrad's; `steps(lib, m)` -> dict."""
    tm, hm = build(torch), build(hookgrad)
    assert list(hm.state_dict()) == list(tm.state_dict())
    copy_state(tm, hm, hookgrad)
    theirs, mine = steps(torch, tm), steps(hookgrad, hm)
    assert mine.keys() == theirs.keys()
    for k in theirs:
        if isinstance(theirs[k], np.ndarray):
            np.testing.assert_allclose(mine[k], theirs[k], rtol=1e-6, atol=1e-8, err_msg=k)
        else:
            assert mine[k] == theirs[k], k


def _forward_backward(lib, m, x, tag=""):
    y = m(to_lib(lib, x))
    y.sum().backward()
    out = {f"{tag}y": y.detach().numpy()}
    out.update({f"{tag}grad:{n}": p.grad.numpy() for n, p in m.named_parameters()})
    m.zero_grad()
    return out


class _Symmetric:
    """Built per library: ``X -> triu(X) + triu(X, 1)^T`` with a right inverse."""

    @staticmethod
    def make(lib):
        class Symmetric(lib.nn.Module):
            def forward(self, x):
                return x.triu() + x.triu(1).transpose(-1, -2)

            def right_inverse(self, a):
                return a.triu()

        return Symmetric()


def _scale(lib):
    class Scale(lib.nn.Module):
        def forward(self, x):
            return x * 2.0

        def right_inverse(self, y):
            return y / 2.0

    return Scale()


def test_register_parametrization_stack_cache_and_remove(torch):
    x = RNG.standard_normal((2, 3))

    def build(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 3).double()
        P = _mod(lib, "parametrize")
        P.register_parametrization(m, "weight", _Symmetric.make(lib))
        P.register_parametrization(m, "weight", _scale(lib))
        return m

    def steps(lib, m):
        P = _mod(lib, "parametrize")
        out = _forward_backward(lib, m, x)
        out["class"] = type(m).__name__
        out["before"] = P.type_before_parametrizations(m).__name__
        out["is"] = (P.is_parametrized(m), P.is_parametrized(m, "weight"),
                     P.is_parametrized(m, "bias"))
        out["plist"] = (type(m.parametrizations.weight).__name__, len(m.parametrizations.weight))
        with P.cached():
            out["cached_same"] = m.weight is m.weight
        out["uncached_same"] = m.weight is m.weight
        with lib.no_grad():
            m.weight = lib.eye(3, dtype=lib.float64) * 4.0  # right_inverse of the whole chain
        out["after_set"] = m.weight.detach().numpy()
        P.remove_parametrizations(m, "weight", leave_parametrized=True)
        out["removed_class"] = type(m).__name__
        out["keys"] = list(m.state_dict())
        out["w"] = m.weight.detach().numpy()
        out["is_param"] = type(m.weight).__name__
        return out

    _run_both(torch, build, steps)


def test_parametrization_errors(torch):
    def run(lib):
        P = _mod(lib, "parametrize")
        m = lib.nn.Linear(3, 2)
        errs = []
        for fn in (lambda: P.register_parametrization(m, "nope", _scale(lib)),
                   lambda: P.remove_parametrizations(m, "weight")):
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - the exception type is what is compared
                errs.append(type(e).__name__)

        class Shrink(lib.nn.Module):
            def forward(self, x):
                return x[:1]

        try:
            P.register_parametrization(m, "weight", Shrink())
        except ValueError as e:
            errs.append(str(e).splitlines()[0])
        return errs

    assert run(hookgrad) == run(torch)


def test_remove_parametrization_back_to_original(torch):
    def build(lib):
        lib.manual_seed(1)
        m = lib.nn.Linear(2, 2).double()
        _mod(lib, "parametrize").register_parametrization(m, "weight", _scale(lib))
        return m

    def steps(lib, m):
        _mod(lib, "parametrize").remove_parametrizations(m, "weight", leave_parametrized=False)
        return {"w": m.weight.detach().numpy(), "class": type(m).__name__,
                "has": hasattr(m, "parametrizations")}

    _run_both(torch, build, steps)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrizations_weight_norm(torch, dim):
    x = RNG.standard_normal((4, 2, 5, 5))

    def build(lib):
        lib.manual_seed(0)
        m = lib.nn.Conv2d(2, 3, 3).double()
        return lib.nn.utils.parametrizations.weight_norm(m, dim=dim)

    def steps(lib, m):
        out = _forward_backward(lib, m, x)
        out["g"] = m.parametrizations.weight.original0.detach().numpy()
        return out

    _run_both(torch, build, steps)


def test_parametrizations_weight_norm_loads_old_keys(torch):
    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 2).double()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            old = lib.nn.utils.weight_norm(lib.nn.Linear(3, 2).double())
        new = lib.nn.utils.parametrizations.weight_norm(m)
        new.load_state_dict(old.state_dict())
        return list(old.state_dict()), list(new.state_dict())

    assert run(hookgrad) == run(torch)


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.Linear(4, 3).double(),
    lambda lib: lib.nn.ConvTranspose2d(2, 3, 2).double(),
])
def test_parametrizations_spectral_norm_train_and_eval(torch, make):
    x = RNG.standard_normal((2, 4)) if True else None

    def build(lib):
        lib.manual_seed(0)
        return lib.nn.utils.parametrizations.spectral_norm(make(lib))

    def steps(lib, m):
        inp = x if isinstance(m, lib.nn.Linear) else RNG.standard_normal((1, 2, 3, 3))
        out = {}
        for i in range(3):  # each training forward runs one power iteration
            out.update(_forward_backward(lib, m, inp if isinstance(m, lib.nn.Linear) else
                                         np.ones((1, 2, 3, 3)), tag=f"{i}:"))
        m.eval()
        out.update(_forward_backward(lib, m, inp if isinstance(m, lib.nn.Linear) else
                                     np.ones((1, 2, 3, 3)), tag="eval:"))
        out.update({k: v.numpy() for k, v in m.state_dict().items()})
        return out

    _run_both(torch, build, steps)


def test_hook_weight_norm_order_and_remove(torch):
    x = RNG.standard_normal((2, 3))

    def build(lib):
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return lib.nn.utils.weight_norm(lib.nn.Linear(3, 2).double(), dim=1)

    def steps(lib, m):
        log = []
        m.register_forward_pre_hook(lambda mod, args: log.append(
            round(float(mod.weight.detach().sum()), 10)))
        with lib.no_grad():
            m.weight_g.mul_(2.0)
        out = _forward_backward(lib, m, x)
        out["log"] = log
        out["hooks"] = [type(h).__name__ for h in m._forward_pre_hooks.values()]
        lib.nn.utils.remove_weight_norm(m)
        out["keys"] = list(m.state_dict())
        out["w"] = m.weight.detach().numpy()
        with pytest.raises(ValueError):
            lib.nn.utils.remove_weight_norm(m)
        return out

    _run_both(torch, build, steps)


def test_hook_weight_norm_warns_and_rejects_twice(torch):
    for lib in (torch, hookgrad):
        with pytest.warns(FutureWarning, match="deprecated"):
            m = lib.nn.utils.weight_norm(lib.nn.Linear(2, 2))
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                lib.nn.utils.weight_norm(m)


def test_hook_spectral_norm(torch):
    x = RNG.standard_normal((2, 4))

    def build(lib):
        lib.manual_seed(0)
        return lib.nn.utils.spectral_norm(lib.nn.Linear(4, 3).double(), n_power_iterations=2)

    def steps(lib, m):
        out = {}
        for i in range(2):
            out.update(_forward_backward(lib, m, x, tag=f"{i}:"))
        m.eval()
        out.update(_forward_backward(lib, m, x, tag="eval:"))
        sd = m.state_dict()
        out.update({k: v.numpy() for k, v in sd.items()})
        out["meta"] = dict(sd._metadata[""]).get("spectral_norm")
        lib.nn.utils.remove_spectral_norm(m)
        out["after"] = list(m.state_dict())
        out["n_hooks"] = (len(m._forward_pre_hooks), len(m._state_dict_hooks))
        return out

    _run_both(torch, build, steps)


def test_prune_methods_and_remove(torch):
    def build(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.Conv2d(2, 4, 3), lib.nn.Linear(4, 3)).double()

    def steps(lib, net):
        P = _mod(lib, "prune")
        P.identity(net[1], "weight")
        P.l1_unstructured(net[0], "weight", amount=0.3)
        P.ln_structured(net[0], "weight", amount=1, n=2, dim=0)
        P.l1_unstructured(net[1], "bias", amount=1, importance_scores=net[1].bias.abs() * -1)
        P.global_unstructured([(net[0], "bias"), (net[1], "weight")],
                              pruning_method=P.L1Unstructured, amount=0.25)
        out = {"keys": list(net.state_dict()),
               "hooks": [type(h).__name__ for h in net[0]._forward_pre_hooks.values()],
               "chain": [type(h).__name__ for h in
                         next(iter(net[0]._forward_pre_hooks.values()))],
               "params": [n for n, _ in net.named_parameters()]}
        out.update({k: v.numpy() for k, v in net.state_dict().items()})
        x = np.ones((2, 2, 3, 3))
        y = net[1](net[0](to_lib(lib, x)).flatten(1))
        y.sum().backward()
        out.update({f"grad:{n}": p.grad.numpy() for n, p in net.named_parameters()})
        out["y"] = y.detach().numpy()
        for mod, name in ((net[0], "weight"), (net[1], "bias")):
            P.remove(mod, name)
        out["after"] = list(net.state_dict())
        out["pruned"] = P.is_pruned(net)
        out["w"] = net[0].weight.detach().numpy()
        with pytest.raises(ValueError, match="has to be pruned"):
            P.remove(net[0], "weight")
        return out

    _run_both(torch, build, steps)


def test_prune_random_methods_mask_shape(torch):
    """Random choices differ between libraries (other generators); the structure must not."""
    for lib in (torch, hookgrad):
        P = _mod(lib, "prune")
        m = lib.nn.Linear(5, 4)
        P.random_unstructured(m, "weight", amount=7)
        assert int((m.weight_mask == 0).sum()) == 7
        P.random_structured(m, "weight", amount=0.5, dim=0)
        rows = (m.weight_mask.sum(1) == 0).sum()
        assert int(rows) >= 2
        assert type(next(iter(m._forward_pre_hooks.values()))).__name__ == "PruningContainer"


@pytest.mark.parametrize(("call", "exc"), [
    (lambda P, m: P.l1_unstructured(m, "weight", amount=1.5), ValueError),
    (lambda P, m: P.l1_unstructured(m, "weight", amount="a"), TypeError),
    (lambda P, m: P.l1_unstructured(m, "weight", amount=100), ValueError),
    (lambda P, m: P.ln_structured(m, "bias", amount=1, n=2, dim=0), ValueError),
])
def test_prune_errors_leave_module_unchanged(torch, call, exc):
    def run(lib):
        P = _mod(lib, "prune")
        m = lib.nn.Linear(3, 2)
        with pytest.raises(exc) as e:
            call(P, m)
        return str(e.value), list(m.state_dict()), P.is_pruned(m)

    assert run(hookgrad) == run(torch)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
@pytest.mark.parametrize("orthogonal_map", [None, "householder", "matrix_exp", "cayley"])
def test_parametrizations_orthogonal(torch, shape, orthogonal_map):
    x = RNG.standard_normal((2, shape[1]))

    def build(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(shape[1], shape[0]).double()
        return lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orthogonal_map)

    def steps(lib, m):
        out = _forward_backward(lib, m, x)
        w = m.weight.detach().numpy()
        gram = w @ w.T if shape[0] < shape[1] else w.T @ w
        out["orthogonal"] = bool(np.allclose(gram, np.eye(min(shape))))
        with lib.no_grad():  # assigning an orthogonal matrix goes through right_inverse
            m.weight = lib.tensor(w[::-1].copy())
        out["assigned"] = m.weight.detach().numpy()
        return out

    _run_both(torch, build, steps)


def test_orthogonal_base_from_the_same_square_weight(torch):
    """QR with a non-negative R diagonal, as PyTorch's geqrf + householder_product."""
    w = RNG.standard_normal((4, 4))
    bases = []
    for lib in (torch, hookgrad):
        m = lib.nn.Linear(4, 4, bias=False).double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
        lib.nn.utils.parametrizations.orthogonal(m)
        bases.append(m.parametrizations.weight[0].base.numpy())
    np.testing.assert_allclose(bases[1], bases[0], atol=1e-12)
