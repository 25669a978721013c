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
        D.Distribution.set_default_validate_args(True)  # other tests may have left it off
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


def _restrides(L):
    out = []
    x = L.zeros(2, 1, 3)
    v = x._version
    out.append((x.squeeze_() is x, tuple(x.shape), x.stride(), x._version - v))
    b = L.arange(6.0).reshape(2, 3)
    x = b[:, :1]
    x.squeeze_(1)
    b.add_(1)  # still shares the storage
    out.append((tuple(x.shape), x.stride(), x.tolist()))
    z = L.arange(6.0).reshape(2, 3)
    z.t_()
    out.append((tuple(z.shape), z.stride(), z.is_contiguous(), z.tolist()))
    z.transpose_(0, 1).swapdims_(0, 1).swapaxes_(1, 0).unsqueeze_(-1)
    out.append((tuple(z.shape), z.stride(), z.tolist()))
    leaf = L.zeros(2, 1, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf.squeeze_()
    with L.no_grad():
        leaf.unsqueeze_(0)
    out.append((tuple(leaf.shape), leaf.requires_grad))
    return out


def test_inplace_view_changes(torch):
    """torchopt's Adam count: ``torch.zeros(1).squeeze_()``; and the other in-place restrides."""
    assert _restrides(hookgrad) == _restrides(torch)
    names = [type((L.ones(2, 1, requires_grad=True) * 2).squeeze_().grad_fn).__name__
             for L in (hookgrad, torch)]  # with autograd history: a view node, as PyTorch
    assert names[0] == names[1]


def test_rpc_and_dist_autograd_import_as_on_a_build_without_them(torch):
    """torchopt imports torch.distributed.rpc and checks ``is_available()`` first."""
    import hookgrad.distributed.autograd as dist_autograd
    import hookgrad.distributed.rpc as rpc
    assert rpc.is_available() is False and dist_autograd.is_available() is False
    with pytest.raises(RuntimeError, match="not available"):
        with dist_autograd.context():
            pass


def test_elastic_record_writes_pytorchs_error_file(torch, tmp_path, monkeypatch):
    """torchopt imports ``record``; the error file is PyTorch's JSON."""
    import json
    from importlib import import_module

    def scenario(L, name):
        errors = import_module(L.__name__ + ".distributed.elastic.multiprocessing.errors")
        monkeypatch.setenv("TORCHELASTIC_ERROR_FILE", str(tmp_path / name))

        @errors.record
        def fails(x):
            raise ValueError(f"bad {x}")

        @errors.record
        def exits():
            raise SystemExit(0)

        with pytest.raises(ValueError):
            fails(3)
        data = json.loads((tmp_path / name).read_text())
        info = data["message"].pop("extraInfo")
        return (data, sorted(info), "ValueError: bad 3" in info["py_callstack"], exits(),
                errors.record(lambda a, b=1: a + b)(2, b=5), fails.__name__)

    assert scenario(hookgrad, "hg.json") == scenario(torch, "pt.json")


def _functional_models(L, fm):
    import warnings
    nn = L.nn
    out = []
    lin = nn.Linear(3, 2)
    with L.no_grad():
        lin.weight.copy_(L.tensor(np.arange(6.0).reshape(2, 3) / 7, dtype=L.float32))
        lin.bias.copy_(L.tensor([0.5, -0.5]))
    x = L.tensor(np.cos(np.arange(12.0)).reshape(4, 3), dtype=L.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fmodel, params = fm.make_functional(lin)
    out.append([str(w.category.__name__) for w in caught])
    out.append((type(fmodel).__name__, fmodel.param_names, [tuple(p.shape) for p in params]))
    doubled = [p * 2 for p in params]
    y = fmodel(doubled, x)
    g = L.autograd.grad(y.sum(), params)  # the originals are not in the graph
    out.append((y.tolist(), lin(x).tolist(), fmodel(params, x).tolist()))
    out.append([t is None for t in L.autograd.grad(fmodel(params, x).sum(), params)] + [len(g)])
    net = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    net[0].weight = nn.Parameter(L.eye(3))
    tied = nn.Sequential(net[0], nn.ReLU(), net[0])
    fnet, p2, b2 = fm.make_functional_with_buffers(tied)
    out.append((fnet.param_names, fnet.buffer_names, len(p2), len(b2)))
    with pytest.raises(RuntimeError, match="has buffers"):
        fm.make_functional(net)
    models = [nn.Linear(2, 2) for _ in range(3)]
    for i, m in enumerate(models):
        with L.no_grad():
            for p in m.parameters():
                p.fill_(float(i))
    fens, ps, bs = fm.combine_state_for_ensemble(models)
    out.append(([tuple(p.shape) for p in ps], len(bs), ps[0][:, 0, 0].tolist(),
                ps[0].requires_grad))
    with pytest.raises(RuntimeError, match="at least one model"):
        fm.combine_state_for_ensemble([])
    return out


def test_functorch_make_functional(torch):
    """torchopt and older meta-learning code use ``functorch.make_functional``."""
    import warnings

    import functorch

    import hookgrad._functorch.deprecated as ours
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # every functorch call warns
        assert _functional_models(hookgrad, ours) == _functional_models(torch, functorch)


def _dist_nn_scenario(rank, world_size):
    from hookgrad.distributed import nn as dist_nn  # imported by the test, before the threads
    x = (hookgrad.arange(3.0) + rank).requires_grad_()
    a = dist_nn.all_reduce(x * (rank + 1))
    b = dist_nn.broadcast(x, 1)
    g = dist_nn.all_gather(x * 2)
    loss = (rank + 1) * a.sum() + (rank + 2) * b.sum() + sum(
        (i + 1) * (rank + 1) * t.sum() for i, t in enumerate(g))
    loss.backward()
    return (None, a.tolist(), b.tolist(), [t.tolist() for t in g], x.grad.tolist())


def test_distributed_nn_collectives_and_their_gradients():
    """vector-quantize-pytorch: ``from torch.distributed import nn as dist_nn``.

    Gradients by PyTorch's rules (two ranks, x_r = arange(3) + r): all_reduce's is the sum over
    ranks of the output gradients ((1 + 2) * (r + 1)); broadcast's is their sum on the source
    (2 + 3 on rank 1, 0 on rank 0); all_gather's for rank r's piece is the sum over ranks of
    the gradient each gave it ((r + 1) * (1 + 2), times 2).
    """
    import warnings

    import hookgrad.distributed.nn  # noqa: F401 - a first import inside a rank thread deadlocks
    from hookgrad.testing.distributed import run_ranks
    with warnings.catch_warnings(record=True) as caught:  # process-wide: not in the threads
        warnings.simplefilter("always")
        r0, r1 = run_ranks(_dist_nn_scenario, 2)
    assert [w.category for w in caught] == [FutureWarning] * 6
    assert r0[1] == r1[1] == [2.0, 5.0, 8.0]
    assert r0[2] == r1[2] == [1.0, 2.0, 3.0]
    assert r0[3] == r1[3] == [[0.0, 2.0, 4.0], [2.0, 4.0, 6.0]]
    assert r0[4] == [3 + 0 + 6.0] * 3 and r1[4] == [6 + 5 + 12.0] * 3


def test_jit_get_trace_graph_is_a_clear_runtime_error(torch):
    """torchprofile calls ``torch.jit._get_trace_graph``: PyTorch returns its IR graph;
    hookgrad has none, and says so with PyTorch's tracing-failure type."""
    lin = torch.nn.Linear(2, 1)
    graph, _ = torch.jit._get_trace_graph(lin, (torch.ones(1, 2),))
    assert hasattr(graph, "nodes")
    with pytest.raises(RuntimeError, match="no TorchScript"):
        hookgrad.jit._get_trace_graph(hookgrad.nn.Linear(2, 1), (hookgrad.ones(1, 2),))


def test_are_functorch_transforms_active_inside_every_transform(torch):
    """kornia's SSIM asks ``torch._C._are_functorch_transforms_active()`` before picking a
    kernel: False outside, True inside grad, vmap, jvp and vjp, False again after."""
    def scenario(lib):
        seen = [lib._C._are_functorch_transforms_active()]

        def f(x):
            seen.append(lib._C._are_functorch_transforms_active())
            return (x * x).sum()

        lib.func.grad(f)(lib.ones(3))
        lib.vmap(lambda x: (seen.append(lib._C._are_functorch_transforms_active()), x)[1])(
            lib.ones(2, 2))
        lib.func.jvp(f, (lib.ones(3),), (lib.ones(3),))
        lib.func.vjp(f, lib.ones(3))
        return [*seen, lib._C._are_functorch_transforms_active()]

    assert scenario(hookgrad) == scenario(torch)
