"""The doors of the core (NOTE [Function door], NOTE [Write door] in _dispatch.py), the engine's
between-node polling, and PyTorch's TypeError for a non-tensor reaching an op."""

from __future__ import annotations

import pytest

import hookgrad


def test_custom_function_and_module_backward_hook_pass_the_function_door():
    from hookgrad._config import recording

    class Events:
        sees_backward = False

        def __init__(self) -> None:
            self.log: list = []

        def record(self, prim, inputs, params, outputs, cast=None) -> None:
            self.log.append(prim.name)

        def record_inplace(self, prim, inputs, params, out, target, cast=None) -> None:
            self.log.append(prim.name)

        def rebase(self, target, out) -> None:
            self.log.append("rebase")

        def record_write(self, target) -> None:
            self.log.append(("write", tuple(target.shape)))

        def record_function(self, fn_cls, inputs, outputs) -> None:
            self.log.append((fn_cls.__name__, len(inputs), len(outputs)))

    class Double(hookgrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2  # its ops pass `bind` too (grad recording is off inside)

        @staticmethod
        def backward(ctx, g):
            return g * 2

    rec = Events()
    lin = hookgrad.nn.Linear(2, 2)
    lin.register_full_backward_hook(lambda m, gi, go: None)
    x = hookgrad.ones(1, 2, requires_grad=True)
    with recording(rec):
        y = Double.apply(x)
        y.add_(1)
        lin(y)
    assert rec.log[:2] == ["mul", ("Double", 1, 1)]
    assert rec.log[2:4] == ["add", "rebase"]
    assert ("BackwardHookFunctionBackward", 1, 1) in rec.log


def test_optimizer_updates_and_grad_accumulation_pass_the_write_door():
    from hookgrad._config import recording

    class Writes:
        sees_backward = False

        def __init__(self) -> None:
            self.written: list = []

        def record(self, prim, inputs, params, outputs, cast=None) -> None:
            return None

        def record_inplace(self, prim, inputs, params, out, target, cast=None) -> None:
            return None

        def rebase(self, target, out) -> None:
            return None

        def record_write(self, target) -> None:
            self.written.append(target)

        def record_function(self, fn_cls, inputs, outputs) -> None:
            return None

    w = hookgrad.nn.Parameter(hookgrad.ones(3))
    opt = hookgrad.optim.SGD([w], lr=0.1, momentum=0.9)
    (w * 2).sum().backward()
    rec = Writes()
    with recording(rec):
        (w * 2).sum().backward()  # second accumulation: in place into w.grad
        version = w._version
        opt.step()
    assert any(t is w.grad for t in rec.written)
    assert any(t is w for t in rec.written)
    assert w._version == version + 1


def test_poll_between_nodes_runs_after_every_node_of_its_pass():
    from hookgrad.autograd.engine import poll_between_nodes

    polls: list = []
    x = hookgrad.ones(3, requires_grad=True)
    y = (x * 2).exp().sum()
    y.grad_fn.register_prehook(lambda go: poll_between_nodes(lambda: polls.append(1)))
    y.backward()  # SumBackward0 (registers), then ExpBackward0, MulBackward0, AccumulateGrad
    assert len(polls) == 4
    (x * 2).sum().backward()
    assert len(polls) == 4  # dropped with its pass
    with pytest.raises(RuntimeError, match="during the backward pass"):
        poll_between_nodes(lambda: None)


@pytest.mark.oracle
def test_a_non_tensor_reaching_an_op_is_pytorch_type_error(torch):
    from hookgrad._dispatch import bind
    from hookgrad._ops.registry import PRIMITIVES as P

    def torch_error(fn):
        with pytest.raises(TypeError) as info:
            fn()
        return str(info.value)

    with pytest.raises(TypeError) as mine:
        bind(P["exp"], ("a",))
    assert str(mine.value) == torch_error(lambda: torch.exp("a"))
    with pytest.raises(TypeError) as mine:
        bind(P["mm"], (hookgrad.ones(2, 2), None))
    assert str(mine.value) == torch_error(lambda: torch.mm(torch.ones(2, 2), None))
