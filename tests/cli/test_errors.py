"""Every user mistake: one stderr line ``hookgrad train: error: ...``, exit 2, no traceback."""

from __future__ import annotations

import numpy as np
import pytest

import hookgrad
from tests.cli._run import run_cli, write_npz

MLP = ("--model", "mlp", "--epochs", "1", "--quiet")


def assert_user_error(run, *fragments):
    assert run.rc == 2, run
    lines = run.err.splitlines()
    assert len(lines) == 1 and run.err.endswith("\n"), run.err
    assert lines[0].startswith("hookgrad train: error: "), lines[0]
    assert "Traceback" not in run.err and "final test accuracy" not in run.out
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def _npz(tmp_path, name, **arrays):
    path = tmp_path / name
    np.savez(path, **arrays)
    return str(path)


def _x(n=20, d=3, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)


# ------------------------------------------------------------------ data files
def test_error_missing_data_file(capsys, tmp_path):
    assert_user_error(run_cli(capsys, *MLP, "--data", str(tmp_path / "nope.npz")),
                      "data file not found", "nope.npz")


@pytest.mark.parametrize(("arrays", "missing"), [({"a": np.zeros((20, 3))}, "'x'"),
                                                 ({"x": np.zeros((20, 3))}, "'y'"),
                                                 ({"y": np.zeros(20)}, "'x'")])
def test_error_npz_without_x_or_y(capsys, tmp_path, arrays, missing):
    path = _npz(tmp_path, "d.npz", **arrays)
    assert_user_error(run_cli(capsys, *MLP, "--data", path), f"no array named {missing}")


@pytest.mark.parametrize(("x", "y", "fragment"), [
    (np.zeros(20), np.arange(20) % 2, "x must have samples first"),
    (np.zeros((20, 3)), (np.arange(20) % 2).reshape(20, 1), "y must be one label per sample"),
    (np.zeros((20, 3)), np.arange(19) % 2, "x has 20 samples but y has 19 labels"),
    (np.zeros((5, 3)), np.arange(5) % 2, "need at least 10 samples"),
], ids=["x_1d", "y_2d", "length_mismatch", "too_few"])
def test_error_wrong_shapes(capsys, tmp_path, x, y, fragment):
    path = _npz(tmp_path, "d.npz", x=x, y=y)
    assert_user_error(run_cli(capsys, *MLP, "--data", path), fragment)


@pytest.mark.parametrize(("y", "fragment"), [
    (np.array([0, -1] * 10), "labels must be integers 0..K-1"),
    (np.array([0, 1.5] * 10), "labels must be integers 0..K-1"),
    (np.array([0.0, np.nan] * 10), "labels must be integers 0..K-1"),
    (np.array([0, 2] * 10), "class 1 of 0..2 never occurs"),
    (np.array([1, 2] * 10), "class 0 of 0..2 never occurs"),
], ids=["negative", "fractional", "nan", "gap", "no_zero"])
def test_error_labels_out_of_range_or_missing_class(capsys, tmp_path, y, fragment):
    path = _npz(tmp_path, "d.npz", x=_x(), y=y)
    assert_user_error(run_cli(capsys, *MLP, "--data", path), fragment)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_error_non_finite_features(capsys, tmp_path, bad):
    x = _x()
    x[3, 1] = bad
    path = _npz(tmp_path, "d.npz", x=x, y=np.arange(20) % 2)
    assert_user_error(run_cli(capsys, *MLP, "--data", path), "x must be finite numbers")


def test_error_non_numeric_features(capsys, tmp_path):
    path = _npz(tmp_path, "d.npz", x=np.array([["a"] * 3] * 20), y=np.arange(20) % 2)
    assert_user_error(run_cli(capsys, *MLP, "--data", path), "x must be finite numbers")


@pytest.mark.parametrize(("content", "fragment"), [
    ("a,b,c\n1,2,3\n", "as a numeric CSV"),
    ("\n".join(str(i % 2) for i in range(20)), "at least one feature column"),
    ("", "at least one feature column"),
    ("1,2,0\n1,2\n", "as a numeric CSV"),
], ids=["header", "one_column", "empty", "ragged"])
def test_error_bad_csv(capsys, tmp_path, content, fragment):
    path = tmp_path / "d.csv"
    path.write_text(content)
    assert_user_error(run_cli(capsys, *MLP, "--data", str(path)), fragment)


@pytest.mark.parametrize(("name", "content"), [("d.npz", b"not a zip"),
                                               ("d.npy", b"\x93NUMPY\x01\x00")])
def test_error_unreadable_binary_file(capsys, tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    assert_user_error(run_cli(capsys, *MLP, "--data", str(path)), "cannot read")


def test_error_nan_loss_from_huge_learning_rate(capsys, tmp_path):
    path = write_npz(tmp_path / "d.npz", n=60)
    run = run_cli(capsys, "--model", "mlp", "--epochs", "2", "--quiet", "--data", path,
                  "--optimizer", "sgd", "--lr", "1e30")
    assert_user_error(run, "loss became nan", "lower --lr", "first non-finite value: module")


# ------------------------------------------------------------------ options
@pytest.mark.parametrize(("args", "fragment"), [
    (("--epochs", "0"), "--epochs and --batch-size must be positive"),
    (("--epochs", "-3"), "--epochs and --batch-size must be positive"),
    (("--epochs", "two"), "argument --epochs: invalid int value: 'two'"),
    (("--epochs", "1.5"), "argument --epochs: invalid int value"),
    (("--batch-size", "0"), "--epochs and --batch-size must be positive"),
    (("--lr", "0"), "--lr must be a positive number"),
    (("--lr", "-0.1"), "--lr must be a positive number"),
    (("--lr", "nan"), "--lr must be a positive number"),
    (("--lr", "fast"), "argument --lr: invalid float value"),
    (("--model", "rnn"), "argument --model: invalid choice: 'rnn'"),
    (("--optimizer", "lbfgs"), "argument --optimizer: invalid choice"),
    (("--seed", "x"), "argument --seed: invalid int value"),
    (("--bogus",), "unrecognized arguments: --bogus"),
    (("extra",), "unrecognized arguments: extra"),
], ids=lambda v: "_".join(v) if isinstance(v, tuple) else None)
def test_error_bad_option_values(capsys, args, fragment):
    base = [a for a in MLP]
    if args[0] in base:  # replace the default value given in MLP
        i = base.index(args[0])
        del base[i:i + 2]
    assert_user_error(run_cli(capsys, *base, *args), fragment)


@pytest.mark.skipif(not hasattr(hookgrad.nn, "Conv2d"), reason="hookgrad.nn.Conv2d missing")
@pytest.mark.parametrize(("shape", "fragment"), [((4,), "needs image samples"),
                                                 ((2, 3, 4, 4), "needs image samples"),
                                                 ((3, 3), "at least 4x4")])
def test_error_cnn_on_non_image_features(capsys, tmp_path, shape, fragment):
    path = write_npz(tmp_path / "d.npz", n=20, shape=shape)
    run = run_cli(capsys, "--model", "cnn", "--epochs", "1", "--quiet", "--data", path)
    assert_user_error(run, fragment, "--model")


# ------------------------------------------------------------------ checkpoints and report
def test_error_resume_missing_file(capsys, tmp_path):
    assert_user_error(run_cli(capsys, *MLP, "--resume", str(tmp_path / "c.pt")),
                      "checkpoint not found")


@pytest.mark.parametrize("kind", ["npz", "junk", "dict", "tensor"])
def test_error_resume_from_non_checkpoint(capsys, tmp_path, kind):
    path = tmp_path / "c.pt"
    if kind == "npz":
        path = tmp_path / "c.npz"
        write_npz(path)
    elif kind == "junk":
        path.write_bytes(b"junk")
    elif kind == "dict":
        hookgrad.save({"model": {}}, str(path))
    else:
        hookgrad.save(hookgrad.ones(3), str(path))
    run = run_cli(capsys, *MLP, "--resume", str(path))
    assert_user_error(run, str(path))
    assert "cannot read checkpoint" in run.err or "is not a hookgrad train checkpoint" in run.err


@pytest.mark.parametrize(("args", "fragment"), [
    (("--optimizer", "sgd"), "was made with --optimizer adam, not --optimizer sgd"),
    (("--model", "cnn"), "was made with --model mlp, not --model cnn"),
])
def test_error_resume_with_other_model_or_optimizer(capsys, tmp_path, args, fragment):
    ckpt = str(tmp_path / "c.pt")
    assert run_cli(capsys, *MLP, "--checkpoint", ckpt).rc == 0
    base = [a for a in MLP if a not in ("--model", "mlp")]
    run = run_cli(capsys, *base, *(("--model", "mlp") if args[0] != "--model" else ()),
                  *args, "--resume", ckpt)
    assert_user_error(run, fragment)


def test_error_resume_on_other_data_does_not_fit(capsys, tmp_path):
    ckpt = str(tmp_path / "c.pt")
    assert run_cli(capsys, *MLP, "--checkpoint", ckpt).rc == 0
    path = write_npz(tmp_path / "d.npz")
    run = run_cli(capsys, *MLP, "--data", path, "--resume", ckpt)
    assert_user_error(run, "does not fit this model/optimizer")


def test_error_checkpoint_in_missing_directory(capsys, tmp_path):
    run = run_cli(capsys, *MLP, "--checkpoint", str(tmp_path / "no" / "such" / "c.pt"))
    assert_user_error(run, "cannot write checkpoint")


def test_error_report_directory_not_writable(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    run = run_cli(capsys, *MLP, "--report", str(blocker / "report"))
    assert run.rc == 2 and "final test accuracy" in run.out  # training finished first
    lines = run.err.splitlines()
    assert lines == [lines[0]] and lines[0].startswith("hookgrad train: error: cannot write the "
                                                       "report to ")
