"""Convolution layers against the oracle: copied weights, values, names, input and parameter
gradients; constructor checks, reprs, initialisation bounds and state-dict interchange."""

from __future__ import annotations

import math

import numpy as np
import pytest

import hookgrad
from tests.nn._compare import compare_module, copy_state, to_lib

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(7)


def randn(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


CONV2D = [
    dict(in_channels=2, out_channels=4, kernel_size=3),
    dict(
        in_channels=2,
        out_channels=4,
        kernel_size=(3, 2),
        stride=(2, 1),
        padding=(1, 2),
        dilation=(1, 2),
        bias=False,
    ),
    dict(in_channels=4, out_channels=6, kernel_size=3, groups=2, padding="same"),
    dict(in_channels=2, out_channels=2, kernel_size=3, padding="valid"),
    dict(in_channels=3, out_channels=3, kernel_size=3, groups=3, stride=2),
    dict(in_channels=2, out_channels=3, kernel_size=3, padding=1, padding_mode="reflect"),
    dict(in_channels=2, out_channels=3, kernel_size=3, padding=(1, 2), padding_mode="circular"),
    dict(in_channels=2, out_channels=3, kernel_size=2, padding=1, padding_mode="replicate"),
]


@pytest.mark.parametrize("kw", CONV2D, ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
def test_conv2d_module(torch, kw):
    x = randn(2, kw["in_channels"], 7, 6)
    compare_module(torch, lambda lib: lib.nn.Conv2d(**kw), [(x, True)])


def test_conv2d_unbatched_and_float64(torch):
    compare_module(torch, lambda lib: lib.nn.Conv2d(3, 2, 3, padding=1), [(randn(3, 5, 5), True)])
    compare_module(
        torch,
        lambda lib: lib.nn.Conv2d(3, 2, 3).double(),
        [(randn(2, 3, 5, 5, dtype="float64"), True)],
        atol=1e-10,
        rtol=1e-10,
    )


@pytest.mark.filterwarnings("ignore:Using padding='same'")
def test_conv2d_same_even_kernel_pads_right(torch):
    # PyTorch pads the odd extra column on the right with an explicit ConstantPadNd node
    compare_module(
        torch,
        lambda lib: lib.nn.Conv2d(2, 3, (2, 4), padding="same", dilation=1),
        [(randn(1, 2, 5, 6), True)],
    )


@pytest.mark.parametrize(
    "kw",
    [
        dict(in_channels=2, out_channels=3, kernel_size=3),
        dict(
            in_channels=4,
            out_channels=2,
            kernel_size=2,
            stride=2,
            padding=1,
            dilation=2,
            groups=2,
            bias=False,
        ),
        dict(in_channels=2, out_channels=2, kernel_size=3, padding="same", padding_mode="circular"),
    ],
)
def test_conv1d_module(torch, kw):
    compare_module(torch, lambda lib: lib.nn.Conv1d(**kw), [(randn(3, kw["in_channels"], 9), True)])
    compare_module(torch, lambda lib: lib.nn.Conv1d(**kw), [(randn(kw["in_channels"], 9), True)])


@pytest.mark.parametrize(
    "kw",
    [
        dict(in_channels=2, out_channels=3, kernel_size=3),
        dict(
            in_channels=4,
            out_channels=2,
            kernel_size=(3, 2),
            stride=(2, 3),
            padding=(1, 0),
            output_padding=(1, 2),
            groups=2,
            bias=False,
        ),
        dict(in_channels=2, out_channels=4, kernel_size=2, stride=2, dilation=3, output_padding=2),
    ],
)
def test_conv_transpose2d_module(torch, kw):
    compare_module(
        torch, lambda lib: lib.nn.ConvTranspose2d(**kw), [(randn(2, kw["in_channels"], 4, 5), True)]
    )


def test_conv_transpose1d_module(torch):
    def make(lib):
        return lib.nn.ConvTranspose1d(2, 3, 3, stride=2, padding=1, output_padding=1)

    compare_module(torch, make, [(randn(2, 2, 6), True)])
    compare_module(torch, make, [(randn(2, 6), True)])


def test_conv_transpose2d_output_size(torch):
    def make(lib):
        up = lib.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)

        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.up = up

            def forward(self, x):
                return self.up(x, output_size=[2, 3, 10, 9])

        return M()

    compare_module(torch, make, [(randn(2, 3, 5, 5), True)])
    for lib in (torch, hookgrad):
        up = lib.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)
        with pytest.raises(ValueError, match="requested an output size"):
            up(lib.zeros(1, 3, 5, 5), output_size=[12, 12])


def _reprs(torch, cls, *args, **kw):
    assert repr(getattr(hookgrad.nn, cls)(*args, **kw)) == repr(getattr(torch.nn, cls)(*args, **kw))


def test_reprs_match(torch):
    _reprs(torch, "Conv2d", 2, 4, 3)
    _reprs(
        torch,
        "Conv2d",
        2,
        4,
        (3, 1),
        stride=2,
        padding=1,
        dilation=2,
        groups=2,
        bias=False,
        padding_mode="reflect",
    )
    _reprs(torch, "Conv2d", 2, 4, 3, padding="same")
    _reprs(torch, "Conv1d", 2, 4, 5, padding="valid")
    _reprs(torch, "ConvTranspose2d", 2, 4, 3, stride=2, output_padding=1, groups=2)
    _reprs(torch, "ConvTranspose1d", 2, 4, 3)


@pytest.mark.parametrize(
    "kw",
    [
        dict(groups=0),
        dict(groups=3),
        dict(padding="full"),
        dict(padding="same", stride=2),
        dict(padding_mode="mirror"),
    ],
)
def test_constructor_errors_match(torch, kw):
    args = (4, 6, 3)
    with pytest.raises(ValueError) as mine:
        hookgrad.nn.Conv2d(*args, **kw)
    with pytest.raises(ValueError) as theirs:
        torch.nn.Conv2d(*args, **kw)
    # both messages print a Python set; its order follows each module's compiled constant
    assert _sorted_sets(str(mine.value)) == _sorted_sets(str(theirs.value))


def _sorted_sets(text):
    import re

    return re.sub(r"\{([^}]*)\}", lambda m: str(sorted(m.group(1).split(", "))), text)


def test_conv_transpose_rejects_padding_mode(torch):
    for lib in (hookgrad, torch):
        with pytest.raises(ValueError, match='Only "zeros" padding mode is supported'):
            lib.nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")


def test_state_dict_round_trip_both_ways(torch):
    tm, hm = torch.nn.Conv2d(2, 4, 3, groups=2), hookgrad.nn.Conv2d(2, 4, 3, groups=2)
    assert list(tm.state_dict()) == list(hm.state_dict()) == ["weight", "bias"]
    copy_state(tm, hm, hookgrad)
    back = torch.nn.Conv2d(2, 4, 3, groups=2)
    copy_state(hm, back, torch)
    np.testing.assert_array_equal(back.weight.detach().numpy(), tm.weight.detach().numpy())


@pytest.mark.parametrize(
    ("cls", "args"),
    [("Conv2d", (4, 6, (3, 2))), ("Conv1d", (3, 5, 4)), ("ConvTranspose2d", (4, 6, 3))],
)
def test_default_init_bounds(cls, args):
    # kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)); so does the bias
    hookgrad.manual_seed(0)
    m = getattr(hookgrad.nn, cls)(*args)
    fan_in = m.weight.shape[1] * math.prod(m.weight.shape[2:])
    bound = 1 / math.sqrt(fan_in)
    for p in (m.weight, m.bias):
        a = p.detach().numpy()
        assert np.abs(a).max() <= bound + 1e-7
        assert np.abs(a).max() > 0.5 * bound  # uses the range, not a constant
    big = hookgrad.nn.Conv2d(64, 64, 3).weight.detach().numpy()
    assert abs(big.std() - (1 / math.sqrt(64 * 9)) / math.sqrt(3)) < 2e-3  # uniform's std


def test_conv_module_trains_like_torch(torch):
    """A few SGD steps of conv -> batch norm -> relu -> max pool -> linear stay in lockstep."""

    def make(lib):
        return lib.nn.Sequential(
            lib.nn.Conv2d(1, 4, 3, padding=1),
            lib.nn.BatchNorm2d(4),
            lib.nn.ReLU(),
            lib.nn.MaxPool2d(2),
            lib.nn.Flatten(),
            lib.nn.Linear(4 * 4 * 4, 3),
        )

    tm, hm = make(torch), make(hookgrad)
    copy_state(tm, hm, hookgrad)
    x, y = randn(6, 1, 8, 8), RNG.integers(0, 3, size=6)
    for lib, m in ((torch, tm), (hookgrad, hm)):
        opt = lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        xs, ys = to_lib(lib, x), lib.tensor(y)
        for _ in range(3):
            opt.zero_grad()
            lib.nn.functional.cross_entropy(m(xs), ys).backward()
            opt.step()
    for (k, tv), hv in zip(tm.state_dict().items(), hm.state_dict().values(), strict=True):
        np.testing.assert_allclose(hv.numpy(), tv.numpy(), rtol=1e-4, atol=1e-5, err_msg=k)
