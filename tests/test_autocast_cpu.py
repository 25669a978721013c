"""CPU autocast against PyTorch: the dtype every op returns inside ``autocast("cpu")`` (lower
precision, float32 and promote policies), the state functions, nesting, ``enabled=False``, the
cast cache, custom_fwd/custom_bwd, gradients back to float32 parameters, and training steps
of a small MLP and a transformer block (losses within bfloat16 tolerance, every intermediate
dtype equal)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import hookgrad

pytestmark = pytest.mark.oracle


def _ops(L):
    F = L.nn.functional
    L.manual_seed(0)  # (LSTMCell's initial weights)
    g = L.Generator().manual_seed(0)
    x, w, b = L.randn(4, 8, generator=g), L.randn(6, 8, generator=g), L.randn(6, generator=g)
    img, k = L.randn(2, 3, 8, 8, generator=g), L.randn(4, 3, 3, 3, generator=g)
    t = L.tensor([1, 0, 5, 2])
    h = x.to(L.bfloat16)  # an activation already in bfloat16
    y = L.rand(4, 6, generator=g)
    q = x.reshape(1, 1, 4, 8)
    return {
        "mm": lambda: x @ w.t(), "linear": lambda: F.linear(x, w, b),
        "linear_3d": lambda: F.linear(x.reshape(2, 2, 8), w, b),
        "linear_strided": lambda: F.linear(x.reshape(2, 8, 2).transpose(1, 2), w, b),
        "bmm": lambda: L.bmm(x.reshape(2, 2, 8), x.reshape(2, 8, 2)),
        "matmul_mixed": lambda: h @ w.t(), "addmm": lambda: L.addmm(b, x, w.t()),
        "baddbmm": lambda: L.baddbmm(L.ones(2, 2, 2), x.reshape(2, 2, 8), x.reshape(2, 8, 2)),
        "conv1d": lambda: F.conv1d(img[:, :, 0], k[:, :, 0]), "conv2d": lambda: F.conv2d(img, k),
        "conv_transpose2d": lambda: F.conv_transpose2d(img, k.transpose(0, 1)),
        "prelu": lambda: F.prelu(x, L.tensor([0.25])),
        "sdpa": lambda: F.scaled_dot_product_attention(q, q, q),
        "einsum": lambda: L.einsum("ij,kj->ik", x, w), "lstm_cell": lambda: L.nn.LSTMCell(8, 4)(x)[0],
        "relu": lambda: F.relu(x), "softmax": lambda: F.softmax(x, -1),
        "layer_norm": lambda: F.layer_norm(x, (8,)), "group_norm": lambda: F.group_norm(img, 3),
        "mse": lambda: F.mse_loss(x @ w.t(), y), "cross_entropy": lambda: F.cross_entropy(x @ w.t(), t),
        "nll": lambda: F.nll_loss(F.log_softmax(x @ w.t(), -1), t),
        "bce_logits": lambda: F.binary_cross_entropy_with_logits(x @ w.t(), y),
        "kl_div": lambda: F.kl_div(x @ w.t(), y, reduction="batchmean"),
        "l1": lambda: F.l1_loss(x @ w.t(), y), "huber": lambda: F.huber_loss(x @ w.t(), y),
        "smooth_l1": lambda: F.smooth_l1_loss(x @ w.t(), y), "prod": lambda: L.prod(x @ w.t()),
        "cat_mixed": lambda: L.cat([x @ w.t(), L.ones(4, 6)]),
        "stack_mixed": lambda: L.stack([x @ w.t(), L.ones(4, 6)]),
        "cat_low": lambda: L.cat([x @ w.t(), h @ w.t()]),
        "sum_low": lambda: (x @ w.t()).sum(), "exp_low": lambda: (x @ w.t()).exp(),
        "add_low_f32": lambda: (x @ w.t()) + b, "rfft": lambda: L.fft.rfft(x @ w.t()).abs(),
        "cdist": lambda: L.cdist(x, x), "float64_mm": lambda: x.double() @ w.double().t(),
        "max_pool3d": lambda: F.max_pool3d(img.unsqueeze(0), 2),
        "interpolate": lambda: F.interpolate(img, scale_factor=2, mode="bilinear"),
        "embedding": lambda: F.embedding(t, w), "gelu_low": lambda: F.gelu(x @ w.t()),
        "vector_norm": lambda: L.linalg.vector_norm(x @ w.t()),
    }


def _dtypes_and_values(L, dtype):
    out = {}
    with L.autocast("cpu", dtype=dtype):
        for name, fn in _ops(L).items():
            r = fn()
            out[name] = (str(r.dtype), r.float().reshape(-1)[:6].tolist())
    return out


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_every_op_returns_pytorchs_dtype_under_cpu_autocast(torch, dtype):
    ours = _dtypes_and_values(hookgrad, getattr(hookgrad, dtype))
    theirs = _dtypes_and_values(torch, getattr(torch, dtype))
    assert {k: v[0] for k, v in ours.items()} == {k: v[0] for k, v in theirs.items()}
    for name in ours:
        tol = 2 ** -7 if dtype == "bfloat16" else 2 ** -10
        np.testing.assert_allclose(ours[name][1], theirs[name][1], rtol=4 * tol, atol=4 * tol * 8,
                                   err_msg=name)


def test_state_functions_nesting_and_disabled_regions(torch):
    def scenario(L):
        x = L.ones(2, 3)
        seen = [L.is_autocast_enabled("cpu"), str(L.get_autocast_dtype("cpu"))]
        with L.autocast("cpu"):
            seen += [L.is_autocast_enabled("cpu"), str(L.get_autocast_dtype("cpu")),
                     str((x @ x.t()).dtype)]
            with L.autocast("cpu", enabled=False):
                seen += [L.is_autocast_enabled("cpu"), str((x @ x.t()).dtype)]
            with L.amp.autocast("cpu", dtype=L.float16):
                seen += [str(L.get_autocast_dtype("cpu")), str((x @ x.t()).dtype)]
            seen += [str(L.get_autocast_dtype("cpu")), str((x @ x.t()).dtype)]
        seen += [L.is_autocast_enabled("cpu"), str((x @ x.t()).dtype)]

        @L.autocast("cpu")
        def decorated(a):
            return a @ a.t()
        seen.append(str(decorated(x).dtype))
        return seen
    assert scenario(hookgrad) == scenario(torch)


def test_unsupported_dtype_warns_and_disables(torch):
    def scenario(L):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with L.autocast("cpu", dtype=L.float32):
                on = L.is_autocast_enabled("cpu")
        return on, [str(w.message) for w in caught]
    assert scenario(hookgrad) == scenario(torch)


def test_cache_reuses_the_cast_of_a_float32_weight_within_a_region(torch):
    def scenario(L):
        w = L.nn.Parameter(L.randn(3, 3))
        x = L.ones(2, 3)
        out = []
        for cache in (True, False):
            with L.autocast("cpu", cache_enabled=cache):
                a, b = x @ w, x @ w
                out.append(a.grad_fn.next_functions[1][0] is b.grad_fn.next_functions[1][0])
                out.append(L.is_autocast_cache_enabled())
        out.append(L.is_autocast_cache_enabled())
        return out
    assert scenario(hookgrad) == scenario(torch)


def test_gradients_flow_back_to_float32_parameters(torch):
    def scenario(L):
        g = L.Generator().manual_seed(1)
        w = L.nn.Parameter(L.randn(5, 4, generator=g))
        x = L.randn(3, 4, generator=g, requires_grad=True)
        with L.autocast("cpu"):
            y = L.nn.functional.linear(x, w)
            loss = L.nn.functional.mse_loss(y, L.zeros(3, 5))
        loss.backward()
        names = []
        fn = loss.grad_fn
        while fn is not None:
            names.append(fn.name())
            fn = next((f for f, _ in fn.next_functions if f is not None), None)
        return (str(y.dtype), str(loss.dtype), str(w.grad.dtype), str(x.grad.dtype), names,
                w.grad.tolist(), x.grad.tolist())
    ours, theirs = scenario(hookgrad), scenario(torch)
    assert ours[:4] == theirs[:4] == ("torch.bfloat16", "torch.float32", "torch.float32",
                                      "torch.float32")
    assert ours[4] == theirs[4]
    np.testing.assert_allclose(ours[5], theirs[5], rtol=2 ** -6, atol=1e-2)
    np.testing.assert_allclose(ours[6], theirs[6], rtol=2 ** -6, atol=1e-2)


def test_custom_fwd_casts_inputs_and_custom_bwd_runs_in_the_same_state(torch):
    def scenario(L):
        seen = []

        class Scale(L.autograd.Function):
            @staticmethod
            @L.amp.custom_fwd(device_type="cpu", cast_inputs=L.float32)
            def forward(ctx, a):
                seen.append((str(a.dtype), L.is_autocast_enabled("cpu")))
                return a * 2

            @staticmethod
            @L.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                seen.append((str(g.dtype), L.is_autocast_enabled("cpu")))
                return g * 2

        class Plain(L.autograd.Function):
            @staticmethod
            @L.amp.custom_fwd(device_type="cpu")
            def forward(ctx, a):
                seen.append((str(a.dtype), L.is_autocast_enabled("cpu")))
                return a @ a.t()

            @staticmethod
            @L.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                seen.append((str(g.dtype), L.is_autocast_enabled("cpu")))
                return g.sum(0, keepdim=True).t().expand(2, 2).clone()

        x = L.ones(2, 2, dtype=L.bfloat16, requires_grad=True)
        with L.autocast("cpu"):
            y = Scale.apply(x)
            z = Plain.apply(L.ones(2, 2, requires_grad=True))
        y.sum().backward()
        z.sum().backward()
        return seen, str(y.dtype), str(z.dtype), str(x.grad.dtype)
    assert scenario(hookgrad) == scenario(torch)


def _mlp_step(L, params):
    m = L.nn.Sequential(L.nn.Linear(8, 16), L.nn.GELU(), L.nn.Linear(16, 4))
    m.load_state_dict({k: L.tensor(v) for k, v in params.items()})
    opt = L.optim.AdamW(m.parameters(), lr=1e-2)
    x = L.tensor(np.linspace(-1, 1, 48, dtype=np.float32).reshape(6, 8).tolist())
    target = L.tensor([0, 3, 1, 2, 3, 0])
    dtypes, losses = [], []
    hooks = [mod.register_forward_hook(lambda mod, i, o: dtypes.append(str(o.dtype)))
             for mod in m]
    for _ in range(3):
        opt.zero_grad()
        with L.autocast("cpu", dtype=L.bfloat16):
            logits = m(x)
            loss = L.nn.functional.cross_entropy(logits, target)
        loss.backward()
        dtypes += [str(loss.dtype)] + [str(p.grad.dtype) for p in m.parameters()]
        opt.step()
        losses.append(loss.item())
    for h in hooks:
        h.remove()
    return dtypes, losses, [p.detach().tolist() for p in m.parameters()]


def test_mlp_training_steps_match_pytorch(torch):
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    params = {k: v.tolist() for k, v in ref.state_dict().items()}
    ours, theirs = _mlp_step(hookgrad, params), _mlp_step(torch, params)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=2 ** -6)
    for a, b in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(a, b, rtol=2 ** -5, atol=2e-3)


def _block_step(L, params):
    block = L.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0,
                                         batch_first=True)
    block.load_state_dict({k: L.tensor(v) for k, v in params.items()})
    opt = L.optim.SGD(block.parameters(), lr=0.05)
    x = L.tensor(np.sin(np.arange(2 * 5 * 16, dtype=np.float32)).reshape(2, 5, 16).tolist())
    dtypes, losses = [], []
    names = ["self_attn", "linear1", "linear2", "norm1", "norm2"]
    hooks = [getattr(block, n).register_forward_hook(
        lambda mod, i, o, n=n: dtypes.append((n, str((o[0] if isinstance(o, tuple) else o).dtype))))
        for n in names]
    for _ in range(2):
        opt.zero_grad()
        with L.autocast("cpu"):
            y = block(x)
            loss = L.nn.functional.mse_loss(y, L.zeros_like(x))
        loss.backward()
        dtypes += [str(y.dtype), str(loss.dtype)] + [str(p.grad.dtype) for p in
                                                     block.parameters()]
        opt.step()
        losses.append(loss.item())
    for h in hooks:
        h.remove()
    return dtypes, losses, [p.detach().tolist() for p in block.parameters()]


def test_transformer_block_training_steps_match_pytorch(torch):
    torch.manual_seed(0)
    ref = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0,
                                           batch_first=True)
    params = {k: v.tolist() for k, v in ref.state_dict().items()}
    ours, theirs = _block_step(hookgrad, params), _block_step(torch, params)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=2 ** -6)
    for a, b in zip(ours[2], theirs[2]):
        np.testing.assert_allclose(a, b, rtol=2 ** -5, atol=5e-3)
