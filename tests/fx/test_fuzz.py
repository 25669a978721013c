"""Random programs: symbolic_trace, then GraphModule, Interpreter and Transformer equal eager
(values, gradients, submodule hook logs), and the generated code equals torch.fx's.

CI runs a short budget; ``HOOKGRAD_FUZZ_N=2000 python3 -m pytest tests/fx/test_fuzz.py`` runs
the long mode (see docs/fx.md).
"""

from __future__ import annotations

import copy
import os
import pickle
import random

import numpy as np
import pytest

import hookgrad
from tests.fx import _programs as P

N_PROGRAMS = int(os.environ.get("HOOKGRAD_FUZZ_N", "40"))
B, D = 3, 4

# op name -> (number of tensor operands, body(lib, module, a, b, c, k))
OPS = {
    "add": lambda lib, m, a, b, c, k: a + b,
    "sub": lambda lib, m, a, b, c, k: a - b,
    "mul": lambda lib, m, a, b, c, k: a * b,
    "radd": lambda lib, m, a, b, c, k: c + a,
    "rsub": lambda lib, m, a, b, c, k: c - a,
    "rmul": lambda lib, m, a, b, c, k: c * a,
    "int_scalar": lambda lib, m, a, b, c, k: a * k,
    "div": lambda lib, m, a, b, c, k: a / (b.abs() + 1),
    "rdiv": lambda lib, m, a, b, c, k: c / (abs(a) + 1),
    "pow": lambda lib, m, a, b, c, k: a ** 2 / (a ** 2 + 1),
    "neg": lambda lib, m, a, b, c, k: -a,
    "relu": lambda lib, m, a, b, c, k: lib.relu(a),
    "tanh": lambda lib, m, a, b, c, k: lib.tanh(a),
    "sigmoid": lambda lib, m, a, b, c, k: lib.sigmoid(a),
    "sum_keep": lambda lib, m, a, b, c, k: a.sum(dim=1, keepdim=True) + b,
    "mean": lambda lib, m, a, b, c, k: a.mean(0) + b,
    "lin": lambda lib, m, a, b, c, k: m.lins[k % 2](a),
    "act": lambda lib, m, a, b, c, k: m.act(a),
    "block": lambda lib, m, a, b, c, k: m.block(a),
    "cat": lambda lib, m, a, b, c, k: lib.cat([a, b], dim=1)[:, :D],
    "where": lambda lib, m, a, b, c, k: lib.where(a > b, a, b),
    "shape": lambda lib, m, a, b, c, k: a * a.shape[1],
    "view": lambda lib, m, a, b, c, k: a.view(a.size(0), -1),
    "mm": lambda lib, m, a, b, c, k: (a @ b.t()) @ b / D,
    "clamp": lambda lib, m, a, b, c, k: a.clamp(min=-1.0, max=1.0),
    "maximum": lambda lib, m, a, b, c, k: lib.maximum(a, b),
    "softmax": lambda lib, m, a, b, c, k: a.softmax(dim=-1),
    "chunk": lambda lib, m, a, b, c, k: _swap_halves(lib, a),
    "param": lambda lib, m, a, b, c, k: a * m.scale,
    "buffer": lambda lib, m, a, b, c, k: a - m.offset,
    "alpha": lambda lib, m, a, b, c, k: lib.add(a, b, alpha=c),
    "transpose": lambda lib, m, a, b, c, k: a.transpose(0, 1).contiguous().transpose(0, 1),
    "stack": lambda lib, m, a, b, c, k: lib.stack([a, b]).sum(0),
    "masked_fill": lambda lib, m, a, b, c, k: a.masked_fill(a > b, c),
    "constant": lambda lib, m, a, b, c, k: a + m.const,
    "index": lambda lib, m, a, b, c, k: a[:, None, :].squeeze(1)[[2, 0, 1]],
}


def _swap_halves(lib, a):
    p, q = a.chunk(2, dim=1)
    return lib.cat([q, p], dim=1)


def make_program(seed: int) -> tuple[list, int]:
    rnd = random.Random(seed)
    steps = []
    for n in range(rnd.randint(1, 9)):
        pool = n + 2
        steps.append((rnd.choice(sorted(OPS)), rnd.randrange(pool), rnd.randrange(pool),
                      round(rnd.uniform(-2, 2), 2), rnd.randint(1, 3)))
    return steps, rnd.randrange(len(steps) + 2)


def build(lib, program):
    steps, extra = program

    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(D, D)

        def forward(self, x):
            return lib.tanh(self.fc(x)) + x

    class Random(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lins = lib.nn.ModuleList([lib.nn.Linear(D, D), lib.nn.Linear(D, D)])
            self.act = lib.nn.Tanh()
            self.block = Block()
            self.scale = lib.nn.Parameter(lib.ones(D) * 0.5)
            self.register_buffer("offset", lib.arange(D) * 0.25)
            self.const = lib.ones(B, 1) * 0.1  # a plain tensor attribute: a traced constant

        def forward(self, x, y):
            vals = [x, y]
            for op, i, j, c, k in steps:
                vals.append(OPS[op](lib, self, vals[i], vals[j], c, k))
            return vals[-1], vals[extra].sum()

    return Random()


# ops that read module state; a plain-function program uses tanh in their place
_MODULE_OPS = {"lin", "act", "block", "param", "buffer", "constant"}


def build_fn(lib, program):
    steps, extra = program

    def fn(x, y):
        vals = [x, y]
        for op, i, j, c, k in steps:
            op = "tanh" if op in _MODULE_OPS else op
            vals.append(OPS[op](lib, None, vals[i], vals[j], c, k))
        return vals[-1], vals[extra].sum()

    return fn


def check_function(seed: int, torch=None) -> None:
    program = make_program(seed)
    fn = build_fn(hookgrad, program)
    gm = hookgrad.fx.symbolic_trace(fn)
    gm.graph.lint()
    assert not list(gm.parameters()) and type(gm).__name__ == "fn"
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((B, D)).astype(np.float32) for _ in range(2)]
    eager = [v.numpy() for v in fn(*[hookgrad.tensor(a) for a in arrays])]
    _close(eager, [v.numpy() for v in gm(*[hookgrad.tensor(a) for a in arrays])])
    run = hookgrad.fx.Interpreter(gm).run(*[hookgrad.tensor(a) for a in arrays])
    _close(eager, [v.numpy() for v in run])
    if torch is not None:
        t_gm = torch.fx.symbolic_trace(build_fn(torch, program))
        assert P.normalise(gm.code) == t_gm.code, (seed, program)
        t_out = [v.numpy() for v in t_gm(*[torch.tensor(a) for a in arrays])]
        _close(eager, t_out, rtol=1e-4, atol=1e-5)


def _hook_all(lib, model, log):
    for name, mod in model.named_modules():
        if isinstance(mod, lib.nn.Linear):
            mod.register_forward_hook(lambda m, a, o, n=name: log.append(n))


def _run(lib, module, arrays):
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    module.zero_grad()
    out = module(*xs)
    (out[0].sum() + out[1]).backward()
    params = {n: p.grad.numpy().copy() for n, p in module.named_parameters()
              if p.grad is not None}
    grads = [None if x.grad is None else x.grad.numpy() for x in xs]
    return [o.detach().numpy() for o in out], grads, params


def _close(a, b, rtol=1e-5, atol=1e-6):
    for u, v in zip(a, b, strict=True):
        if u is None or v is None:
            assert u is None and v is None
        else:
            np.testing.assert_allclose(u, v, rtol=rtol, atol=atol)


def check_program(seed: int, torch=None) -> None:
    program = make_program(seed)
    model = build(hookgrad, program)
    gm = hookgrad.fx.symbolic_trace(model)
    gm.graph.lint()
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((B, D)).astype(np.float32) for _ in range(2)]
    runs = [gm, hookgrad.fx.Transformer(gm).transform()]
    if seed % 5 == 0:  # copies taken before hooks (lambdas) are registered
        runs += [pickle.loads(pickle.dumps(gm)), copy.deepcopy(gm)]
    eager_log = []
    _hook_all(hookgrad, model, eager_log)
    eager = _run(hookgrad, model, arrays)
    for variant in runs:
        got = _run(hookgrad, variant, arrays)
        _close(eager[0], got[0])
        _close(eager[1], got[1])
        # A GraphModule holds only the submodules and parameters its graph uses.
        assert sorted(got[2]) == sorted(eager[2])
        _close([eager[2][n] for n in sorted(eager[2])], [got[2][n] for n in sorted(got[2])])
    eager_log.clear()
    gm(*[hookgrad.tensor(a) for a in arrays])
    model(*[hookgrad.tensor(a) for a in arrays])
    half = len(eager_log) // 2
    assert eager_log[:half] == eager_log[half:]  # GraphModule fired the same submodule hooks
    interp = hookgrad.fx.Interpreter(gm).run(*[hookgrad.tensor(a) for a in arrays])
    _close(eager[0], [v.detach().numpy() for v in interp])
    if torch is not None:
        t_model = build(torch, program)
        P.copy_params(model, t_model)
        t_gm = torch.fx.symbolic_trace(t_model)
        assert P.normalise(gm.code) == t_gm.code, (seed, program)
        t_out = _run(torch, t_gm, arrays)
        # float32 sums may round differently in the two libraries
        _close(eager[0], t_out[0], rtol=1e-4, atol=1e-5)
        _close(eager[1], t_out[1], rtol=1e-4, atol=1e-5)
        assert sorted(t_out[2]) == sorted(eager[2])


def test_fuzz_traced_programs_equal_eager_and_torch(torch):
    for seed in range(N_PROGRAMS):
        check_program(seed, torch)


def test_fuzz_traced_functions_equal_eager_and_torch(torch):
    for seed in range(5000, 5000 + N_PROGRAMS):
        check_function(seed, torch)


def test_fuzz_without_oracle_still_checks_eager():
    # Runs even where torch is absent: the eager/GraphModule/Interpreter comparison alone.
    for seed in range(1000, 1000 + max(N_PROGRAMS // 4, 5)):
        check_program(seed)


@pytest.mark.parametrize("seed", [3, 17])
def test_fuzz_program_is_deterministic(seed):
    assert make_program(seed) == make_program(seed)
