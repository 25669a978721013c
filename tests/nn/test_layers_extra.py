"""The layers tools key on (issue 14): padding, upsampling, pixel shuffle, distances, instance
norm, 3-d convolution/pooling/batch norm, adaptive max pooling, max unpooling, SyncBatchNorm.

Each runs on PyTorch and hookgrad with copied weights (values, grad_fn names, input and
parameter gradients in train and eval mode), and reprs match.
"""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.nn._compare import compare_module, to_lib

pytestmark = pytest.mark.oracle

RNG = np.random.default_rng(77)


def randn(*shape):
    return RNG.standard_normal(shape).astype("float64")


_PAD_CASES = [
    ("ZeroPad1d", (2,), (2, 3, 5)), ("ZeroPad2d", ((1, 0, 2, 1),), (1, 2, 3, 4)),
    ("ZeroPad3d", (1,), (1, 1, 2, 2, 2)), ("ConstantPad1d", (2, 3.5), (2, 4)),
    ("ConstantPad2d", ((1, 2, 0, 1), -1.0), (1, 2, 3, 3)), ("ConstantPad3d", (1, 0.5), (1, 2, 2, 2)),
    ("ReflectionPad1d", (2,), (1, 2, 5)), ("ReflectionPad2d", ((1, 2, 2, 0),), (1, 2, 4, 4)),
    ("ReflectionPad3d", (1,), (1, 1, 3, 3, 3)), ("ReplicationPad1d", ((3, 1),), (1, 2, 4)),
    ("ReplicationPad2d", (2,), (1, 1, 3, 3)), ("ReplicationPad3d", (1,), (1, 1, 2, 3, 2)),
    ("CircularPad1d", (2,), (1, 2, 4)), ("CircularPad2d", ((1, 0, 2, 1),), (1, 1, 3, 4)),
    ("CircularPad3d", (1,), (1, 1, 2, 3, 3)),
]


@pytest.mark.parametrize(("name", "args", "shape"), _PAD_CASES, ids=[c[0] for c in _PAD_CASES])
def test_padding_modules(torch, name, args, shape):
    compare_module(torch, lambda lib: getattr(lib.nn, name)(*args), [(randn(*shape), True)])
    assert repr(getattr(hookgrad.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))
    assert getattr(hookgrad.nn, name)(*args).padding == getattr(torch.nn, name)(*args).padding


def test_circular_pad_rank_check(torch):
    for lib in (torch, hookgrad):
        with pytest.raises(ValueError, match="expected 3D or 4D input"):
            lib.nn.CircularPad2d(1)(lib.ones(2, 2))


_UP_CASES = [
    ("Upsample", {"scale_factor": 2}, (1, 2, 3, 4)),
    ("Upsample", {"size": (5, 7), "mode": "bilinear"}, (1, 2, 3, 4)),
    ("Upsample", {"scale_factor": 1.5, "mode": "bicubic", "align_corners": True}, (1, 1, 3, 4)),
    ("Upsample", {"scale_factor": 2, "mode": "linear"}, (1, 2, 5)),
    ("Upsample", {"scale_factor": (2, 1, 2), "mode": "trilinear"}, (1, 1, 2, 3, 2)),
    ("Upsample", {"scale_factor": 2, "mode": "nearest-exact"}, (1, 1, 3, 3)),
    ("UpsamplingNearest2d", {"scale_factor": 3}, (1, 2, 2, 3)),
    ("UpsamplingBilinear2d", {"size": 6}, (1, 2, 3, 4)),
]


@pytest.mark.parametrize(("name", "kw", "shape"), _UP_CASES)
def test_upsampling_modules(torch, name, kw, shape):
    compare_module(torch, lambda lib: getattr(lib.nn, name)(**kw), [(randn(*shape), True)],
                   atol=1e-10)
    assert repr(getattr(hookgrad.nn, name)(**kw)) == repr(getattr(torch.nn, name)(**kw))


@pytest.mark.parametrize("kw", [{"size": 3, "scale_factor": 2}, {}, {"size": 3,
                                                                  "align_corners": True},
                                {"size": 3, "mode": "linear"}, {"size": (3, 3, 3)},
                                {"size": 3, "mode": "foo"}, {"size": 3, "antialias": True}])
def test_interpolate_errors(torch, kw):
    def run(lib):
        try:
            lib.nn.functional.interpolate(lib.ones(1, 2, 4, 4), **kw)
        except Exception as e:  # noqa: BLE001 - the type and message are what is compared
            return type(e).__name__, str(e)
        return None

    assert run(hookgrad) == run(torch)


def test_interpolate_recompute_scale_factor(torch):
    x = randn(1, 1, 5, 5)
    outs = [lib.nn.functional.interpolate(to_lib(lib, x), scale_factor=1.3, mode="bilinear",
                                          recompute_scale_factor=True).numpy()
            for lib in (torch, hookgrad)]
    np.testing.assert_allclose(outs[1], outs[0], atol=1e-12)


def test_pixel_shuffle_modules(torch):
    compare_module(torch, lambda lib: lib.nn.PixelShuffle(2), [(randn(2, 8, 3, 2), True)])
    compare_module(torch, lambda lib: lib.nn.PixelUnshuffle(3), [(randn(1, 2, 6, 3), True)])
    assert repr(hookgrad.nn.PixelShuffle(2)) == repr(torch.nn.PixelShuffle(2))
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError, match="divisible"):
            lib.nn.functional.pixel_shuffle(lib.ones(1, 3, 2, 2), 2)


def test_distance_modules(torch):
    a, b = randn(4, 5), randn(4, 5)
    compare_module(torch, lambda lib: lib.nn.CosineSimilarity(), [(a, True), (b, True)])
    compare_module(torch, lambda lib: lib.nn.CosineSimilarity(dim=0, eps=0.5),
                   [(a, True), (b, True)])
    compare_module(torch, lambda lib: lib.nn.PairwiseDistance(), [(a, True), (b, True)])
    compare_module(torch, lambda lib: lib.nn.PairwiseDistance(p=1.0, keepdim=True),
                   [(a, True), (b, True)])
    assert repr(hookgrad.nn.PairwiseDistance()) == repr(torch.nn.PairwiseDistance())


def test_cosine_similarity_zero_vector(torch):
    # the clamped norm adds no node: the gradient is finite at a zero vector, as in PyTorch
    a, b = np.zeros((2, 3)), randn(2, 3)
    compare_module(torch, lambda lib: lib.nn.CosineSimilarity(), [(a, True), (b, True)])


@pytest.mark.parametrize(("nd", "shape"), [(1, (2, 3, 5)), (2, (2, 3, 4, 4)), (3, (2, 3, 2, 3, 2)),
                                           (2, (3, 4, 4))])
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("track", [False, True])
def test_instance_norm_modules(torch, nd, shape, affine, track):
    def make(lib):
        m = getattr(lib.nn, f"InstanceNorm{nd}d")(3, affine=affine, track_running_stats=track)
        return m.double()

    tm, hm = compare_module(torch, make, [(randn(*shape), True)], atol=1e-10)
    if track:
        for k in ("running_mean", "running_var"):
            np.testing.assert_allclose(getattr(hm, k).numpy(), getattr(tm, k).numpy(), atol=1e-12)
    assert repr(make(hookgrad)) == repr(make(torch))
    assert list(make(hookgrad).state_dict()) == list(make(torch).state_dict())


def test_instance_norm_checks(torch):
    for lib in (torch, hookgrad):
        with pytest.raises(ValueError, match="expected 3D or 4D input"):
            lib.nn.InstanceNorm2d(3)(lib.ones(3, 4))
        with pytest.raises(ValueError, match="to match num_features"):
            lib.nn.InstanceNorm1d(3, affine=True)(lib.ones(2, 4, 5))
        with pytest.raises(ValueError, match="more than 1 spatial element"):
            lib.nn.functional.instance_norm(lib.ones(2, 3, 1))


def test_conv3d_modules(torch):
    compare_module(torch, lambda lib: lib.nn.Conv3d(2, 4, 3, padding=1, stride=(1, 2, 1)).double(),
                   [(randn(2, 2, 4, 5, 4), True)], atol=1e-10)
    compare_module(torch, lambda lib: lib.nn.Conv3d(4, 2, 2, groups=2, bias=False,
                                                    padding_mode="circular", padding=1).double(),
                   [(randn(1, 4, 3, 3, 3), True)], atol=1e-10)
    compare_module(torch, lambda lib: lib.nn.ConvTranspose3d(2, 3, 2, stride=2).double(),
                   [(randn(1, 2, 2, 3, 2), True)], atol=1e-10)
    assert repr(hookgrad.nn.Conv3d(2, 4, 3)) == repr(torch.nn.Conv3d(2, 4, 3))


def test_conv_transpose3d_output_size(torch):
    outs = []
    for lib in (torch, hookgrad):
        lib.manual_seed(0)
        m = lib.nn.ConvTranspose3d(2, 1, 3, stride=2, padding=1)
        outs.append(tuple(m(lib.ones(1, 2, 3, 3, 3), output_size=[6, 5, 6]).shape))
    assert outs[0] == outs[1]


@pytest.mark.parametrize(("make", "shape"), [
    (lambda lib: lib.nn.MaxPool3d(2), (1, 2, 4, 4, 4)),
    (lambda lib: lib.nn.MaxPool3d(3, stride=2, padding=1, ceil_mode=True), (1, 2, 5, 4, 5)),
    (lambda lib: lib.nn.AvgPool3d(2, stride=1, padding=1, count_include_pad=False),
     (1, 2, 3, 3, 3)),
    (lambda lib: lib.nn.AdaptiveAvgPool3d((2, 3, 1)), (2, 2, 5, 4, 3)),
    (lambda lib: lib.nn.AdaptiveMaxPool1d(3), (2, 3, 7)),
    (lambda lib: lib.nn.AdaptiveMaxPool2d((2, None)), (2, 3, 5, 4)),
    (lambda lib: lib.nn.AdaptiveMaxPool3d(2), (1, 2, 3, 5, 4)),
    (lambda lib: lib.nn.BatchNorm3d(2).double(), (3, 2, 2, 3, 2)),
    (lambda lib: lib.nn.SyncBatchNorm(2).double(), (3, 2, 4)),
    (lambda lib: lib.nn.SyncBatchNorm(2, momentum=None).double(), (3, 2, 2, 3, 2)),
], ids=["max3d", "max3d_ceil", "avg3d", "adaptive_avg3d", "adaptive_max1d", "adaptive_max2d",
        "adaptive_max3d", "bn3d", "syncbn", "syncbn_cma"])
def test_pool3d_and_norm_modules(torch, make, shape):
    tm, hm = compare_module(torch, make, [(randn(*shape), True)], atol=1e-10)
    assert repr(hm) == repr(tm)
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(hm.state_dict()[k].numpy(), v.numpy(), atol=1e-12)


def test_adaptive_max_pool_indices(torch):
    x = randn(2, 3, 7, 5)
    t_out, t_idx = torch.nn.AdaptiveMaxPool2d((3, 2), return_indices=True)(to_lib(torch, x))
    h_out, h_idx = hookgrad.nn.AdaptiveMaxPool2d((3, 2), return_indices=True)(to_lib(hookgrad, x))
    np.testing.assert_array_equal(h_idx.numpy(), t_idx.numpy())
    np.testing.assert_allclose(h_out.numpy(), t_out.numpy())


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_modules_roundtrip(torch, nd):
    shape = (2, 2) + (4,) * nd
    x = randn(*shape)
    res = []
    for lib in (torch, hookgrad):
        pool = getattr(lib.nn, f"MaxPool{nd}d")(2, return_indices=True)
        unpool = getattr(lib.nn, f"MaxUnpool{nd}d")(2)
        out, idx = pool(to_lib(lib, x))
        out.requires_grad_(True)
        y = unpool(out, idx)
        y.backward(to_lib(lib, np.arange(y.numel(), dtype="float64").reshape(tuple(y.shape))))
        res.append((y.detach().numpy(), out.grad.numpy(), y.grad_fn.name(), repr(unpool)))
    np.testing.assert_allclose(res[1][0], res[0][0])
    np.testing.assert_allclose(res[1][1], res[0][1])
    assert res[1][2:] == res[0][2:]


def test_max_unpool_bad_index(torch):
    msgs = []
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError, match="Found an invalid max index") as e:
            lib.nn.functional.max_unpool2d(lib.ones(1, 1, 2, 2), lib.tensor([[[[0, 1], [2, 99]]]]),
                                           2)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_sync_batchnorm_convert(torch):
    outs = []
    for lib in (torch, hookgrad):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Conv2d(1, 2, 1), lib.nn.BatchNorm2d(2),
                                lib.nn.Sequential(lib.nn.BatchNorm1d(2)))
        bn_weight = net[1].weight
        conv = lib.nn.SyncBatchNorm.convert_sync_batchnorm(net)
        outs.append([type(m).__name__ for m in conv.modules()])
        assert conv[1].weight is bn_weight
        with pytest.raises(ValueError, match="expected at least 2D input"):
            conv[1](lib.ones(3))
    assert outs[0] == outs[1]


def test_baddbmm_method_and_errors(torch):
    a, b, c = randn(2, 3, 4), randn(2, 3, 5), randn(2, 5, 4)
    outs = [lib.tensor(a).baddbmm(lib.tensor(b), lib.tensor(c), beta=0.0).numpy()
            for lib in (torch, hookgrad)]
    np.testing.assert_allclose(outs[1], outs[0], atol=1e-12)
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError):
            lib.baddbmm(lib.tensor(a), lib.tensor(b), lib.tensor(b))


def test_pytorch_module_paths(torch):
    """Tools import layers from PyTorch's files (``nn.modules.pooling.AdaptiveMaxPool2d``...)."""
    paths = {"pooling": ["MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
                         "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "MaxUnpool2d",
                         "_AdaptiveMaxPoolNd", "_MaxUnpoolNd"],
             "conv": ["Conv3d", "ConvTranspose3d"],
             "transformer": ["TransformerDecoderLayer", "TransformerDecoder", "Transformer"],
             "padding": ["ZeroPad2d", "_ConstantPadNd", "_ReflectionPadNd", "CircularPad3d"],
             "upsampling": ["Upsample", "UpsamplingBilinear2d"],
             "pixelshuffle": ["PixelShuffle", "PixelUnshuffle"],
             "distance": ["CosineSimilarity", "PairwiseDistance"],
             "instancenorm": ["InstanceNorm1d", "InstanceNorm3d", "_InstanceNorm"]}
    import importlib

    for mod, names in paths.items():
        for lib in (torch, hookgrad):
            module = importlib.import_module(f"{lib.__name__}.nn.modules.{mod}")
            for name in names:
                assert hasattr(module, name), f"{lib.__name__}.nn.modules.{mod}.{name}"
    assert issubclass(hookgrad.nn.MaxPool3d, hookgrad.nn.modules.pooling._MaxPoolNd)
    assert issubclass(hookgrad.nn.InstanceNorm2d, hookgrad.nn.modules.normalization._NormBase)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.max_pool3d(lib.ones(1, 1, 4, 4, 4), 2, padding=2),
    lambda lib: lib.nn.functional.max_pool3d(lib.ones(1, 1, 2, 2, 2), 3),
    lambda lib: lib.nn.functional.avg_pool3d(lib.ones(1, 1, 2, 2, 2), 3),
    lambda lib: lib.nn.functional.avg_pool3d(lib.ones(1, 1, 2, 2, 2), (2, 2, 3), padding=(1, 0, 1)),
    lambda lib: lib.nn.functional.avg_pool3d(lib.ones(1, 1, 4, 4, 4), 2, padding=2),
    lambda lib: lib.nn.functional.max_pool3d(lib.ones(3, 4), 2),
    lambda lib: lib.nn.functional.conv3d(lib.ones(3, 4, 4), lib.ones(2, 3, 2, 2, 2)),
    lambda lib: lib.nn.functional.adaptive_max_pool2d(lib.ones(3), 2),
])
def test_3d_and_adaptive_errors(torch, call):
    msgs = []
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError) as e:
            call(lib)
        msgs.append(str(e.value))
    assert msgs[1] == msgs[0]


def test_interpolate_many_sizes_and_scales(torch):
    """Source-index arithmetic (float32 floors, ATen's size shortcuts, clamped cubic taps) over
    random sizes and scale factors, every mode."""
    rng = np.random.default_rng(2)
    modes = ["nearest", "nearest-exact", "bilinear", "bicubic", "linear", "trilinear"]
    for trial in range(240):
        n = int(rng.integers(1, 14))
        mode = modes[trial % 6]
        shape = {"linear": (1, 2, n), "trilinear": (1, 1, n, 3, n + 2)}.get(mode, (1, 1, n, n + 1))
        x = rng.standard_normal(shape).astype("float32")
        kw = {} if "nearest" in mode else {"align_corners": trial % 3 == 0}
        if trial % 5 == 0:
            kw["size"] = tuple(int(v) for v in rng.integers(1, 12, len(shape) - 2))
        else:
            kw["scale_factor"] = float(np.round(rng.uniform(0.3, 4), 3))
        want = torch.nn.functional.interpolate(torch.tensor(x), mode=mode, **kw).numpy()
        got = hookgrad.nn.functional.interpolate(hookgrad.tensor(x), mode=mode, **kw).numpy()
        assert got.shape == want.shape, (mode, shape, kw)
        np.testing.assert_allclose(got, want, atol=1e-5, err_msg=f"{mode} {shape} {kw}")
