"""Scenarios for the functional collectives (``distributed._functional_collectives``): values
and gradients of each, on every rank; registered in `scenarios.SCENARIOS` (threads backend,
mpiexec, and PyTorch/gloo as the oracle)."""

from __future__ import annotations

import importlib
import warnings

import numpy as np

from tests.distributed.scenarios import error_types, rounded, scenario


def _fc(lib):
    return importlib.import_module(f"{lib.__name__}.distributed._functional_collectives")


def _leaf(lib, rank, shape, seed):
    data = np.random.default_rng(seed + 10 * rank).normal(size=shape).astype(np.float32)
    return lib.tensor(data, requires_grad=True)


@scenario()
def functional_collectives_grads(lib, rank, world):
    """all_reduce / all_gather (dims 0 and 1) / reduce_scatter (dims 0 and 1) / all_to_all
    (uneven splits): each output weighted per rank and summed, so every gradient differs."""
    fc, group = _fc(lib), lib.distributed.group.WORLD
    a, b, c = _leaf(lib, rank, (2, 3), 1), _leaf(lib, rank, (2, 2), 2), _leaf(lib, rank, (4, 2), 3)
    d = _leaf(lib, rank, (3, 2), 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        outs = [fc.all_reduce(a * 2, "sum", group),
                fc.all_gather_tensor_autograd(b, 0, group),
                fc.all_gather_single(b, 1, group),
                fc.reduce_scatter_tensor_autograd(c, "sum", 0, group),
                fc.reduce_scatter_single(c.t(), "sum", 1, group),
                fc.all_to_all_single_autograd(d, [1, 2] if rank == 0 else [2, 1],
                                              [1, 2] if rank == 0 else [2, 1], group)]
    loss = sum(((o * (k + 1 + rank)) ** 2).sum() for k, o in enumerate(outs))
    loss.backward()
    avg = fc.all_reduce(a.detach(), "avg", group)
    top = fc.all_reduce(a.detach(), "MAX", group)
    src = fc.broadcast(a.detach() + rank, 1, group)
    return {"outs": rounded([o.detach().numpy() for o in outs]),
            "shapes": [list(o.shape) for o in outs],
            "grads": rounded([t.grad.numpy() for t in (a, b, c, d)]),
            "others": rounded([avg.numpy(), top.numpy(), fc.wait_tensor(src).numpy()])}


@scenario()
def functional_collectives_errors(lib, rank, world):
    """Error types: a non-sum reduction's backward, mismatched split arguments, a dim that does
    not divide, an unknown op name."""
    fc, group = _fc(lib), lib.distributed.group.WORLD
    x = _leaf(lib, rank, (2, 2), 5)
    checks = {
        "max_backward": lambda: fc.all_reduce(x * 1, "max", group).sum().backward(),
        "one_split_list": lambda: fc.all_to_all_single(x, [1, 1], None, group),
        "not_divisible": lambda: fc.reduce_scatter_single(_leaf(lib, rank, (3, 2), 6), "sum",
                                                          0, group),
    }
    return error_types(checks)
