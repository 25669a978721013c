"""Real hook-based libraries, unmodified, on PyTorch and on hookgrad with only the import swapped.

Each test runs a library's quick-start (same weights, same data) with ``torch`` and with
hookgrad aliased as ``torch`` and compares what the library reports. The libraries are not test
dependencies (CI time): a test skips when its library is not importable. docs/ecosystem.md gives
the versions that pass and the one-line install (into a separate folder on PYTHONPATH, so that
pip never touches the installed torch or numpy).
"""

from __future__ import annotations

import sys
import types
import warnings
from importlib.machinery import ModuleSpec

import numpy as np
import pytest

from tests.conftest import load_torch
from tests.ecosystem._tools import array, require_tool, run_with, set_weights

pytestmark = pytest.mark.oracle


def _quiet(fn):
    """Libraries warn about CPU-only runs, few workers, ... (same warnings on both)."""

    def wrapped(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)

    return wrapped


def _convnet(torch):
    nn = torch.nn
    m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(18, 3))
    set_weights(torch, m)
    return m


def _data(torch, n=6):
    x = array(torch, (n, 1, 5, 5), seed=1)
    y = torch.tensor(np.random.default_rng(2).integers(0, 3, n))
    return x, y


def _close(got, ref, rtol=1e-4, atol=1e-5):
    for g, r in zip(got, ref, strict=True):
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64),
                                   np.asarray(r, dtype=np.float64), rtol=rtol, atol=atol)


# ------------------------------------------------------------------------------------- opacus
@_quiet
def _opacus(torch, opacus, *_):
    from torch.utils.data import DataLoader, TensorDataset

    x, y = _data(torch, 8)
    gsm = opacus.GradSampleModule(_convnet(torch))
    torch.nn.functional.cross_entropy(gsm(x), y).backward()
    out = [p.grad_sample.numpy() for p in gsm.parameters()]
    for noise in (0.0, 1.1):
        model = _convnet(torch)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        engine = opacus.PrivacyEngine()
        model, opt, loader = engine.make_private(
            module=model, optimizer=opt, data_loader=DataLoader(TensorDataset(x, y), batch_size=4),
            noise_multiplier=noise, max_grad_norm=1.0, poisson_sampling=False)
        for xb, yb in loader:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
        if noise == 0.0:  # noise-free: the clipped, averaged per-sample steps are comparable
            out += [p.detach().numpy() for p in model.parameters()]
    out.append(engine.get_epsilon(1e-5))
    return out


def test_opacus_per_sample_grads_and_private_training():
    require_tool("opacus")
    tools = ("opacus", "opacus.data_loader")
    _close(run_with("hookgrad", tools, _opacus), run_with("torch", tools, _opacus))


# ------------------------------------------------------------------------------------ backpack
@_quiet
def _backpack(torch, backpack, ext, *_):
    x, y = _data(torch)
    model = backpack.extend(_convnet(torch))
    lossf = backpack.extend(torch.nn.CrossEntropyLoss())
    with backpack.backpack(ext.BatchGrad(), ext.DiagGGNExact(), ext.Variance(),
                           ext.SumGradSquared(), ext.BatchL2Grad()):
        lossf(model(x), y).backward()
    out = [getattr(p, a).numpy() for p in model.parameters()
           for a in ("grad", "grad_batch", "diag_ggn_exact", "variance", "sum_grad_squared",
                     "batch_l2")]
    nn = torch.nn
    mlp = backpack.extend(nn.Sequential(nn.Flatten(), nn.Linear(25, 4), nn.Sigmoid(),
                                        nn.Linear(4, 3)))
    set_weights(torch, mlp, seed=5)
    with backpack.backpack(ext.DiagHessian(), ext.KFLR()):
        lossf(mlp(x), y).backward()
    out += [p.diag_h.numpy() for p in mlp.parameters()]
    out += [f.numpy() for p in mlp.parameters() for f in p.kflr]
    return out


def test_backpack_first_and_second_order_extensions():
    require_tool("backpack")
    tools = ("backpack", "backpack.extensions", "einops", "unfoldNd")
    _close(run_with("hookgrad", tools, _backpack), run_with("torch", tools, _backpack))


# -------------------------------------------------------------------------------- torchmetrics
@_quiet
def _torchmetrics(torch, tm, *_):
    x, _ = _data(torch)
    logits = _convnet(torch)(x).detach()
    y = torch.tensor([0, 1, 2, 0, 1, 2])
    metrics = [tm.Accuracy(task="multiclass", num_classes=3), tm.MeanSquaredError(),
               tm.F1Score(task="multiclass", num_classes=3, average="macro"),
               tm.AUROC(task="multiclass", num_classes=3), tm.MeanMetric(), tm.R2Score(),
               tm.PearsonCorrCoef(), tm.ConfusionMatrix(task="multiclass", num_classes=3)]
    rng = np.random.default_rng(4)
    for step in range(3):
        preds = (logits + step).softmax(-1)
        t = torch.tensor(rng.standard_normal(6).astype(np.float32))
        p = t + torch.tensor(rng.standard_normal(6).astype(np.float32)) * 0.3
        for m in metrics:
            if isinstance(m, tm.MeanMetric):
                m.update(p)
            elif isinstance(m, (tm.MeanSquaredError, tm.R2Score, tm.PearsonCorrCoef)):
                m.update(p, t)
            else:
                m.update(preds, y)
    collection = tm.MetricCollection([tm.Accuracy(task="multiclass", num_classes=3),
                                      tm.Precision(task="multiclass", num_classes=3)])
    batch = collection(logits.softmax(-1), y)
    return [m.compute().numpy() for m in metrics] + [v.numpy() for v in batch.values()]


def test_torchmetrics_update_compute():
    require_tool("torchmetrics")
    tools = ("torchmetrics", "lightning_utilities")
    _close(run_with("hookgrad", tools, _torchmetrics), run_with("torch", tools, _torchmetrics))


# ---------------------------------------------------------------------------- pytorch-lightning
@_quiet
def _lightning(torch, pl, tmp):
    from torch.utils.data import DataLoader, TensorDataset

    x, y = array(torch, (32, 4), seed=1), array(torch, (32, 1), seed=2)

    class Regressor(pl.LightningModule):
        def __init__(self):
            super().__init__()
            nn = torch.nn
            self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
            set_weights(torch, self.net)
            self.losses = []

        def training_step(self, batch, i):
            loss = torch.nn.functional.mse_loss(self.net(batch[0]), batch[1])
            self.log("train_loss", loss)
            self.losses.append(float(loss))
            return loss

        def validation_step(self, batch, i):
            self.log("val_loss", torch.nn.functional.mse_loss(self.net(batch[0]), batch[1]))

        def configure_optimizers(self):
            opt = torch.optim.Adam(self.parameters(), lr=0.01)
            return {"optimizer": opt,
                    "lr_scheduler": torch.optim.lr_scheduler.StepLR(opt, 1, 0.5)}

    model = Regressor()
    trainer = pl.Trainer(max_epochs=2, accelerator="cpu", logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, default_root_dir=str(tmp))
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8),
                DataLoader(TensorDataset(x, y), batch_size=16))
    summary = str(pl.utilities.model_summary.ModelSummary(model, max_depth=2))
    metrics = {k: float(v) for k, v in trainer.callback_metrics.items()}
    return (summary, sorted(metrics), model.losses, list(metrics.values()),
            [p.detach().numpy() for p in model.parameters()])


_PL_TOOLS = ("pytorch_lightning", "lightning_fabric", "torchmetrics", "lightning_utilities")


def test_lightning_trainer_fit(tmp_path):
    require_tool("pytorch_lightning")
    import hookgrad

    torch = load_torch()
    # lightning_fabric.wrappers replaces torch.compile at import; undo it for later tests
    compiles = (torch.compile, hookgrad.compile)
    try:
        ref = run_with("torch", _PL_TOOLS, lambda t, pl, *_: _lightning(t, pl, tmp_path / "t"))
        got = run_with("hookgrad", _PL_TOOLS, lambda t, pl, *_: _lightning(t, pl, tmp_path / "h"))
    finally:
        torch.compile, hookgrad.compile = compiles
    assert got[:2] == ref[:2]
    _close([*got[2:4], *got[4]], [*ref[2:4], *ref[4]])


# --------------------------------------------------------------------------------------- zennit
def _torchvision_stand_in() -> dict:
    """zennit imports torchvision's ResNet blocks at load time (only to recognise them);
    torchvision is a compiled PyTorch extension, so both runs get the same stand-in."""
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "torchvision"}
    tv, models, resnet = (types.ModuleType(n) for n in (
        "torchvision", "torchvision.models", "torchvision.models.resnet"))
    tv.__spec__ = ModuleSpec("torchvision", None)
    resnet.Bottleneck = type("Bottleneck", (), {})
    resnet.BasicBlock = type("BasicBlock", (), {})
    tv.models, models.resnet = models, resnet
    sys.modules.update({"torchvision": tv, "torchvision.models": models,
                        "torchvision.models.resnet": resnet})
    return saved


@_quiet
def _zennit(torch, zennit, composites, attribution):
    x, y = _data(torch)
    model = _convnet(torch)
    target = torch.eye(3)[y]
    out = []
    for comp in (composites.EpsilonPlusFlat(), composites.EpsilonGammaBox(low=-3., high=3.),
                 composites.EpsilonAlpha2Beta1()):
        with attribution.Gradient(model=model, composite=comp) as attributor:
            _, relevance = attributor(x, target)
        out.append(relevance.numpy())
    with attribution.IntegratedGradients(model=model, n_iter=5) as attributor:
        out.append(attributor(x, target)[1].numpy())
    return out


def test_zennit_lrp_composites():
    require_tool("zennit")
    saved = _torchvision_stand_in()
    try:
        tools = ("zennit", "zennit.composites", "zennit.attribution")
        ref = run_with("torch", tools, _zennit)
        got = run_with("hookgrad", tools, _zennit)
    finally:
        for k in [k for k in sys.modules if k.split(".")[0] == "torchvision"]:
            del sys.modules[k]
        sys.modules.update(saved)
    _close(got, ref)


# ---------------------------------------------------------------------------------- nngeometry
@_quiet
def _nngeometry(torch, _nngeometry_pkg, metrics, obj):
    from torch.utils.data import DataLoader, TensorDataset

    x, y = _data(torch)
    loader = DataLoader(TensorDataset(x, y), batch_size=3)
    out = []
    for rep in (obj.PMatDiag, obj.PMatDense, obj.PMatKFAC):
        fim = metrics.FIM(model=_convnet(torch), loader=loader, representation=rep,
                          variant="classif_logits")
        out += [float(fim.trace()), float(fim.frobenius_norm())]
    return out


def test_nngeometry_fisher_representations():
    require_tool("nngeometry")
    tools = ("nngeometry", "nngeometry.metrics", "nngeometry.object")
    _close(run_with("hookgrad", tools, _nngeometry), run_with("torch", tools, _nngeometry))


# ---------------------------------------------------------------------------------- accelerate
@_quiet
def _accelerate(torch, accelerate, tmp):
    from torch.utils.data import DataLoader, TensorDataset

    x, y = array(torch, (32, 4), seed=1), array(torch, (32, 1), seed=2)
    nn = torch.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    set_weights(torch, model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    sched = torch.optim.lr_scheduler.LinearLR(opt)
    acc = accelerate.Accelerator(cpu=True, gradient_accumulation_steps=2)
    model, opt, loader, sched = acc.prepare(model, opt, DataLoader(TensorDataset(x, y),
                                                                   batch_size=8), sched)
    losses = []
    for _ in range(2):
        for xb, yb in loader:
            with acc.accumulate(model):
                loss = torch.nn.functional.mse_loss(model(xb), yb)
                acc.backward(loss)
                acc.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                sched.step()
                opt.zero_grad()
            losses.append(float(loss))
    acc.save_state(str(tmp))  # model.safetensors, optimizer.bin, scheduler.bin, random states
    import os

    return (sorted(os.listdir(tmp)), str(acc.device), acc.num_processes, losses,
            [p.detach().numpy() for p in acc.unwrap_model(model).parameters()])


def test_accelerate_training_loop_and_save_state(tmp_path):
    require_tool("accelerate")
    tools = ("accelerate", "safetensors")
    ref = run_with("torch", tools, lambda t, a, *_: _accelerate(t, a, tmp_path / "t"))
    got = run_with("hookgrad", tools, lambda t, a, *_: _accelerate(t, a, tmp_path / "h"))
    assert got[:3] == ref[:3]
    _close([got[3], *got[4]], [ref[3], *ref[4]])


# ------------------------------- small libraries: EMA, optimizers, ODE solvers, sparse maps, ...
def _mlp(torch, seed=0):
    nn = torch.nn
    m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    set_weights(torch, m, seed)
    return m


def _train(torch, net, opt, steps=3, after=None):
    x = array(torch, (16, 4), seed=1)
    for _ in range(steps):
        opt.zero_grad()
        net(x).pow(2).mean().backward()
        opt.step()
        if after is not None:
            after()


def _ema_pytorch(torch, mod):
    net = _mlp(torch)
    ema = mod.EMA(net, beta=0.9, update_after_step=0, update_every=1)
    _train(torch, net, torch.optim.SGD(net.parameters(), lr=0.1), after=ema.update)
    return [p.detach().numpy() for p in ema.ema_model.parameters()]


def _torch_ema(torch, mod):
    net = _mlp(torch)
    ema = mod.ExponentialMovingAverage(net.parameters(), decay=0.9)
    _train(torch, net, torch.optim.SGD(net.parameters(), lr=0.1), after=ema.update)
    with ema.average_parameters():
        return [p.detach().numpy().copy() for p in net.parameters()]


def _lion(torch, mod):
    net = _mlp(torch)
    _train(torch, net, mod.Lion(net.parameters(), lr=1e-2, weight_decay=1e-2))
    return [p.detach().numpy() for p in net.parameters()]


def _schedulefree(torch, mod):
    net = _mlp(torch)
    opt = mod.AdamWScheduleFree(net.parameters(), lr=1e-2, warmup_steps=2)
    opt.train()
    _train(torch, net, opt)
    opt.eval()
    return [p.detach().numpy() for p in net.parameters()]


def _torchdiffeq(torch, mod):
    net = _mlp(torch)

    class Field(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner, self.out = net[0], torch.nn.Linear(8, 4)
            set_weights(torch, self.out, seed=3)

        def forward(self, t, y):
            return 0.3 * self.out(torch.tanh(self.inner(y)))

    f = Field()
    y0 = array(torch, (2, 4), seed=1).requires_grad_()
    t = torch.linspace(0, 1, 3)
    ys = mod.odeint(f, y0, t, method="rk4", options=dict(step_size=0.25))
    ys.sum().backward()
    adaptive = mod.odeint(f, y0, t, rtol=1e-5, atol=1e-6)
    return [ys.detach().numpy(), y0.grad.numpy(), adaptive.detach().numpy()]


def _entmax(torch, mod):
    z = array(torch, (5, 4), seed=1).requires_grad_()
    a, b = mod.sparsemax(z, dim=-1), mod.entmax15(z, dim=-1)
    c = mod.entmax_bisect(z, alpha=1.3, dim=-1)
    (a * torch.arange(4.0)).sum().backward()
    return [a.detach().numpy(), b.detach().numpy(), c.detach().numpy(), z.grad.numpy()]


def _einops(torch, einops, layers):
    t = array(torch, (2, 2, 8, 2), seed=1)
    lin = torch.nn.Linear(32, 3)
    set_weights(torch, lin)
    m = torch.nn.Sequential(layers.Rearrange("b c h w -> b (c h w)"), lin,
                            layers.Reduce("b n -> n", "max"))
    return [einops.rearrange(t, "b c h w -> b h w c").numpy(),
            einops.reduce(t, "b c h w -> b c", "mean").numpy(),
            einops.repeat(t[0, 0], "h w -> h w k", k=3).numpy(), m(t).detach().numpy()]


def _metric_learning(torch, losses, miners, *_):
    emb = _mlp(torch)(array(torch, (16, 4), seed=1))
    labels = torch.tensor([0, 1] * 8)
    out = [lf(emb, labels).detach().numpy() for lf in (
        losses.TripletMarginLoss(), losses.ContrastiveLoss(), losses.NTXentLoss(),
        losses.MultiSimilarityLoss())]
    return out + [h.numpy() for h in miners.MultiSimilarityMiner()(emb, labels)]


def _torch_optimizer(torch, optim, *_):
    out = []
    for name in ("AdaBound", "RAdam", "Lamb", "Yogi", "DiffGrad", "AdaBelief", "QHAdam", "SWATS",
                 "Lookahead"):
        net = _mlp(torch)
        if name == "Lookahead":
            opt = optim.Lookahead(torch.optim.SGD(net.parameters(), lr=0.1))
        else:
            opt = getattr(optim, name)(net.parameters(), lr=1e-2)
        _train(torch, net, opt)
        out += [p.detach().numpy() for p in net.parameters()]
    return out


def _x_transformers(torch, xt, *_):
    model = xt.TransformerWrapper(num_tokens=20, max_seq_len=16,
                                  attn_layers=xt.Decoder(dim=16, depth=2, heads=2))
    for i, p in enumerate(model.parameters()):
        with torch.no_grad():
            p.copy_(array(torch, tuple(p.shape), seed=i) * 0.1)
    ids = torch.tensor(np.random.default_rng(0).integers(0, 20, (2, 8)))
    logits = model(ids)
    logits.sum().backward()
    return [logits.detach().numpy()] + [p.grad.numpy() for p in model.parameters()
                                        if p.grad is not None]


def _torchsde(torch, torchsde, *_):
    class Sde(torch.nn.Module):
        noise_type, sde_type = "diagonal", "ito"

        def __init__(self):
            super().__init__()
            self.drift, self.diffusion = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
            set_weights(torch, self)

        def f(self, t, y):
            return torch.tanh(self.drift(y))

        def g(self, t, y):
            # hookgrad's random stream is not PyTorch's, so the Brownian draws differ: the
            # diffusion is scaled to zero to compare the solver machinery, not the noise
            return torch.sigmoid(self.diffusion(y)) * 0.0

    sde = Sde()
    y0 = array(torch, (3, 2), seed=1).requires_grad_()
    bm = torchsde.BrownianInterval(t0=0.0, t1=1.0, size=(3, 2), entropy=0)
    ys = torchsde.sdeint(sde, y0, torch.linspace(0, 1, 4), method="euler", dt=0.1, bm=bm)
    ys[-1].sum().backward()
    return [ys.detach().numpy(), y0.grad.numpy()]


def _msssim(torch, msssim, *_):
    a = array(torch, (2, 3, 32, 32), seed=1).sigmoid().requires_grad_()
    b = (a.detach() + 0.1 * array(torch, (2, 3, 32, 32), seed=2)).clamp(0, 1)
    s = msssim.ssim(a, b, data_range=1.0)
    s.backward()
    return [s.detach().numpy(), msssim.ssim(a, b, data_range=1.0, size_average=False).detach()
            .numpy(), a.grad.numpy()]


_SMALL = {
    "torchsde": (("torchsde", "trampoline", "boltons"), _torchsde),
    "pytorch_msssim": (("pytorch_msssim",), _msssim),
    "torch_optimizer": (("torch_optimizer", "pytorch_ranger"), _torch_optimizer),
    "x_transformers": (("x_transformers", "einops", "einx", "torch_einops_utils"),
                       _x_transformers),
    "ema_pytorch": (("ema_pytorch",), _ema_pytorch),
    "torch_ema": (("torch_ema",), _torch_ema),
    "lion_pytorch": (("lion_pytorch",), _lion),
    "schedulefree": (("schedulefree",), _schedulefree),
    "torchdiffeq": (("torchdiffeq",), _torchdiffeq),
    "entmax": (("entmax",), _entmax),
    "einops": (("einops", "einops.layers.torch"), _einops),
    "pytorch_metric_learning": (("pytorch_metric_learning.losses",
                                 "pytorch_metric_learning.miners"), _metric_learning),
}


@pytest.mark.parametrize("lib", sorted(_SMALL))
def test_small_libraries(lib):
    require_tool(lib)
    tools, scenario = _SMALL[lib]
    tools = (*tools, lib) if lib not in tools else tools
    ref = run_with("torch", tools, _quiet(scenario))
    got = run_with("hookgrad", tools, _quiet(scenario))
    _close(got, ref)


# ------------------------------------------------------------------------------- pytorch-ignite
@_quiet
def _ignite(torch, engine, metrics, *_):
    from torch.utils.data import DataLoader, TensorDataset

    x = array(torch, (24, 4), seed=1)
    y = torch.tensor(np.random.default_rng(2).integers(0, 3, 24))
    model = _mlp(torch)
    model[2] = torch.nn.Linear(8, 3)
    set_weights(torch, model, seed=4)
    loss = torch.nn.CrossEntropyLoss()
    trainer = engine.create_supervised_trainer(
        model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), loss)
    metrics.RunningAverage(output_transform=lambda o: o).attach(trainer, "avg")
    evaluator = engine.create_supervised_evaluator(model, metrics={
        "acc": metrics.Accuracy(), "loss": metrics.Loss(loss),
        "prec": metrics.Precision(average=True)})
    log = []

    @trainer.on(engine.Events.ITERATION_COMPLETED(every=2))
    def _iteration(e):
        log.append((e.state.epoch, e.state.iteration, e.state.output, e.state.metrics["avg"]))

    @trainer.on(engine.Events.EPOCH_COMPLETED)
    def _epoch(e):
        evaluator.run(DataLoader(TensorDataset(x, y), batch_size=12))
        log.append(tuple(float(v) for v in evaluator.state.metrics.values()))

    trainer.run(DataLoader(TensorDataset(x, y), batch_size=6), max_epochs=2)
    return log


def test_ignite_engine_events_and_metrics():
    require_tool("ignite")
    tools = ("ignite", "ignite.engine", "ignite.metrics")
    ref = run_with("torch", tools, lambda t, _i, e, m: _ignite(t, e, m))
    got = run_with("hookgrad", tools, lambda t, _i, e, m: _ignite(t, e, m))
    assert [r[:2] if len(r) == 4 else len(r) for r in got] == \
        [r[:2] if len(r) == 4 else len(r) for r in ref]
    _close([r[2:] if len(r) == 4 else r for r in got], [r[2:] if len(r) == 4 else r for r in ref])
