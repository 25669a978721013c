"""Real workloads on the strict backend give the ``cpu`` results: the engine with every kind of
hook, nn forward/backward, optimizers; moving between devices; mixing devices raises.
"""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.backend._lib import OnDevice, assert_same_values, host


def _hooked_step(lib) -> tuple:
    log: list = []
    w = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    w.register_post_accumulate_grad_hook(lambda p: log.append(("acc", host(p.grad))))
    x = lib.tensor(np.linspace(0, 2, 6).reshape(2, 3))
    h = (x @ w).tanh()
    h.register_hook(lambda g: log.append(("h", host(g))) or g * 2)
    h.grad_fn.register_prehook(lambda go: log.append(("pre", host(go[0]))))
    h.grad_fn.register_hook(lambda gi, go: log.append(("post", host(gi[0]))))
    with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("pack") or t,
                                                lambda t: log.append("unpack") or t):
        loss = (h * h).sum()
    loss.backward()
    return log, host(w.grad)


def test_engine_hooks_on_strict_backend_match_cpu(strict):
    assert_same_values(list(_hooked_step(hookgrad)), list(_hooked_step(OnDevice(strict))))


def _train(lib, device: str, opt_name: str) -> list:
    hookgrad.manual_seed(0)
    model = hookgrad.nn.Sequential(
        hookgrad.nn.Conv2d(1, 4, 3, padding=1), hookgrad.nn.ReLU(), hookgrad.nn.MaxPool2d(2),
        hookgrad.nn.Flatten(), hookgrad.nn.Linear(4 * 4 * 4, 16), hookgrad.nn.Tanh(),
        hookgrad.nn.LayerNorm(16), hookgrad.nn.Linear(16, 3))
    model.to(device)
    seen: list = []
    model[4].register_forward_hook(lambda m, i, o: seen.append(("fwd", host(o))))
    model[4].register_full_backward_hook(lambda m, gi, go: seen.append(("bwd", host(go[0]))))
    opts = {"sgd": lambda p: hookgrad.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
            "adam": lambda p: hookgrad.optim.Adam(p, lr=0.01, weight_decay=0.01),
            "rmsprop": lambda p: hookgrad.optim.RMSprop(p, lr=0.01, centered=True),
            "adagrad": lambda p: hookgrad.optim.Adagrad(p, lr=0.1)}
    opt = opts[opt_name](model.parameters())
    rng = np.random.default_rng(1)
    x = lib.tensor(rng.standard_normal((6, 1, 8, 8)).astype(np.float32))
    y = lib.tensor(rng.integers(0, 3, 6))
    for _ in range(3):
        opt.zero_grad()
        loss = hookgrad.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        seen.append(("loss", host(loss)))
    for p in model.parameters():
        assert p.device.type == device and p.grad.device.type == device
    return seen + [host(p) for p in model.parameters()]


@pytest.mark.parametrize("opt_name", ["sgd", "adam", "rmsprop", "adagrad"])
def test_training_on_strict_backend_matches_cpu(strict, opt_name):
    assert_same_values(_train(hookgrad, "cpu", opt_name),
                       _train(OnDevice(strict), strict, opt_name))


def test_to_moves_between_backends_and_gradients_flow_back(strict):
    a = hookgrad.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a.to(strict)
    assert b.device.type == strict and b.grad_fn.name() == "ToCopyBackward0"
    assert type(b._data) is not np.ndarray
    (b * b).sum().backward()
    assert a.grad.device.type == "cpu"
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 4.0, 6.0])
    back = b.cpu()
    assert back.device.type == "cpu" and back.tolist() == [1.0, 2.0, 3.0]
    assert b.to(strict) is b and a.cpu() is a


def test_mixing_devices_in_one_op_raises_pytorch_error(strict):
    a = hookgrad.ones(3)
    b = hookgrad.ones(3, device=strict)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        a + b
    assert (b * hookgrad.tensor(2.0)).device.type == strict  # a 0-d CPU tensor may join


def test_unknown_device_raises_pytorch_error():
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, .* device type at start "
                       "of device string: nowhere"):
        hookgrad.ones(2, device="nowhere")


def test_numpy_of_a_device_tensor_raises_pytorch_error(strict):
    t = hookgrad.ones(2, device=strict)
    with pytest.raises(TypeError, match="can't convert strict device type tensor to numpy"):
        t.numpy()
    assert t.cpu().numpy().tolist() == [1.0, 1.0]
    assert t.numpy(force=True).tolist() == [1.0, 1.0]


def test_special_functions_without_scipy_stay_on_the_device(strict, monkeypatch):
    from hookgrad._ops import _special

    monkeypatch.setattr(_special, "_SCIPY", None)  # the exact math fallback, as without SciPy
    x = hookgrad.tensor([-1.0, 0.0, 0.5], requires_grad=True)
    y = x.to(strict)
    out = hookgrad.nn.functional.gelu(y).sum() + y.erf().sum() + y.erfc().sum()
    out.backward()
    ref = hookgrad.tensor([-1.0, 0.0, 0.5], requires_grad=True)
    (hookgrad.nn.functional.gelu(ref).sum() + ref.erf().sum() + ref.erfc().sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), ref.grad.numpy(), rtol=1e-6)
    assert out.device.type == strict
