"""``hookgrad train``: default run, every option, checkpoint/resume and the report directory."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hookgrad
from hookgrad.cli.train import DEFAULT_LR, TrainConfig, train
from tests.cli._run import run_cli, write_npz

MLP1 = ("--model", "mlp", "--epochs", "1", "--quiet")
REPO = Path(hookgrad.__file__).resolve().parent.parent


def test_train_mlp_prints_epochs_and_final_accuracy(capsys):
    run = run_cli(capsys, *MLP1)
    assert run.rc == 0 and run.err == ""
    assert [e[0] for e in run.epochs] == [1]
    assert run.source == "digits (UCI optdigits, 8x8)"
    assert 0.6 < run.accuracy <= 1.0 and run.accuracy == pytest.approx(run.epochs[-1][3], abs=6e-4)


@pytest.mark.skipif(not hasattr(hookgrad.nn, "Conv2d"), reason="hookgrad.nn.Conv2d missing")
def test_train_cnn_one_epoch_learns(capsys):
    run = run_cli(capsys, "--model", "cnn", "--epochs", "1", "--quiet")
    assert run.rc == 0 and run.err == ""
    assert run.accuracy > 0.5


def test_train_epochs_option_runs_that_many(capsys):
    run = run_cli(capsys, "--model", "mlp", "--epochs", "2", "--quiet")
    assert run.rc == 0 and [e[0] for e in run.epochs] == [1, 2]
    assert run.epochs[1][1] < run.epochs[0][1]  # loss goes down


def test_train_batch_size_sets_number_of_steps():
    seen = []

    def progress(batches, desc):
        seen.append((desc, [len(b) for b in batches]))
        return batches

    result = train(TrainConfig(model="mlp", epochs=1, batch_size=100), progress=progress)
    (desc, sizes), = seen
    n_train = 1797 - round(1797 * 0.2)
    assert desc == "epoch 1/1" and sum(sizes) == n_train
    assert sizes == [100] * (n_train // 100) + [n_train % 100]
    assert result.config["batch_size"] == 100


@pytest.mark.parametrize(("optimizer", "lr", "expected_lr", "state_key"),
                         [("adam", None, DEFAULT_LR["adam"], "exp_avg"),
                          ("sgd", None, DEFAULT_LR["sgd"], "momentum_buffer"),
                          ("sgd", "0.01", 0.01, "momentum_buffer"),
                          ("adam", "0.0005", 0.0005, "exp_avg")])
def test_train_optimizer_and_lr_reach_the_optimizer(capsys, tmp_path, optimizer, lr,
                                                    expected_lr, state_key):
    ckpt = str(tmp_path / "c.pt")
    extra = ("--lr", lr) if lr else ()
    run = run_cli(capsys, *MLP1, "--optimizer", optimizer, *extra, "--checkpoint", ckpt)
    assert run.rc == 0
    state = hookgrad.load(ckpt)
    (group,) = state["optimizer"]["param_groups"]
    assert group["lr"] == pytest.approx(expected_lr)
    assert state_key in state["optimizer"]["state"][0]
    if optimizer == "sgd":
        assert group["momentum"] == 0.9


def test_train_seed_makes_runs_reproducible(capsys):
    a = run_cli(capsys, *MLP1, "--seed", "3")
    b = run_cli(capsys, *MLP1, "--seed", "3")
    c = run_cli(capsys, *MLP1, "--seed", "4")
    assert a.epochs[0][1:] == b.epochs[0][1:]
    assert a.epochs[0][1:] != c.epochs[0][1:]


def test_train_data_npz(capsys, tmp_path):
    path = write_npz(tmp_path / "d.npz", n=300)
    run = run_cli(capsys, "--model", "mlp", "--epochs", "2", "--quiet", "--data", path)
    assert run.rc == 0 and run.err == "" and run.source == path
    assert run.accuracy >= 0.75


def test_train_data_csv_last_column_is_label(capsys, tmp_path):
    rng = np.random.default_rng(1)
    y = np.arange(50) % 2
    x = rng.standard_normal((50, 3)) + y[:, None] * 3
    path = tmp_path / "d.csv"
    np.savetxt(path, np.column_stack([x, y]), delimiter=",")
    run = run_cli(capsys, "--model", "mlp", "--epochs", "2", "--quiet", "--data", str(path))
    assert run.rc == 0 and run.accuracy >= 0.8


@pytest.mark.skipif(not hasattr(hookgrad.nn, "Conv2d"), reason="hookgrad.nn.Conv2d missing")
def test_train_data_images_with_cnn(capsys, tmp_path):
    path = write_npz(tmp_path / "img.npz", n=40, shape=(6, 6))
    run = run_cli(capsys, "--model", "cnn", "--epochs", "1", "--quiet", "--data", path)
    assert run.rc == 0 and run.err == ""


def test_train_checkpoint_then_resume_continues_from_saved_epoch(capsys, tmp_path):
    ckpt = str(tmp_path / "c.pt")
    first = run_cli(capsys, *MLP1, "--checkpoint", ckpt)
    assert first.rc == 0 and hookgrad.load(ckpt)["epoch"] == 1
    resumed = run_cli(capsys, "--model", "mlp", "--epochs", "3", "--quiet", "--resume", ckpt)
    assert resumed.rc == 0
    assert [e[0] for e in resumed.epochs] == [1, 2, 3]
    assert resumed.epochs[0] == first.epochs[0]  # epoch 1 comes from the checkpoint's history
    straight = run_cli(capsys, "--model", "mlp", "--epochs", "3", "--quiet")
    assert resumed.epochs == straight.epochs  # resuming replays exactly the uninterrupted run


def test_train_resume_at_or_past_last_epoch_trains_nothing(capsys, tmp_path):
    ckpt = str(tmp_path / "c.pt")
    first = run_cli(capsys, *MLP1, "--checkpoint", ckpt)
    again = run_cli(capsys, *MLP1, "--resume", ckpt)
    assert again.rc == 0 and again.epochs == first.epochs and again.accuracy == first.accuracy


def test_train_checkpoint_is_rewritten_every_epoch(capsys, tmp_path):
    ckpt = str(tmp_path / "c.pt")
    run_cli(capsys, "--model", "mlp", "--epochs", "2", "--quiet", "--checkpoint", ckpt)
    state = hookgrad.load(ckpt)
    assert state["epoch"] == 2 and len(state["history"]) == 2
    assert state["config"]["model"] == "mlp" and state["config"]["optimizer"] == "adam"


def test_train_report_writes_metrics_plots_and_graph(capsys, tmp_path):
    report = tmp_path / "report"
    run = run_cli(capsys, "--model", "mlp", "--epochs", "2", "--quiet", "--report", str(report))
    assert run.rc == 0
    metrics = json.loads((report / "metrics.json").read_text())
    assert set(metrics) == {"config", "data", "test_accuracy", "epochs", "layers",
                            "hook_trace_one_step"}
    assert metrics["config"]["epochs"] == 2 and metrics["config"]["report"] == str(report)
    assert metrics["test_accuracy"] == metrics["epochs"][-1]["test_acc"]
    for row in metrics["epochs"]:
        assert set(row) == {"epoch", "loss", "train_acc", "test_acc", "seconds"}
    assert [r["epoch"] for r in metrics["epochs"]] == [1, 2]
    assert list(metrics["layers"]) == ["0 Flatten", "1 Linear", "2 ReLU", "3 Linear", "4 ReLU",
                                       "5 Linear"]
    assert set(metrics["layers"]["1 Linear"]) == {"grad_norm", "act_mean", "act_std"}
    assert set(metrics["layers"]["2 ReLU"]) == {"act_mean", "act_std", "dead_frac"}
    assert all(len(v) == 2 for stats in metrics["layers"].values() for v in stats.values())
    trace = metrics["hook_trace_one_step"]
    assert [e["index"] for e in trace] == list(range(len(trace)))
    assert {e["kind"] for e in trace} == {"module.forward", "tensor", "post_accumulate"}
    assert {"index", "kind", "owner", "hook", "registered_at"} <= set(trace[0])  # + summaries
    dot = (report / "graph.dot").read_text()
    assert dot.startswith("digraph") and "hooks: post_acc #" in dot and "1.weight [128, 64]" in dot
    assert f"wrote {report / 'metrics.json'}" in run.out
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in run.out
    else:
        for name in ("training.png", "layers.png"):
            assert (report / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (report / "graph.svg").exists() == (shutil.which("dot") is not None)


def test_train_report_without_matplotlib_or_graphviz(capsys, tmp_path, monkeypatch):
    from hookgrad.hooktools import graph

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails
    monkeypatch.setattr(graph.shutil, "which", lambda name: None)
    report = tmp_path / "r"
    run = run_cli(capsys, *MLP1, "--report", str(report))
    assert run.rc == 0
    assert sorted(p.name for p in report.iterdir()) == ["graph.dot", "metrics.json"]
    assert "matplotlib is not installed" in run.out and "install Graphviz" in run.out


def test_train_without_quiet_shows_progress_on_stderr_only(capsys):
    quiet = run_cli(capsys, *MLP1)
    loud = run_cli(capsys, "--model", "mlp", "--epochs", "1")
    assert loud.rc == 0 and loud.err != "" and "error" not in loud.err
    assert "epoch 1/1" in loud.err
    assert loud.epochs[0][1:] == quiet.epochs[0][1:]


def test_train_library_entry_returns_result_with_layers():
    result = train(TrainConfig(model="mlp", epochs=1))
    assert result.test_accuracy == result.epochs[-1]["test_acc"]
    assert set(result.layers) == {"0 Flatten", "1 Linear", "2 ReLU", "3 Linear", "4 ReLU",
                                  "5 Linear"}
    assert all(not m._forward_hooks for m in result.model.modules())  # monitor closed
    assert all(not p._post_accumulate_grad_hooks for p in result.model.parameters())
    assert math.isfinite(result.epochs[0]["loss"])


def test_train_help_lists_every_option(capsys):
    with pytest.raises(SystemExit) as exc:
        hookgrad.cli.main(["train", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for opt in ("--model", "--epochs", "--batch-size", "--lr", "--optimizer", "--seed", "--data",
                "--checkpoint", "--resume", "--report", "--quiet"):
        assert opt in out


def test_train_console_script_reads_sys_argv(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["hookgrad", "train", *MLP1])
    assert hookgrad.cli.main() == 0
    assert "final test accuracy:" in capsys.readouterr().out


def test_train_python_dash_m_subprocess():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "hookgrad", "train", *MLP1], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.splitlines()[-1].startswith("final test accuracy: ")


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(hookgrad.nn, "Conv2d"), reason="hookgrad.nn.Conv2d missing")
def test_train_default_run_reaches_97_percent(capsys):
    """``hookgrad train`` with no options: the CNN, 12 epochs, >= 97% on held-out digits."""
    run = run_cli(capsys, "--quiet")
    assert run.rc == 0 and len(run.epochs) == 12
    assert run.accuracy >= 0.97
