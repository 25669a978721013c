"""Programs traced by both libraries in the fx oracle tests (each takes the library as `lib`)."""

from __future__ import annotations

import operator

import numpy as np


def normalise(text: str) -> str:
    """hookgrad's generated code/graph text in torch's spelling."""
    return text.replace("hookgrad.", "torch.")


def to_lib(lib, array: np.ndarray, requires_grad: bool = False):
    return lib.tensor(array, requires_grad=requires_grad)


def copy_params(src, dst) -> None:
    """Give `dst` (torch) the parameter values of `src` (hookgrad), matched by name."""
    import torch

    with torch.no_grad():
        for (n1, p1), (n2, p2) in zip(src.named_parameters(), dst.named_parameters(), strict=True):
            assert n1 == n2
            p2.copy_(torch.tensor(np.asarray(p1.detach().numpy())))


def mixed_module(lib):
    """Operators (reflected too), methods with kwargs, getattr/getitem, a Sequential, a
    parameter, a plain-tensor constant and a dict output."""

    class Mixed(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 3)
            self.seq = lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Linear(3, 2))
            self.p = lib.nn.Parameter(lib.ones(3))
            self.register_buffer("buf", lib.zeros(3))

        def forward(self, x, y=2):
            a = self.lin(x) + self.p
            b = lib.relu(a) * y
            c = b.sum(dim=1, keepdim=True)
            d = 1 - c + self.buf
            e = d.shape[0]
            g = lib.cat([a, b], dim=0)
            h = self.seq(a)
            return (h, {"c": c, "g": g[0:1, ...]}, e, -d, abs(d), d @ d.t(), d ** 2, 2 ** d,
                    d.view(-1, x.size(1)), 3 / (d.abs() + 1), operator.truediv(d, 2))

    return Mixed()


def nested_module(lib):
    """Submodules several levels deep, a ModuleList iterated in Python, tuple unpacking."""

    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(4, 4)
            self.act = lib.nn.Tanh()

        def forward(self, x):
            return self.act(self.fc(x)) + x

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = lib.nn.ModuleList([Block(), Block()])
            self.head = lib.nn.Linear(4, 2)

        def forward(self, x):
            for blk in self.blocks:
                x = blk(x)
            a, b = x.chunk(2, dim=1)
            return self.head(lib.cat([b, a], 1)).softmax(dim=-1)

    return Net()


def star_args_fn(lib):
    def fn(x, *rest, scale=2.0):
        return lib.tanh(x) * scale + rest[0]

    return fn


def scalar_fn(lib):
    def fn(x, n):
        return (x * n).sum() + n

    return fn


PROGRAMS = {
    "mixed": (mixed_module, [(2, 3)]),
    "nested": (nested_module, [(3, 4)]),
}
