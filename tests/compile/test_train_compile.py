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
    assert "final test accuracy" in capsys.readouterr().out
