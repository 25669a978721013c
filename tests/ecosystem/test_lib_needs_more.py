"""More of what real libraries (pyro, gpytorch, ptflops, torchopt, ...) rely on, tested without them.

Each test is an oracle test of a hookgrad behaviour that a library needed at import or on its
main path, found by running the library unmodified under ``python -m hookgrad.run``.
"""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def test_validate_args_default_is_a_class_attribute(torch):
    """pyro reads ``Distribution._validate_args``; instances follow later default changes."""

    def scenario(L):
        D = L.distributions
        out = [D.Distribution._validate_args]
        loose = D.Normal(L.tensor(0.0), L.tensor(1.0))
        strict = D.Normal(L.tensor(0.0), L.tensor(1.0), validate_args=True)
        try:
            D.Distribution.set_default_validate_args(False)
            out += [D.Distribution._validate_args, loose._validate_args, strict._validate_args,
                    "_validate_args" in vars(loose), "_validate_args" in vars(strict)]
            out.append(D.Normal(L.tensor(0.0), L.tensor(-1.0)).scale.item())  # not validated
        finally:
            D.Distribution.set_default_validate_args(True)
        out.append(loose._validate_args)
        with pytest.raises(ValueError):
            D.Normal(L.tensor(0.0), L.tensor(-1.0))
        return out

    assert scenario(hookgrad) == scenario(torch)


def test_op_objects_deep_copy_to_themselves(torch):
    """ptflops deep-copies a table keyed and valued by ``torch.ops.aten`` op objects."""
    import copy

    def scenario(L):
        packet = L.ops.aten.add
        op = packet.Tensor
        table = copy.deepcopy({packet: [op], "mm": L.ops.aten.mm})
        names = []
        for name in ("__missing__", "_private", "no_such_overload"):
            with pytest.raises(AttributeError) as info:
                getattr(packet, name)
            names.append(name in str(info.value))
        return (copy.deepcopy(packet) is packet, copy.deepcopy(op) is op,
                list(table) == [packet, "mm"], table[packet][0] is op,
                table["mm"] is L.ops.aten.mm, names, hasattr(packet, "__setstate__"))

    assert scenario(hookgrad) == scenario(torch)
    # PyTorch's copy.copy of a packet never returns; hookgrad's gives the op itself
    assert copy_is_identity(hookgrad)


def copy_is_identity(L):
    import copy
    return copy.copy(L.ops.aten.add) is L.ops.aten.add and copy.copy(
        L.ops.aten.add.Tensor) is L.ops.aten.add.Tensor


def _conv_calls(L, transposed, bias):
    from importlib import import_module
    mode_base = import_module(L.__name__ + ".utils._python_dispatch").TorchDispatchMode
    seen = []

    class Log(mode_base):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func.overloadpacket is L.ops.aten.convolution:
                seen.append((str(func), [tuple(a.shape) if isinstance(a, L.Tensor) else a
                                         for a in args], kwargs or {}))
                return L.ops.aten.convolution.default(*args, **(kwargs or {}))
            return func(*args, **(kwargs or {}))

    x = L.tensor(np.linspace(-1, 1, 2 * 3 * 5 * 5).reshape(2, 3, 5, 5))
    w = L.tensor(np.cos(np.arange(3 * 4 * 3 * 3.0)).reshape((3, 4, 3, 3) if transposed
                                                            else (4, 3, 3, 3)))
    b = L.tensor([0.5, -1.0, 2.0, 0.25], dtype=L.float64) if bias else None
    with Log():
        if transposed:
            y = L.nn.functional.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1)
        else:
            y = L.nn.functional.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2))
    # a direct call by ATen's keyword names runs the same convolution
    again = L.ops.aten.convolution.default(
        input=x, weight=w, bias=b, stride=[2, 2] if transposed else [2, 1], padding=[1, 1],
        dilation=[1, 1] if transposed else [1, 2], transposed=transposed,
        output_padding=[1, 1] if transposed else [0, 0], groups=1)
    return seen, y.numpy(), again.numpy()


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_convolution_reaches_modes_with_atens_positional_args(torch, transposed, bias):
    """Flop counters (ptflops' aten backend, fvcore) unpack ``aten.convolution``'s ``args``."""
    ref, got = _conv_calls(torch, transposed, bias), _conv_calls(hookgrad, transposed, bias)
    assert got[0] == ref[0] and len(ref[0]) == 1
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got[2], ref[1], rtol=1e-12, atol=1e-12)
