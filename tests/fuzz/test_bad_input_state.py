"""Bad inputs to modules, optimizers and autograd: PyTorch's exception type, and the same state
after the failing call (issue 27).

Each scenario builds a small model/optimizer on a library, runs one call PyTorch rejects, and
returns the exception type with a snapshot of everything a caller can observe afterwards:
parameters, buffers, gradients, optimizer state and param groups, the module's hook tables and
the calls its hooks logged. The snapshots of the two libraries must agree: where PyTorch
changes state before it raises (``num_batches_tracked``, the entries ``load_state_dict`` could
copy), hookgrad must too; everywhere else nothing may change.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _arr(t):
    return None if t is None else np.array(t.detach().numpy(), copy=True)


def _snapshot(lib, module=None, opt=None, log=None, tensors=()):
    snap = []
    if module is not None:
        snap += [(n, _arr(p), _arr(p.grad)) for n, p in module.named_parameters()]
        snap += [(n, _arr(b)) for n, b in module.named_buffers()]
        snap += [("hooks", len(module._forward_hooks), len(module._forward_pre_hooks),
                  len(module._backward_hooks))]
    if opt is not None:
        sd = opt.state_dict()
        for k in sorted(sd["state"]):
            snap += [(k, n, _arr(v) if hasattr(v, "detach") else v)
                     for n, v in sorted(sd["state"][k].items())]
        snap += [(len(g["params"]), g.get("lr"), g.get("momentum")) for g in sd["param_groups"]]
    snap += [(_arr(t), _arr(t.grad)) for t in tensors]
    return snap, list(log or [])


def _fill(lib, module):
    """Deterministic parameters (the two libraries' random streams differ)."""
    with lib.no_grad():
        for k, p in enumerate(module.parameters()):
            p.copy_((lib.arange(p.numel(), dtype=p.dtype).reshape(p.shape) % 5 - 2) / (k + 3))
    return module


def _hooked(lib, module):
    log = []
    module.register_forward_pre_hook(lambda m, a: log.append(("pre", tuple(a[0].shape))))
    module.register_forward_hook(lambda m, a, o: log.append(("post", tuple(o.shape))))
    return log


def _linear(lib):
    lib.manual_seed(0)
    m = lib.nn.Linear(3, 2)
    with lib.no_grad():
        m.weight.copy_(lib.arange(6.0).reshape(2, 3) / 7)
        m.bias.copy_(lib.tensor([0.5, -0.5]))
    return m


def _trained(lib, cls, **kw):
    """A Linear with one optimizer step taken (so the optimizer has state)."""
    m = _linear(lib)
    opt = getattr(lib.optim, cls)(m.parameters(), **kw)
    m(lib.ones(4, 3)).pow(2).sum().backward()
    opt.step()
    return m, opt


def s_linear_wrong_shape(lib):
    m = _linear(lib)
    log = _hooked(lib, m)
    return (lambda: m(lib.ones(4, 5))), lambda: _snapshot(lib, m, log=log)


def s_linear_wrong_dtype(lib):
    m = _linear(lib)
    log = _hooked(lib, m)
    return (lambda: m(lib.ones(4, 3, dtype=lib.float64))), lambda: _snapshot(lib, m, log=log)


def s_linear_int_input(lib):
    m = _linear(lib)
    return (lambda: m(lib.ones(4, 3, dtype=lib.int64))), lambda: _snapshot(lib, m)


def s_conv_wrong_channels(lib):
    lib.manual_seed(0)
    m = _fill(lib, lib.nn.Conv2d(2, 3, 1))
    log = _hooked(lib, m)
    return (lambda: m(lib.ones(1, 4, 3, 3))), lambda: _snapshot(lib, m, log=log)


def s_conv_1d_input(lib):
    lib.manual_seed(0)
    m = _fill(lib, lib.nn.Conv2d(2, 3, 1))
    return (lambda: m(lib.ones(2))), lambda: _snapshot(lib, m)


def s_batchnorm_one_value(lib):
    m = lib.nn.BatchNorm1d(3)
    m(lib.arange(6.0).reshape(2, 3))
    # PyTorch counts the batch before F.batch_norm rejects it
    return (lambda: m(lib.ones(1, 3))), lambda: _snapshot(lib, m)


def s_batchnorm_wrong_features(lib):
    m = lib.nn.BatchNorm1d(3)
    m(lib.arange(6.0).reshape(2, 3))
    return (lambda: m(lib.ones(2, 4))), lambda: _snapshot(lib, m)


def s_layernorm_wrong_shape(lib):
    m = lib.nn.LayerNorm(3)
    return (lambda: m(lib.ones(2, 4))), lambda: _snapshot(lib, m)


def s_embedding_out_of_range(lib):
    lib.manual_seed(0)
    m = _fill(lib, lib.nn.Embedding(4, 2))
    return (lambda: m(lib.tensor([1, 4]))), lambda: _snapshot(lib, m)


def s_embedding_float_index(lib):
    lib.manual_seed(0)
    m = _fill(lib, lib.nn.Embedding(4, 2))
    return (lambda: m(lib.tensor([1.0]))), lambda: _snapshot(lib, m)


def s_lstm_wrong_size(lib):
    lib.manual_seed(0)
    m = _fill(lib, lib.nn.LSTM(3, 2))
    return (lambda: m(lib.ones(5, 1, 4))), lambda: _snapshot(lib, m)


def s_load_state_dict_shape(lib):
    m = _linear(lib)
    bad = {"weight": lib.ones(3, 3), "bias": lib.zeros(2)}
    # PyTorch copies the entries that fit (bias) and raises for the others afterwards
    return (lambda: m.load_state_dict(bad)), lambda: _snapshot(lib, m)


def s_load_state_dict_missing(lib):
    m = _linear(lib)
    return (lambda: m.load_state_dict({"weight": lib.ones(2, 3)})), lambda: _snapshot(lib, m)


def s_module_to_int(lib):
    m = _linear(lib)
    return (lambda: m.to(lib.int64)), lambda: _snapshot(lib, m)


def s_register_buffer_dotted(lib):
    m = _linear(lib)
    return (lambda: m.register_buffer("a.b", lib.ones(1))), lambda: _snapshot(lib, m)


def s_register_parameter_tensor(lib):
    m = _linear(lib)
    return (lambda: m.register_parameter("p", lib.ones(1))), lambda: _snapshot(lib, m)


def s_setattr_param_tensor(lib):
    m = _linear(lib)
    return (lambda: setattr(m, "weight", lib.ones(2, 3))), lambda: _snapshot(lib, m)


def s_sgd_grad_wrong_shape(lib):
    m, opt = _trained(lib, "SGD", lr=0.1, momentum=0.9)
    return (lambda: setattr(m.weight, "grad", lib.ones(3, 2))), lambda: _snapshot(lib, m, opt)


def s_adam_grad_wrong_dtype(lib):
    m, opt = _trained(lib, "Adam", lr=0.1)
    return (lambda: setattr(m.bias, "grad", lib.ones(2, dtype=lib.float64))), \
        lambda: _snapshot(lib, m, opt)


def s_optimizer_load_state_groups(lib):
    m, opt = _trained(lib, "SGD", lr=0.1, momentum=0.9)
    sd = opt.state_dict()
    sd["param_groups"] = sd["param_groups"] * 2
    return (lambda: opt.load_state_dict(sd)), lambda: _snapshot(lib, m, opt)


def s_optimizer_load_state_sizes(lib):
    m, opt = _trained(lib, "Adam", lr=0.1)
    sd = opt.state_dict()
    sd["param_groups"][0]["params"] = sd["param_groups"][0]["params"][:1]
    return (lambda: opt.load_state_dict(sd)), lambda: _snapshot(lib, m, opt)


def s_optimizer_duplicate_group(lib):
    m, opt = _trained(lib, "SGD", lr=0.1)
    return (lambda: opt.add_param_group({"params": [m.weight]})), lambda: _snapshot(lib, m, opt)


def s_optimizer_closure_raises(lib):
    m, opt = _trained(lib, "SGD", lr=0.1, momentum=0.9)

    def closure():
        raise ValueError("closure failed")

    return (lambda: opt.step(closure)), lambda: _snapshot(lib, m, opt)


def s_optimizer_non_leaf_group(lib):
    m, opt = _trained(lib, "Adam", lr=0.1)
    extra = lib.ones(2, requires_grad=True) * 2  # not a leaf
    return (lambda: opt.add_param_group({"params": [extra], "lr": 0.5})), \
        lambda: _snapshot(lib, m, opt)


def s_backward_twice(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    return y.backward, lambda: _snapshot(lib, tensors=(x,))


def s_backward_wrong_grad_shape(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    return (lambda: y.backward(lib.ones(3))), lambda: _snapshot(lib, tensors=(x,))


def s_hook_on_no_grad_tensor(lib):
    m = _linear(lib)
    return (lambda: m.weight.detach().register_hook(lambda g: g)), lambda: _snapshot(lib, m)


def s_cross_entropy_bad_target(lib):
    m = _linear(lib)
    log = _hooked(lib, m)

    def call():
        lib.nn.functional.cross_entropy(m(lib.ones(4, 3)), lib.tensor([0, 1, 2, 1])).backward()

    return call, lambda: _snapshot(lib, m, log=log)


def s_mse_wrong_shape_backward(lib):
    m = _linear(lib)

    def call():
        lib.nn.functional.mse_loss(m(lib.ones(4, 3)), lib.ones(3, 2)).backward()

    return call, lambda: _snapshot(lib, m)


SCENARIOS = {name[2:]: fn for name, fn in dict(globals()).items() if name.startswith("s_")}


def _outcome(lib, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        call, snap = SCENARIOS[name](lib)
        try:
            call()
            kind = "accepted"
        except Exception as e:  # the type is what is compared
            kind = type(e).__name__
        return kind, snap()


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and np.allclose(a, b, rtol=1e-5, atol=1e-6))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_failing_call_raises_torch_type_and_keeps_state(torch, name):
    theirs, mine = _outcome(torch, name), _outcome(hookgrad, name)
    assert theirs[0] != "accepted", "the scenario must be one PyTorch rejects"
    assert mine[0] == theirs[0]
    assert _same(mine[1], theirs[1]), f"state after the failing call differs:\n{mine[1]}\n{theirs[1]}"
