"""``torch._C._functorch`` helpers and the smaller ``torch.func`` names against PyTorch.

hookgrad keeps every batch dimension at 0 and numbers levels by unique ids (docs/func.md), so
what is compared is what does not depend on either: booleans, -1/None outside vmap, shapes of
the logical values, round trips and exception types.
"""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad

X = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)


def _probe(lib):
    F = lib._C._functorch
    x = lib.tensor(X)
    out = [F.is_batchedtensor(x), F.maybe_get_level(x), F.maybe_get_bdim(x),
           F.maybe_current_level(), F._unwrap_batched(x, 1)[1], F.is_functorch_wrapped_tensor(x)]
    seen = []

    def f(t):
        level = F.current_level()
        phys, bdim = F._unwrap_batched(t, level)
        seen.append((F.is_batchedtensor(t), F.maybe_get_level(t) == level,
                     F.maybe_current_level() == level, bdim is not None,
                     F._unwrap_batched(t, level + 100)[1], F.is_batchedtensor(phys),
                     F.is_functorch_wrapped_tensor(t), F.is_gradtrackingtensor(t),
                     tuple(lib.func.debug_unwrap(t).shape) in ((3, 4), (4, 3))))
        return t

    lib.func.vmap(f)(x)
    level = F._vmap_increment_nesting(3, "error")
    try:
        b = F._add_batch_dim(x, 0, level)
        shapes = (tuple(b.shape), F.is_batchedtensor(b), F.maybe_get_level(b) == level)
        back = F._remove_batch_dim(b * 2, level, 3, 1)
    finally:
        F._vmap_decrement_nesting()
    errors = []
    for call in (F.current_level, lambda: F.get_unwrapped(x)):
        try:
            call()
        except Exception as exc:  # noqa: BLE001 - the type is what is compared
            errors.append(type(exc).__name__)
    return out, seen, shapes, back.numpy(), errors, F.maybe_current_level()


@pytest.mark.oracle
def test_functorch_helpers_match_torch(torch):
    got, want = _probe(hookgrad), _probe(torch)
    assert got[0] == want[0] and got[1] == want[1] and got[2] == want[2]
    np.testing.assert_allclose(got[3], want[3])
    assert got[4:] == want[4:]


@pytest.mark.oracle
def test_functionalize_and_batch_norm_replacement(torch):
    def run(lib):
        def f(a):
            a.add_(1)
            return a * 2

        x = lib.tensor(X)
        out = lib.func.functionalize(f)(x)
        try:
            lib.func.functionalize(f, remove="nope")
        except RuntimeError as exc:
            err = str(exc)[:60]
        m = lib.nn.Sequential(lib.nn.Conv2d(1, 2, 3), lib.nn.BatchNorm2d(2))
        assert lib.func.replace_all_batch_norm_modules_(m) is m
        bn = m[1]
        return (out.numpy(), x.numpy(), err, bn.running_mean, bn.track_running_stats,
                sorted(dict(m.named_buffers())))

    got, want = run(hookgrad), run(torch)
    np.testing.assert_allclose(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1])
    assert got[2:] == want[2:]
