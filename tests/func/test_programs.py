"""Realistic torch.func programs (tests/func/_programs.py: per-sample gradients with buffers,
ensembling, NTK, MAML, forward mode, Hessians over parameter dicts, vmap over many ops,
randomness, ``autograd.Function`` under vmap, ``functionalize``, batch-norm replacement, module
hooks) run on PyTorch and on hookgrad with the same weights and seeds: the results (values,
pytree structure, dtypes, hook logs, exception types) must agree."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad
from tests.func._programs import PROGRAMS


def _leaves(out, path="out"):
    if isinstance(out, dict):
        for k in sorted(out):
            yield from _leaves(out[k], f"{path}[{k!r}]")
    elif isinstance(out, (tuple, list)):
        yield (path, type(out).__name__, len(out))
        for i, v in enumerate(out):
            yield from _leaves(v, f"{path}[{i}]")
    elif hasattr(out, "detach") and hasattr(out, "dtype"):
        yield (path, str(out.dtype), np.asarray(out.detach().numpy()))
    else:
        yield (path, out)


def _run(lib, name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(_leaves(PROGRAMS[name](lib)))


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_matches_torch_func(torch, name):
    want, got = _run(torch, name), _run(hookgrad, name)
    assert [w[0] for w in want] == [g[0] for g in got]
    for w, g in zip(want, got):
        if len(w) == 3 and isinstance(w[2], np.ndarray):
            assert w[1] == g[1], w[0]
            np.testing.assert_allclose(g[2], w[2], rtol=2e-4, atol=2e-5, err_msg=w[0])
        else:
            assert g == w
