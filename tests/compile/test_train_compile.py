"""``hookgrad train --compile``: the compiled training run gives the eager run's numbers."""

from __future__ import annotations

from hookgrad.cli.main import main
from hookgrad.cli.train import TrainConfig, train


def test_compiled_training_matches_eager():
    runs = [train(TrainConfig(model="mlp", epochs=2, compile=flag)) for flag in (False, True)]
    plain, compiled = ([(e["loss"], e["train_acc"], e["test_acc"]) for e in r.epochs]
                       for r in runs)
    assert plain == compiled


def test_cli_accepts_compile_flag(capsys):
    assert main(["train", "--model", "mlp", "--epochs", "1", "--quiet", "--compile"]) == 0
    out = capsys.readouterr().out
    assert "final test accuracy" in out
    line = next(x for x in out.splitlines() if x.startswith("compiled training step:"))
    assert " ms vs " in line and "x); first compiled call" in line


def test_compile_timing_leaves_the_trained_model_unchanged():
    result = train(TrainConfig(model="mlp", epochs=1, compile=True))
    timing = result.compile_timing
    assert timing["eager_ms"] > 0 and timing["compiled_ms"] > 0
    assert timing["speedup"] == timing["eager_ms"] / timing["compiled_ms"]
    assert all(p.grad is None for p in result.model.parameters())
