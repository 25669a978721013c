"""The training job behind ``hookgrad train``: a library function first, the CLI second.

`train(TrainConfig(...))` trains an MLP or a small CNN with a `TrainingMonitor` watching every
layer through hooks, evaluates on a held-out split each epoch, checkpoints atomically and
returns the metrics; `hookgrad.cli.main` only parses arguments and prints.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

import hookgrad
from hookgrad import nn
from hookgrad.cli import ddp
from hookgrad.cli.compile_timing import compile_speedup
from hookgrad.cli.data import Dataset, UserError, load
from hookgrad.cli.resume import resume
from hookgrad.hooktools import TrainingMonitor

DEFAULT_LR = {"adam": 3e-3, "sgd": 0.05}


@dataclass
class TrainConfig:
    """Options of ``hookgrad train`` (see ``hookgrad train --help``)."""

    model: str = "cnn"
    epochs: int = 12
    batch_size: int = 32
    lr: float | None = None
    optimizer: str = "adam"
    seed: int = 0
    data: str | None = None
    checkpoint: str | None = None
    resume: str | None = None
    report: str | None = None
    ddp: bool = False  # data-parallel over MPI ranks (hookgrad/cli/ddp.py)
    comm_hook: str = "allreduce"
    compile: bool = False  # run the model through hookgrad.compile

    def learning_rate(self) -> float:
        return self.lr if self.lr is not None else DEFAULT_LR[self.optimizer]


@dataclass
class TrainResult:
    config: dict
    data: str
    epochs: list[dict] = field(default_factory=list)
    layers: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    test_accuracy: float = float("nan")
    compile_timing: dict | None = None  # --compile: step times eager vs compiled


def build_model(kind: str, sample_shape: tuple, num_classes: int) -> nn.Module:
    """An MLP on flattened inputs, or a two-block CNN for images (H, W) / (C, H, W)."""
    features = int(np.prod(sample_shape))
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(features, 128), nn.ReLU(),
                             nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, num_classes))
    if len(sample_shape) not in (2, 3):
        raise UserError(f"--model cnn needs image samples (H, W) or (C, H, W); got "
                        f"{tuple(sample_shape)} (use --model mlp)")
    c, h, w = (1, *sample_shape) if len(sample_shape) == 2 else sample_shape
    if h < 4 or w < 4:
        raise UserError(f"--model cnn needs images of at least 4x4, got {h}x{w}")
    flat = 32 * (h // 2 // 2) * (w // 2 // 2)
    return nn.Sequential(
        nn.Conv2d(c, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(flat, num_classes),
    )


def _images(x: np.ndarray, kind: str) -> np.ndarray:
    return x[:, None] if kind == "cnn" and x.ndim == 3 else x


def _batches(n: int, batch_size: int, rng: np.random.Generator) -> list[np.ndarray]:
    order = rng.permutation(n)
    return [order[i:i + batch_size] for i in range(0, n, batch_size)]


def evaluate(model: nn.Module, x: np.ndarray, y: np.ndarray, batch_size: int = 512) -> float:
    """Accuracy of `model` on arrays `x`, `y` (eval mode, no grad)."""
    model.eval()
    correct = 0
    with hookgrad.no_grad():
        for i in range(0, len(y), batch_size):
            logits = model(hookgrad.tensor(x[i:i + batch_size]))
            correct += int((logits.argmax(1).numpy() == y[i:i + batch_size]).sum())
    model.train()
    return correct / max(1, len(y))


def _optimizer(cfg: TrainConfig, model: nn.Module) -> Any:
    if cfg.optimizer == "adam":
        return hookgrad.optim.Adam(model.parameters(), lr=cfg.learning_rate())
    return hookgrad.optim.SGD(model.parameters(), lr=cfg.learning_rate(), momentum=0.9)


def _check_checkpoint_target(path: str) -> None:
    """A user error, before any training, for a checkpoint path that cannot be written (the
    zip writer would refuse it after an epoch, with a RuntimeError)."""
    target = os.path.realpath(path)
    parent = os.path.dirname(target) or "."
    problem = ("Is a directory" if os.path.isdir(target) else
               "No such file or directory" if not os.path.isdir(parent) else None)
    if problem is not None:
        raise UserError(f"cannot write checkpoint {path}: {problem}")


def _save_checkpoint(cfg: TrainConfig, model: nn.Module, opt: Any, epoch: int,
                     history: list) -> None:
    _check_checkpoint_target(cfg.checkpoint)
    try:
        hookgrad.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                       "epoch": epoch, "history": history, "config": asdict(cfg)}, cfg.checkpoint)
    except OSError as e:
        raise UserError(f"cannot write checkpoint {cfg.checkpoint}: {e.strerror or e}") from None


def train(cfg: TrainConfig, progress: Callable[..., Any] | None = None) -> TrainResult:
    """Train as `cfg` says; `progress(iterable, desc)` wraps each epoch's batches (e.g. tqdm)."""
    if cfg.epochs < 1 or cfg.batch_size < 1:
        raise UserError("--epochs and --batch-size must be positive")
    if not (cfg.learning_rate() > 0):
        raise UserError("--lr must be a positive number")
    if not 0 <= cfg.seed < 2**64:
        raise UserError(f"--seed must be an integer in 0..2**64-1, got {cfg.seed}")
    if cfg.checkpoint:
        _check_checkpoint_target(cfg.checkpoint)
    hookgrad.manual_seed(cfg.seed)
    data: Dataset = load(cfg.data, cfg.seed)
    x_train, x_test = _images(data.x_train, cfg.model), _images(data.x_test, cfg.model)
    model = build_model(cfg.model, x_train.shape[1:], data.num_classes)
    opt = _optimizer(cfg, model)
    loss_fn = nn.CrossEntropyLoss()
    start, history = resume(cfg.resume, cfg, model, opt) if cfg.resume else (0, [])
    net = ddp.wrap(cfg, model)  # the model itself unless --ddp
    result = TrainResult(config=asdict(cfg), data=data.source, epochs=list(history))
    # Overflow is reported as a non-finite loss (UserError), not as NumPy RuntimeWarnings.
    quiet_fp = np.errstate(over="ignore", invalid="ignore", divide="ignore")
    with quiet_fp, TrainingMonitor(model) as monitor:  # the monitor's hooks go on exit
        for epoch in range(start, cfg.epochs):
            rng = np.random.default_rng((cfg.seed, epoch))  # resuming replays the same batches
            step_model = hookgrad.compile(net) if cfg.compile else net
            result.epochs.append(_epoch(epoch, step_model, opt, loss_fn, monitor, x_train,
                                        data.y_train, x_test, data.y_test, cfg, rng, progress))
            _collect_layers(result, monitor)
            if cfg.checkpoint and ddp.is_main():
                _save_checkpoint(cfg, model, opt, epoch + 1, result.epochs)
    result.test_accuracy = result.epochs[-1]["test_acc"] if result.epochs else float("nan")
    if cfg.compile and not cfg.ddp:
        batch = slice(0, cfg.batch_size)
        result.compile_timing = compile_speedup(model, loss_fn, hookgrad.tensor(x_train[batch]),
                                                hookgrad.tensor(data.y_train[batch]))
    result.model = model  # type: ignore[attr-defined]
    result.sample = hookgrad.tensor(x_test[:8])  # type: ignore[attr-defined]
    return result


def _epoch(epoch: int, model: nn.Module, opt: Any, loss_fn: Any, monitor: TrainingMonitor,
           x: np.ndarray, y: np.ndarray, x_test: np.ndarray, y_test: np.ndarray,
           cfg: TrainConfig, rng: np.random.Generator, progress: Any) -> dict:
    t0 = time.perf_counter()
    batches = _batches(len(y), cfg.batch_size, rng)
    if progress is not None:
        batches = progress(batches, f"epoch {epoch + 1}/{cfg.epochs}")
    total, correct, seen = 0.0, 0, 0
    monitor.history.clear()
    for idx in batches:
        idx = ddp.shard(idx)  # this rank's slice of the global batch under --ddp
        xb, yb = hookgrad.tensor(x[idx]), hookgrad.tensor(y[idx])
        logits = model(xb)
        loss = loss_fn(logits, yb)
        value = loss.item()
        everywhere = ddp.loss_everywhere(value)  # NaN on any rank stops every rank here
        if not math.isfinite(everywhere):
            value = value if not math.isfinite(value) else everywhere
            where = monitor.nonfinite
            hint = f" (first non-finite value: module {where['module']!r}, {where['phase']})" \
                if where else ""
            raise UserError(f"loss became {value} in epoch {epoch + 1}{hint}; lower --lr "
                            f"(now {cfg.learning_rate()}) or check the data")
        opt.zero_grad()
        loss.backward()
        opt.step()
        monitor.end_step()
        total += value * len(idx)
        correct += int((logits.argmax(1).numpy() == y[idx]).sum())
        seen += len(idx)
    total, correct, seen = ddp.sum_over_ranks(total, correct, seen)
    return {"epoch": epoch + 1, "loss": total / seen, "train_acc": correct / seen,
            "test_acc": evaluate(model, x_test, y_test), "seconds": time.perf_counter() - t0}


def _collect_layers(result: TrainResult, monitor: TrainingMonitor) -> None:
    """Average each layer's per-step statistics over the epoch just finished."""
    kinds = dict(monitor.model.named_modules())
    for layer in monitor.layers():
        row = result.layers.setdefault(f"{layer} {type(kinds[layer]).__name__}", {})
        for key in ("grad_norm", "act_mean", "act_std", "dead_frac"):
            values = [v for v in monitor.series(layer, key) if not math.isnan(v)]
            if values:
                row.setdefault(key, []).append(float(np.mean(values)))
