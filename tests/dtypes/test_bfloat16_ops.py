"""Every listed torch function on bfloat16 inputs against PyTorch: the result dtype (or the
exception PyTorch raises for a missing bfloat16 kernel), values within bfloat16 rounding, and
for the nn functions the gradient's dtype and values."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle

UNARY = """abs acos acosh asin asinh atan atanh ceil cos cosh deg2rad digamma erf erfc erfinv exp exp2 expm1 floor frac lgamma log log10 log1p log2 logit nan_to_num neg rad2deg reciprocal round rsqrt sigmoid sign sin sinc sinh sqrt square tan tanh trunc relu isnan isinf isfinite signbit argmax argmin max min amax amin sum mean std var norm logsumexp cumsum cumprod cummax sort argsort flip t clone softmax log_softmax median nansum nanmean count_nonzero diff i0 special.entr special.erfcx special.ndtr special.ndtri special.log_ndtr special.expit nn.functional.silu nn.functional.mish nn.functional.elu nn.functional.selu nn.functional.celu nn.functional.softplus nn.functional.hardswish nn.functional.hardsigmoid nn.functional.hardtanh nn.functional.leaky_relu nn.functional.logsigmoid nn.functional.tanhshrink nn.functional.softsign nn.functional.relu6 nn.functional.gelu nn.functional.normalize nn.functional.dropout aminmax unique topk kthvalue trace tril triu diag""".split()
BINARY = """add sub mul div true_divide floor_divide remainder fmod pow atan2 hypot maximum minimum fmax fmin eq ne lt le gt ge logaddexp logaddexp2 copysign nextafter xlogy ldexp dist cross dot inner outer matmul mm lerp where_ heaviside float_power isclose nn.functional.mse_loss nn.functional.l1_loss nn.functional.smooth_l1_loss nn.functional.binary_cross_entropy_with_logits nn.functional.cosine_similarity nn.functional.pairwise_distance nn.functional.kl_div cat stack""".split()


def get(L, name):
    o = L
    for p in name.split("."): o = getattr(o, p)
    return o
def call(L, name, a, b):
    if name == "where_": return L.where(a > b, a, b)
    if name in ("lerp",): return L.lerp(a, b, 0.3)
    if name in ("topk",): return a.topk(2)[0]
    if name in ("kthvalue",): return a.kthvalue(2)[0]
    if name in ("cummax",): return a.cummax(0)[0]
    if name in ("aminmax",): return L.aminmax(a)[0]
    if name in ("cat", "stack"): return get(L, name)([a, b])
    if name in ("dot", "inner", "outer", "cross", "mm", "matmul", "trace", "t", "diag", "tril", "triu"):
        if name == "cross": return L.linalg.cross(a[:3], b[:3])
        if name in ("mm", "matmul"): return get(L, name)(a.reshape(2, 4), b.reshape(4, 2))
        if name in ("trace", "t", "diag", "tril", "triu"): return get(L, name)(a.reshape(2, 4) if name != "trace" and name != "diag" else a[:4].reshape(2, 2))
        return get(L, name)(a, b)
    if name == "ldexp": return L.ldexp(a, L.tensor([1, 2, 3, 0, 1, 2, 3, -1]))
    if name in ("cumsum", "cumprod", "softmax", "log_softmax", "sort", "argsort", "flip", "logsumexp", "diff"):
        f = get(L, name); return f(a, 0) if name != "flip" else f(a, (0,)) if True else None
    if name == "nn.functional.dropout": return get(L, name)(a, 0.0)
    if name == "unique": return L.unique(a)
    if name == "sort": return a.sort()[0]
    f = get(L, name)
    if b is None: return f(a)
    return f(a, b)

def _elementwise(L, name):
    a = L.tensor([0.3, -1.2, 2.5, 0.05, -0.7, 1.9, 0.6, -2.2]).bfloat16()
    b = L.tensor([1.1, 0.4, -0.9, 2.2, 0.35, -1.5, 0.6, 0.8]).bfloat16()
    if name == "acosh":
        a = a.abs() + 1
    if name in ("erfinv", "atanh", "acos", "asin", "special.ndtri"):
        a = a / 3 + 0.1
    if name == "logit":
        a = a.sigmoid()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = call(L, name, a, b if name in BINARY else None)
    except Exception as e:  # noqa: BLE001 - the type and text are compared
        return type(e).__name__, str(e), None
    if isinstance(r, tuple):
        r = r[0]
    vals = r.float().tolist() if r.dtype.is_floating_point else r.tolist()
    return str(r.dtype), "", np.array(vals, dtype=float)


@pytest.mark.parametrize("name", UNARY + BINARY)
def test_function_on_bfloat16(torch, name):
    ours, theirs = _elementwise(hookgrad, name), _elementwise(torch, name)
    assert ours[:2] == theirs[:2]
    if ours[2] is not None:
        np.testing.assert_allclose(ours[2], theirs[2], rtol=2 ** -7, atol=1e-3)


def _nn_cases(L):
    F = L.nn.functional
    g = L.Generator().manual_seed(0)
    img = L.randn(2, 4, 8, 8, generator=g).bfloat16().requires_grad_()
    seq = L.randn(2, 4, 10, generator=g).bfloat16().requires_grad_()
    k = L.randn(6, 4, 3, 3, generator=g).bfloat16()
    cases = {
        "conv2d": lambda: F.conv2d(img, k, padding=1), "conv1d": lambda: F.conv1d(seq, k[:, :, 0]), "convT": lambda: F.conv_transpose2d(img, k.transpose(0, 1)),
        "maxpool": lambda: F.max_pool2d(img, 2), "avgpool": lambda: F.avg_pool2d(img, 2), "adapt": lambda: F.adaptive_avg_pool2d(img, 3), "adaptmax": lambda: F.adaptive_max_pool2d(img, 3),
        "bn": lambda: F.batch_norm(img, None, None, training=True), "gn": lambda: F.group_norm(img, 2), "in": lambda: F.instance_norm(img), "ln": lambda: F.layer_norm(img, (8, 8)),
        "rms": lambda: F.rms_norm(img, (8,)), "interp_n": lambda: F.interpolate(img, scale_factor=2), "interp_bl": lambda: F.interpolate(img, scale_factor=2, mode="bilinear"),
        "pad_refl": lambda: F.pad(img, (1, 1, 1, 1), mode="reflect"), "pad_const": lambda: F.pad(img, (1, 1)), "pixshuf": lambda: F.pixel_shuffle(img, 2),
        "unfold": lambda: F.unfold(img, 2), "embbag": lambda: F.embedding_bag(L.tensor([0, 2, 1, 3]), seq[0].detach(), L.tensor([0, 2])),
        "glu": lambda: F.glu(seq, 1), "softmin": lambda: F.softmin(seq, 2), "lstm": lambda: L.nn.LSTM(10, 5, batch_first=True).bfloat16()(seq)[0],
        "gru": lambda: L.nn.GRU(10, 5).bfloat16()(seq)[0], "mha": lambda: L.nn.MultiheadAttention(10, 2, batch_first=True).bfloat16()(seq, seq, seq)[0],
        "sdpa": lambda: F.scaled_dot_product_attention(seq, seq, seq, is_causal=True), "grid": lambda: F.grid_sample(img, L.zeros(2, 3, 3, 2).bfloat16(), align_corners=False),
        "ce": lambda: F.cross_entropy(seq, L.zeros(2, 10, dtype=L.long)), "nll": lambda: F.nll_loss(seq.log_softmax(1), L.zeros(2, 10, dtype=L.long)),
        "bce": lambda: F.binary_cross_entropy(seq.sigmoid(), seq.detach().sigmoid()), "huber": lambda: F.huber_loss(seq, seq.detach() * 0),
        "cos_emb": lambda: F.cosine_embedding_loss(seq[0], seq[1], L.ones(4)), "triplet": lambda: F.triplet_margin_loss(seq[0], seq[1], seq[0] * 2),
        "upsample_nearest3d": lambda: F.interpolate(img.unsqueeze(2), scale_factor=2), "fold": lambda: F.fold(F.unfold(img, 2), (8, 8), 2),
    }
    return img, seq, cases


NN = list(_nn_cases(hookgrad)[2])


@pytest.mark.parametrize("name", NN)
def test_nn_function_on_bfloat16_with_gradient(torch, name):
    def scenario(L):
        L.manual_seed(0)  # (module weights of the recurrent and attention cases)
        img, seq, cases = _nn_cases(L)
        r = cases[name]()
        grad = None
        if r.requires_grad:
            r.float().sum().backward()
            grad = img.grad if img.grad is not None else seq.grad
        return (str(r.dtype), None if grad is None else str(grad.dtype),
                np.array(r.float().tolist()).ravel(),
                None if grad is None else np.array(grad.float().tolist()).ravel())
    ours, theirs = scenario(hookgrad), scenario(torch)
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=2 ** -6, atol=2e-2)
    if ours[3] is not None:
        # a gradient summing products cancels here and there: a rare element (measured: 1 of
        # 512, rms_norm) lands a few bfloat16 steps of the sum apart
        close = np.isclose(ours[3], theirs[3], rtol=2 ** -5, atol=5e-2)
        assert close.mean() > 0.99, np.flatnonzero(~close)
