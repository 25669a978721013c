"""``Tensor.share_memory_`` / ``is_shared`` / ``Module.share_memory``: a forked process writes
into the parent's tensors, as in PyTorch (found running pytorch/examples mnist_hogwild, where the
parent tested an untrained model because ``share_memory_`` did nothing)."""

from __future__ import annotations

import io
import os

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _hogwild(lib):
    lib.manual_seed(0)
    model = lib.nn.Linear(3, 2)
    flags = [p.is_shared() for p in model.parameters()]
    assert model.share_memory() is model
    flags += [p.is_shared() for p in model.parameters()]
    pid = os.fork()
    if pid == 0:  # the child trains; only shared memory carries its update back
        try:
            opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
            for _ in range(2):
                opt.zero_grad()
                model(lib.ones(4, 3)).pow(2).sum().backward()
                opt.step()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    return flags, [p.detach().numpy().copy() for p in model.parameters()]


def test_forked_training_updates_the_parents_shared_model(torch):
    (want_flags, want), (got_flags, got) = _hogwild(torch), _hogwild(hookgrad)
    assert got_flags == want_flags == [False, False, True, True]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.parametrize("shape", [(0,), (), (2, 3)])
def test_shared_tensor_keeps_values_and_works_like_any_other(torch, shape):
    for lib in (torch, hookgrad):
        x = lib.arange(float(np.prod(shape))).reshape(shape).clone()  # not a view (see module)
        before = x.numpy().copy()
        assert x.share_memory_() is x and x.is_shared()
        np.testing.assert_array_equal(x.numpy(), before)
        x.add_(1)
        buf = io.BytesIO()
        lib.save({"x": x}, buf)
        buf.seek(0)
        y = lib.load(buf)["x"]
        np.testing.assert_array_equal(y.numpy(), before + 1)
        assert not y.is_shared() and not x.clone().is_shared()
