"""``torch.utils.tensorboard``: the same logging calls on PyTorch and hookgrad write the same
events (protos compared field by field; wall times pinned, file names aside), the same run
directories, and raise the same error types."""

from __future__ import annotations

import glob
import os

import numpy as np
import pytest

pytest.importorskip("tensorboard")
pytest.importorskip("PIL")

from tensorboard.backend.event_processing.event_file_loader import (  # noqa: E402
    EventFileLoader,
)


def _events(root: str) -> dict[str, list]:
    """Per run directory under `root` (relative path), its events without file-specific data."""
    runs: dict[str, list] = {}
    for path in sorted(glob.glob(os.path.join(root, "**", "events.out.tfevents.*"),
                                 recursive=True)):
        rel = os.path.relpath(os.path.dirname(path), root)
        events = [e for e in EventFileLoader(path).Load() if not e.HasField("file_version")
                  or e.step]
        for e in events:
            if e.wall_time not in (100.0, 101.0):  # not pinned by the caller: the clock's
                e.wall_time = 0.0
        runs.setdefault(rel, []).extend(str(e) for e in events)
    return runs


def _log(lib, root: str) -> None:
    from importlib import import_module

    tb = import_module(lib.__name__ + ".utils.tensorboard")
    rng = np.random.default_rng(0)
    w = tb.SummaryWriter(log_dir=os.path.join(root, "run"), purge_step=3)
    t = 100.0
    w.add_scalar("loss/train", lib.tensor(0.25), 0, walltime=t)
    w.add_scalar("loss/train", 0.125, np.int64(1), walltime=t + 1)
    w.add_scalar("acc", lib.tensor([0.5], dtype=lib.float64), 2, walltime=t, new_style=True)
    w.add_scalar("acc2", 0.75, 2, walltime=t, new_style=True, double_precision=True)
    w.add_scalars("run_14h", {"xsinx": 1.5, "xcosx": lib.tensor(2.0)}, 4, walltime=t)
    values = lib.tensor(rng.normal(size=500))
    w.add_histogram("weights", values, 5, walltime=t)
    w.add_histogram("weights_auto", values, 5, bins="auto", walltime=t, max_bins=7)
    w.add_histogram("ints", lib.arange(10), 5, bins=4, walltime=t)
    w.add_histogram_raw("raw", 0.0, 3.0, 4, 6.0, 14.0, [1.0, 2.0, 3.0], [1, 2, 1], 6,
                        walltime=t)
    w.add_image("img", lib.tensor(rng.random((3, 4, 5)), dtype=lib.float32), 7, walltime=t)
    w.add_image("img_hw", lib.tensor(rng.integers(0, 255, (4, 5)).astype(np.uint8)), 7,
                walltime=t, dataformats="HW")
    w.add_images("batch", lib.tensor(rng.random((3, 1, 4, 4))), 8, walltime=t)
    w.add_image("hwc", rng.random((4, 5, 3)), 8, walltime=t, dataformats="HWC")
    w.add_text("note", "lr=0.1 **bold**", 9, walltime=t)
    w.add_tensor("tens", lib.tensor([[1.0, 2.0]]), 9, walltime=t)
    w.flush()
    w.add_hparams({"lr": 0.1, "bs": 32, "opt": "adam", "flag": True, "none": None},
                  {"hparam/acc": 0.9}, run_name="hp", global_step=10)
    w.close()
    w.add_scalar("after_close", 1.0, 11, walltime=t)  # reopens the run
    w.close()


@pytest.mark.oracle
def test_events_match_torch(torch, tmp_path):
    import hookgrad

    _log(torch, str(tmp_path / "t"))
    _log(hookgrad, str(tmp_path / "h"))
    got, want = _events(str(tmp_path / "h")), _events(str(tmp_path / "t"))
    assert sorted(got) == sorted(want)
    for run in want:
        assert got[run] == want[run], run


def _error(lib, root, call):
    from importlib import import_module

    tb = import_module(lib.__name__ + ".utils.tensorboard")
    w = tb.SummaryWriter(log_dir=root)
    try:
        call(lib, w)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)
    finally:
        w.close()
    return None


BAD = [
    lambda lib, w: w.add_scalar("x", lib.ones(2)),
    lambda lib, w: w.add_scalar("x", "text"),
    lambda lib, w: w.add_histogram("x", lib.ones(0)),
    lambda lib, w: w.add_histogram_raw("x", 0, 1, 1, 1, 1, [1.0, 2.0], [1]),
    lambda lib, w: w.add_image("x", lib.ones(3, 4, 5), dataformats="HW"),
    lambda lib, w: w.add_image("x", lib.ones(3, 4, 5), dataformats="CCW"),
    lambda lib, w: w.add_hparams([1], {}),
    lambda lib, w: w.add_hparams({"a": [1]}, {}),
    lambda lib, w: w.add_hparams({"a": 1}, {}, hparam_domain_discrete={"a": ["x"]}),
]


@pytest.mark.oracle
@pytest.mark.parametrize("case", range(len(BAD)))
def test_error_types_match_torch(torch, tmp_path, case):
    import hookgrad

    want = _error(torch, str(tmp_path / "t"), BAD[case])
    assert want is not None
    assert _error(hookgrad, str(tmp_path / "h"), BAD[case]) is want


def test_default_log_dir_and_alias(tmp_path, monkeypatch):
    import socket

    from hookgrad.utils.tensorboard import SummaryWriter

    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_exp")
    w.close()
    (run,) = os.listdir(tmp_path / "runs")
    assert run.endswith("_" + socket.gethostname() + "_exp") and w.get_logdir().startswith("runs")


def test_unsupported_summaries_raise(tmp_path):
    from hookgrad.utils.tensorboard import SummaryWriter

    with SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(NotImplementedError, match="hookgrad"):
            w.add_graph(None)
        with pytest.raises(NotImplementedError, match="hookgrad"):
            w.add_embedding(None)
