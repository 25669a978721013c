"""More user mistakes (issue 15): one stderr line, exit code 2, never a traceback, and no
allocation proportional to a label's value."""

from __future__ import annotations

import os

import numpy as np
import pytest

import hookgrad
from tests.cli._run import run_cli, write_npz
from tests.cli.test_errors import assert_user_error

MLP = ("--model", "mlp", "--epochs", "1", "--quiet")


def test_directory_as_data(capsys, tmp_path):
    assert_user_error(run_cli(capsys, *MLP, "--data", str(tmp_path)), "not a regular file")


def test_npz_with_string_labels(capsys, tmp_path):
    path = write_npz(tmp_path / "d.npz", n=20, y=np.array(["a", "b"] * 10))
    assert_user_error(run_cli(capsys, *MLP, "--data", path), "labels must be integers")


def test_npz_with_complex_features(capsys, tmp_path):
    path = write_npz(tmp_path / "d.npz", n=20, x=np.ones((20, 3), complex))
    assert_user_error(run_cli(capsys, *MLP, "--data", path), "x must be finite numbers")


@pytest.mark.parametrize("label", ["1e9", "1e300", "20"])
def test_csv_with_a_huge_label_is_refused_without_building_it(capsys, tmp_path, label):
    rows = [f"{i % 3}.0,{i}.5,{i % 2}" for i in range(19)] + [f"1,2,{label}"]
    path = tmp_path / "d.csv"
    path.write_text("\n".join(rows) + "\n")
    assert_user_error(run_cli(capsys, *MLP, "--data", str(path)), "out of range", "K <= 20")


def test_npz_without_features(capsys, tmp_path):
    path = write_npz(tmp_path / "d.npz", n=20, x=np.zeros((20, 0), np.float32))
    assert_user_error(run_cli(capsys, *MLP, "--data", path), "x has no features")


def test_corrupt_npz(capsys, tmp_path):
    path = tmp_path / "d.npz"
    path.write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    assert_user_error(run_cli(capsys, *MLP, "--data", str(path)), "cannot read")


def test_binary_csv(capsys, tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(bytes(range(256)) * 4)
    assert_user_error(run_cli(capsys, *MLP, "--data", str(path)), "numeric CSV")


@pytest.mark.parametrize("seed", ["-1", str(2**64), str(-(2**70))])
def test_seed_out_of_range(capsys, tmp_path, seed):
    path = write_npz(tmp_path / "d.npz", n=20)
    assert_user_error(run_cli(capsys, *MLP, "--data", path, "--seed", seed), "--seed")


def test_largest_seed_is_accepted(capsys, tmp_path):
    path = write_npz(tmp_path / "d.npz", n=20)
    assert run_cli(capsys, *MLP, "--data", path, "--seed", str(2**64 - 1)).rc == 0


def test_checkpoint_onto_a_directory(capsys, tmp_path):
    path = write_npz(tmp_path / "d.npz", n=20)
    target = tmp_path / "dir"
    target.mkdir()
    assert_user_error(
        run_cli(capsys, *MLP, "--data", path, "--checkpoint", str(target)),
        "cannot write checkpoint",
    )
    assert target.is_dir()


def test_checkpoint_through_a_symlink_keeps_the_link(capsys, tmp_path):
    path = write_npz(tmp_path / "d.npz", n=20)
    link = tmp_path / "latest.pt"
    link.symlink_to(tmp_path / "real.pt")
    assert run_cli(capsys, *MLP, "--data", path, "--checkpoint", str(link)).rc == 0
    assert link.is_symlink() and hookgrad.load(str(tmp_path / "real.pt"))["epoch"] == 1


# ------------------------------------------------------------------ malformed --resume files
@pytest.fixture
def good_checkpoint(capsys, tmp_path):
    data = write_npz(tmp_path / "d.npz", n=20)
    ckpt = str(tmp_path / "c.pt")
    assert run_cli(capsys, *MLP, "--data", data, "--checkpoint", ckpt).rc == 0
    return data, ckpt


def _history_row(i):
    return {"epoch": i + 1, "loss": 1.0, "train_acc": 0.5, "test_acc": 0.5, "seconds": 0.1}


MALFORMED = {
    "model-not-dict": (lambda s: s.update(model=[1, 2]), "'model'"),
    "model-values-not-tensors": (lambda s: s.update(model={"0.weight": 3}), "'model'"),
    "model-missing-keys": (lambda s: s.update(model={}), "does not fit"),
    "optimizer-not-dict": (lambda s: s.update(optimizer="adam"), "'optimizer'"),
    "optimizer-groups-not-list": (lambda s: s["optimizer"].update(param_groups=5), "'optimizer'"),
    "optimizer-groups-wrong": (lambda s: s["optimizer"].update(param_groups=[]), "does not fit"),
    "config-list": (lambda s: s.update(config=["mlp"]), "'config'"),
    "history-int": (lambda s: s.update(history=3), "'history'"),
    "history-rows-not-dicts": (lambda s: s.update(history=[[1, 2]]), "'history'"),
    "history-too-long": (
        lambda s: s.update(history=[_history_row(0), _history_row(1)]),
        "'history'",
    ),
    "history-missing-key": (lambda s: s.update(history=[{"epoch": 1}]), "'history'"),
    "epoch-negative": (lambda s: s.update(epoch=-1), "'epoch'"),
    "epoch-float": (lambda s: s.update(epoch=1.5), "'epoch'"),
    "epoch-bool": (lambda s: s.update(epoch=True), "'epoch'"),
    "epoch-str": (lambda s: s.update(epoch="1"), "'epoch'"),
    "no-epoch": (lambda s: s.pop("epoch"), "not a hookgrad train checkpoint"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_resume_from_malformed_checkpoint(capsys, good_checkpoint, case):
    data, ckpt = good_checkpoint
    state = hookgrad.load(ckpt)
    mutate, fragment = MALFORMED[case]
    mutate(state)
    hookgrad.save(state, ckpt)
    run = run_cli(
        capsys, "--model", "mlp", "--epochs", "2", "--quiet", "--data", data, "--resume", ckpt
    )
    assert_user_error(run, ckpt, fragment)


def test_resume_from_a_good_checkpoint_still_works(capsys, good_checkpoint):
    data, ckpt = good_checkpoint
    run = run_cli(
        capsys, "--model", "mlp", "--epochs", "2", "--quiet", "--data", data, "--resume", ckpt
    )
    assert run.rc == 0 and [e[0] for e in run.epochs] == [1, 2]


def test_resume_from_a_directory(capsys, tmp_path):
    assert_user_error(run_cli(capsys, *MLP, "--resume", str(tmp_path)), "cannot read checkpoint")


def test_resume_from_a_corrupted_checkpoint(capsys, good_checkpoint):
    data, ckpt = good_checkpoint
    with open(ckpt, "rb") as fh:
        raw = bytearray(fh.read())
    raw[len(raw) // 2] ^= 0xFF
    with open(ckpt, "wb") as fh:
        fh.write(raw)
    assert_user_error(
        run_cli(capsys, *MLP, "--data", data, "--resume", ckpt), "cannot read checkpoint"
    )
    assert os.path.exists(ckpt)
