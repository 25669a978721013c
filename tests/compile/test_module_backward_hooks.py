"""Module full backward (pre-)hooks compiled into the graph (issue 11, beyond spec §8.5).

PyTorch graph-breaks here without compiled autograd; hookgrad keeps one graph and must give
eager's hook order, arguments and gradients (compared with ``torch.compile`` and eager).
"""

from __future__ import annotations

from typing import Any

import pytest

import hookgrad
from tests.compile._libs import both, dynamo, is_torch, plain

pytestmark = pytest.mark.filterwarnings("ignore:The .grad attribute:UserWarning:torch.*")


def _scenario(lib: Any, compiled: bool) -> dict:
    log: list = []
    lib.manual_seed(0)

    class Net(lib.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = lib.nn.Linear(3, 4)
            self.b = lib.nn.Linear(4, 2)

        def forward(self, x: Any) -> Any:
            return self.b(self.a(x).tanh())
    net = Net()
    with lib.no_grad():  # the same weights in both libraries
        for i, p in enumerate(net.parameters()):
            p.copy_(lib.linspace(-1.0, 1.0, p.numel()).reshape(p.shape) * (i + 1) / 3)
    for name, mod in (("a", net.a), ("b", net.b)):
        mod.register_full_backward_pre_hook(
            lambda m, go, n=name: log.append((n, "pre", [plain(g) for g in go])))
        mod.register_full_backward_hook(
            lambda m, gi, go, n=name: log.append((n, "full", [plain(g) for g in gi],
                                                  [plain(g) for g in go])))
    cnt = dynamo(lib).testing.CompileCounter()
    f = lib.compile(net, backend=cnt) if compiled else net
    grads = []
    for step in range(2):
        x = lib.tensor([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]], requires_grad=True)
        (f(x) * lib.tensor([1.0, 2.0])).sum().backward()
        grads.append(plain(x.grad))
    return {"log": log, "grads": grads, "wgrad": plain(net.a.weight.grad),
            "fc": cnt.frame_count if compiled and not is_torch(lib) else None}


def test_module_backward_hooks_compiled_in(torch):
    ref_eager, got_eager = both(torch, lambda lib: _scenario(lib, False))
    ref, got = both(torch, lambda lib: _scenario(lib, True))
    assert {k: v for k, v in got.items() if k != "fc"} == \
        {k: v for k, v in ref.items() if k != "fc"} == \
        {k: v for k, v in got_eager.items() if k != "fc"}
    assert got["fc"] == 1  # (D) one graph; PyTorch graph-breaks around the hooked modules
    assert [e[:2] for e in got["log"][:4]] == [("b", "pre"), ("b", "full"), ("a", "pre"),
                                              ("a", "full")]


def test_module_backward_hook_added_later_recompiles():
    mod = hookgrad.nn.Linear(2, 2)
    cnt = hookgrad._dynamo.testing.CompileCounter()
    opt = hookgrad.compile(mod, backend=cnt)
    opt(hookgrad.ones(1, 2, requires_grad=True)).sum().backward()
    calls: list = []
    mod.register_full_backward_hook(lambda m, gi, go: calls.append(len(gi)))
    opt(hookgrad.ones(1, 2, requires_grad=True)).sum().backward()
    assert calls == [1] and cnt.frame_count == 2
