"""``torch.library.custom_op`` & co run eagerly, with gradients, as PyTorch's."""

# no `from __future__ import annotations`: PyTorch reads the kernels' annotations

import itertools

import pytest

import hookgrad

pytestmark = pytest.mark.oracle
_IDS = itertools.count()


def _scenario(L, ns):
    @L.library.custom_op(f"{ns}::scaled_sin", mutates_args=())
    def scaled_sin(x: L.Tensor, scale: float = 2.0) -> L.Tensor:
        return x.sin() * scale

    @scaled_sin.register_fake
    def _(x, scale=2.0):
        return L.empty_like(x)

    x = L.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = scaled_sin(x, scale=3.0)
    node = type(y.grad_fn).__name__
    try:
        y.sum().backward()
        no_formula = None
    except RuntimeError as e:
        no_formula = str(e)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.scale = inputs[1]

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos() * ctx.scale, None

    L.library.register_autograd(f"{ns}::scaled_sin", backward, setup_context=setup_context)
    packet = getattr(getattr(L.ops, ns), "scaled_sin")
    z = packet.default(x)
    z.sum().backward()
    return (y.tolist(), node.replace(ns, "NS"), no_formula.replace(ns, "NS"), z.tolist(),
            x.grad.tolist(), str(packet).replace(ns, "NS"),
            str(packet.default).replace(ns, "NS"), packet(x).tolist(), y.requires_grad)


def test_custom_op_matches_pytorch(torch):
    ns = f"hglibtest{next(_IDS)}"
    got = _scenario(hookgrad, ns)
    want = _scenario(torch, ns)
    assert got[1:3] + got[5:7] + got[8:] == want[1:3] + want[5:7] + want[8:]
    for a, b in zip(got[0:1] + got[3:5] + got[7:8], want[0:1] + want[3:5] + want[7:8]):
        assert a == pytest.approx(b, rel=1e-6)


def test_register_kernel_replaces_the_cpu_kernel():
    @hookgrad.library.custom_op("hglibtest_k::f", mutates_args=())
    def f(x: hookgrad.Tensor) -> hookgrad.Tensor:
        return x + 1

    @hookgrad.library.register_kernel("hglibtest_k::f", "cpu")
    def _(x):
        return x + 2

    f.register_kernel("cuda", lambda x: x + 100)  # another device type: never used here
    assert f(hookgrad.zeros(1)).tolist() == [2.0]
    with pytest.raises(ValueError):
        hookgrad.library.custom_op("no_namespace", mutates_args=())
    with pytest.raises(NotImplementedError):
        hookgrad.library.Library("hglibtest_k", "DEF")
