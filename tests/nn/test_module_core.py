"""Module registration, traversal, modes, conversions, repr, copy/pickle — against the oracle."""

from __future__ import annotations

import copy
import pickle

import pytest

import hookgrad
from tests.hooks._scenario import check

pytestmark = pytest.mark.oracle


def _tree(lib):
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(2, 2)
            self.act = lib.nn.ReLU()
            self.register_buffer("running", lib.zeros(2))
            self.register_buffer("scratch", lib.ones(1), persistent=False)

        def forward(self, x):
            return self.act(self.lin(x)) + self.running

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Block()
            self.b = Block()
            self.shared = self.a.lin
            self.scale = lib.nn.Parameter(lib.ones(1))
            self.empty = None

        def forward(self, x):
            return self.b(self.a(x)) * self.scale

    return Net()


def sc_traversal(lib, log):
    net = _tree(lib)
    return (
        [n for n, _ in net.named_parameters()],
        [n for n, _ in net.named_parameters(prefix="root", recurse=True)],
        [n for n, _ in net.named_parameters(recurse=False)],
        [n for n, _ in net.named_parameters(remove_duplicate=False)],
        [n for n, _ in net.named_buffers()],
        [n for n, _ in net.named_modules()],
        [n for n, _ in net.named_modules(remove_duplicate=False)],
        [n for n, _ in net.named_children()],
        len(list(net.parameters())), len(list(net.buffers())), len(list(net.modules())),
        len(list(net.children())), sorted(net.state_dict()),
        type(net.get_submodule("a.lin")).__name__, tuple(net.get_parameter("a.lin.bias").shape),
        tuple(net.get_buffer("b.running").shape),
    )


def test_traversal_matches_torch(torch):
    check(sc_traversal, torch)


@pytest.mark.parametrize("target", ["a.nope", "a.running.x", "scale.x", "a.lin.weight"])
def test_get_submodule_errors(torch, target):
    def sc(lib, log):
        return type(_tree(lib).get_submodule(target)).__name__

    check(sc, torch)


@pytest.mark.parametrize("call", [
    lambda lib, m: m.register_buffer("a.b", lib.ones(1)),
    lambda lib, m: m.register_buffer("", lib.ones(1)),
    lambda lib, m: m.register_buffer(3, lib.ones(1)),
    lambda lib, m: m.register_buffer("x", [1]),
    lambda lib, m: m.register_buffer("forward", lib.ones(1)),
    lambda lib, m: m.register_parameter("p", lib.ones(1)),
    lambda lib, m: m.register_parameter("a.b", None),
    lambda lib, m: m.register_parameter("p", lib.nn.Parameter(lib.ones(1)) * 2),
    lambda lib, m: m.add_module("x.y", lib.nn.ReLU()),
    lambda lib, m: m.add_module("x", 5),
    lambda lib, m: m.add_module("", lib.nn.ReLU()),
    lambda lib, m: m.add_module("training", lib.nn.ReLU()),
    lambda lib, m: setattr(m, "w", lib.ones(1)) or setattr(m, "w", lib.nn.Parameter(lib.ones(1)))
    or setattr(m, "w", lib.ones(2)),
    lambda lib, m: setattr(m, "sub", lib.nn.ReLU()) or setattr(m, "sub", 3),
    lambda lib, m: m.register_buffer("bb", lib.ones(1)) or setattr(m, "bb", 3),
    lambda lib, m: m.nothing,
    lambda lib, m: delattr(m, "nothing"),
    lambda lib, m: m.train("yes"),
    lambda lib, m: m(1),
    lambda lib, m: lib.nn.Module(3),
    lambda lib, m: lib.nn.Module(k=3),
])
def test_registration_errors_match_torch(torch, call):
    def sc(lib, log):
        return call(lib, lib.nn.Module())

    mine = check_errors(sc, torch)
    assert mine is not None


def check_errors(sc, torch):
    """Compare exception type and text (module paths in type names are torch's vs ours)."""
    from tests.hooks._scenario import outcome

    theirs = outcome(sc, torch)
    mine = outcome(sc, hookgrad)
    assert (mine["exc"] is None) == (theirs["exc"] is None)
    if mine["exc"] is not None:
        assert mine["exc"][0] == theirs["exc"][0]
        assert mine["exc"][1].replace("hookgrad.nn.modules.nonlinearity", "torch.nn.modules"
                                      ".activation") == theirs["exc"][1]
    return mine


def sc_setattr_routing(lib, log):
    m = lib.nn.Module()
    m.x = 3
    m.p = lib.nn.Parameter(lib.ones(1))
    m.p = None
    m.s = lib.nn.ReLU()
    m.register_buffer("b", lib.ones(1))
    m.b = lib.zeros(2)
    m.b = None
    m.s = None
    m.q = lib.nn.Parameter(lib.ones(1))
    try:
        m.q = lib.nn.ReLU()                 # the parameter check comes first
    except TypeError as e:
        log.append(type(e).__name__)
    m.nb = lib.nn.Buffer(lib.ones(1), persistent=False)
    m.nb = lib.ones(3)                       # stays non-persistent
    del m.x
    out = (dict(m._parameters), list(m._modules), list(m._buffers),
           sorted(m._non_persistent_buffers_set), sorted(m.state_dict()), "x" in dir(m),
           "q" in dir(m), "nb" in dir(m))
    del m.q
    del m.nb
    return out, list(m._modules), list(m._buffers), sorted(m._non_persistent_buffers_set), log


def test_setattr_routing(torch):
    check(sc_setattr_routing, torch)


def sc_modes_and_grads(lib, log):
    net = _tree(lib)
    modes = []
    net.eval()
    modes.append([m.training for m in net.modules()])
    net.a.train()
    modes.append([m.training for m in net.modules()])
    r = net.train()
    x = lib.ones(3, 2)
    net(x).sum().backward()
    had = [p.grad is not None for p in net.parameters()]
    net.zero_grad(set_to_none=False)
    zeros = [p.grad.abs().sum().item() for p in net.parameters()]
    net.zero_grad()
    nones = [p.grad is None for p in net.parameters()]
    net.requires_grad_(False)
    rg = [p.requires_grad for p in net.parameters()]
    visited = []
    net.apply(lambda m: visited.append(type(m).__name__))
    return modes, r is net, had, zeros, nones, rg, visited


def test_train_eval_zero_grad_requires_grad_apply(torch):
    check(sc_modes_and_grads, torch)


def sc_conversions(lib, log):
    net = _tree(lib)
    net.register_buffer("steps", lib.zeros(1, dtype=lib.int64))
    w = net.a.lin.weight
    net(lib.ones(1, 2)).sum().backward()
    net.double()
    out = [w is net.a.lin.weight, str(w.dtype), str(w.grad.dtype), str(net.steps.dtype),
           str(net.a.running.dtype)]
    net.to(lib.float32)
    out.append(str(w.dtype))
    net.to("cpu")
    net.to(lib.float64).float()
    out.append(str(net.a.running.dtype))
    try:
        net.to(lib.int32)
    except TypeError as e:
        out.append(str(e))
    return out


def test_to_double_float_keep_parameter_identity(torch):
    check(sc_conversions, torch)


def sc_repr(lib, log):
    net = _tree(lib)
    seq = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU(inplace=True), lib.nn.Dropout(0.2),
                            lib.nn.Sequential(lib.nn.Tanh(), lib.nn.Flatten()))
    return repr(net), repr(seq), repr(lib.nn.Module()), repr(lib.nn.Linear(2, 3, bias=False))


def test_repr_matches_torch(torch):
    check(sc_repr, torch)


def sc_parameter_buffer_basics(lib, log):
    p = lib.nn.Parameter(lib.ones(2))
    q = lib.nn.Parameter(lib.ones(2), requires_grad=False)
    e = lib.nn.Parameter()
    b = lib.nn.Buffer(lib.ones(2))
    plain = lib.ones(2)
    return (repr(p), p.requires_grad, q.requires_grad, p.is_leaf, tuple(e.shape),
            isinstance(p, lib.nn.Parameter), isinstance(b, lib.nn.Buffer),
            isinstance(plain, lib.nn.Buffer), type(p * 2).__name__, (p * 2).grad_fn,
            b.persistent)


def test_parameter_and_buffer_basics(torch):
    check(sc_parameter_buffer_basics, torch)


def sc_parameter_int_data(lib, log):
    return lib.nn.Parameter(lib.tensor([1, 2]))


def test_parameter_from_int_tensor_raises(torch):
    check(sc_parameter_int_data, torch, exc="RuntimeError")


class _Block(hookgrad.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = hookgrad.nn.Linear(2, 2)
        self.register_buffer("running", hookgrad.zeros(2))

    def forward(self, x):
        return self.lin(x).relu() + self.running


class _Net(hookgrad.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = _Block()
        self.shared = self.a.lin
        self.scale = hookgrad.nn.Parameter(hookgrad.ones(1))

    def forward(self, x):
        return self.a(x) * self.scale


def test_deepcopy_and_pickle_roundtrip():
    net = _Net()
    log = []
    net.register_forward_hook(_ForwardLog(log))
    x = hookgrad.ones(3, 2)
    ref = net(x)
    clone = copy.deepcopy(net)
    assert clone.a.lin.weight is not net.a.lin.weight
    assert clone.shared is clone.a.lin
    assert isinstance(clone.scale, hookgrad.nn.Parameter)
    assert clone(x).tolist() == ref.tolist()
    restored = pickle.loads(pickle.dumps(net))
    assert restored(x).tolist() == ref.tolist()
    assert restored.a.lin.weight.requires_grad
    assert sorted(restored.state_dict()) == sorted(net.state_dict())
    assert len(log) == 1  # the copies carry copies of the hook (and of its log)
    assert len(clone._forward_hooks) == len(restored._forward_hooks) == 1
    restored.a.lin.weight.sum().backward()


class _ForwardLog:
    def __init__(self, log):
        self.log = log

    def __call__(self, module, args, output):
        self.log.append(type(module).__name__)


def test_state_dict_roundtrip_between_libraries(torch):
    mine = _tree(hookgrad)
    theirs = _tree(torch)
    sd = {k: torch.tensor(v.tolist()) for k, v in mine.state_dict().items()}
    theirs.load_state_dict(sd)
    x = [[0.5, -1.0], [2.0, 0.25]]
    got = mine(hookgrad.tensor(x)).reshape(-1).tolist()
    assert got == pytest.approx(theirs(torch.tensor(x)).reshape(-1).tolist(), rel=1e-6)
    sd_back = {k: hookgrad.tensor(v.tolist()) for k, v in theirs.state_dict().items()}
    res = mine.load_state_dict(sd_back)
    assert repr(res) == "<All keys matched successfully>"


def test_state_dict_keep_vars_and_detach():
    lin = hookgrad.nn.Linear(2, 2)
    sd = lin.state_dict()
    assert sd["weight"] is not lin.weight and not sd["weight"].requires_grad
    assert lin.state_dict(keep_vars=True)["weight"] is lin.weight
    assert sd._metadata == {"": {"version": 1}}
    with pytest.warns(FutureWarning, match="Positional args are being deprecated"):
        lin.state_dict(None, "p.")


def test_extra_state_roundtrip():
    class WithExtra(hookgrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.value = 1

        def get_extra_state(self):
            return {"value": self.value}

        def set_extra_state(self, state):
            self.value = state["value"]

    a, b = WithExtra(), WithExtra()
    a.value = 5
    sd = a.state_dict()
    assert list(sd) == ["_extra_state"]
    b.load_state_dict(sd)
    assert b.value == 5
    res = b.load_state_dict({}, strict=False)
    assert res.missing_keys == ["_extra_state"]
    with pytest.raises(RuntimeError, match="Missing key"):
        b.load_state_dict({})


def test_dead_module_load_hook_raises():
    m = hookgrad.nn.Linear(1, 1)
    hook = hookgrad.nn.modules.module._WrappedHook(lambda mod, *a: None, m)
    del m
    import gc

    gc.collect()
    with pytest.raises(RuntimeError, match="dead Module"):
        hook()


def test_call_fast_path_allocates_no_hook_state():
    m = hookgrad.nn.Identity()
    x = hookgrad.ones(1)
    assert m(x) is x  # no wrapping without hooks


def test_sequential_setitem_delitem_and_containers_register(torch):
    def sc(lib, log):
        seq = lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Tanh(), lib.nn.Sigmoid())
        seq[1] = lib.nn.Identity()
        del seq[0]
        seq.append(lib.nn.ReLU()).insert(0, lib.nn.Tanh())
        popped = seq.pop(1)
        sl = seq[1:]
        seq2 = seq + sl
        seq2 += lib.nn.Sequential(lib.nn.ReLU())
        return (repr(seq), type(popped).__name__, repr(sl), list(seq2._modules),
                len(seq * 2), repr(seq[-1]), [k for k in dir(seq) if k.isdigit()])

    check(sc, torch)
