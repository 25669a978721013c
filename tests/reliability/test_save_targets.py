"""`hookgrad.save` to a path: atomic for regular files, never replaces what is not a regular
file, follows symlinks, and never lets temporaries of killed saves pile up."""

from __future__ import annotations

import os
import stat
import threading

import pytest

import hookgrad
from hookgrad.utils import _safe_write


def _temps(directory):
    return sorted(n for n in os.listdir(directory) if _safe_write.TEMP_MARK in n)


def test_regular_file_is_replaced_atomically_and_keeps_its_mode(tmp_path):
    path = tmp_path / "ck.pt"
    path.write_bytes(b"old")
    os.chmod(path, 0o640)
    inode = os.stat(path).st_ino
    hookgrad.save({"w": hookgrad.ones(3)}, str(path))
    assert hookgrad.load(str(path))["w"].tolist() == [1.0, 1.0, 1.0]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert os.stat(path).st_ino != inode  # a new file was moved in (the atomic path)
    assert _temps(tmp_path) == []


def test_symlink_is_followed_and_left_in_place(tmp_path):
    real = tmp_path / "real.pt"
    real.write_bytes(b"old")
    link = tmp_path / "link.pt"
    link.symlink_to(real)
    hookgrad.save(hookgrad.arange(4), str(link))
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert hookgrad.load(str(real)).tolist() == [0, 1, 2, 3]
    assert _temps(tmp_path) == []


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.pt"
    link.symlink_to(tmp_path / "sub-target.pt")
    hookgrad.save(hookgrad.zeros(2), str(link))
    assert link.is_symlink()
    assert hookgrad.load(str(tmp_path / "sub-target.pt")).tolist() == [0.0, 0.0]


def test_chain_of_symlinks_is_followed(tmp_path):
    real = tmp_path / "real.pt"
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(real)
    hookgrad.save(hookgrad.ones(1), str(tmp_path / "a"))
    assert (tmp_path / "a").is_symlink() and (tmp_path / "b").is_symlink()
    assert hookgrad.load(str(real)).tolist() == [1.0]


def test_fifo_is_written_through_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []

    def read():
        with open(fifo, "rb") as fh:
            got.append(fh.read())

    reader = threading.Thread(target=read)
    reader.start()
    hookgrad.save({"x": hookgrad.tensor([1.5, 2.5])}, str(fifo))
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still the FIFO
    import io

    assert hookgrad.load(io.BytesIO(got[0]))["x"].tolist() == [1.5, 2.5]
    assert _temps(tmp_path) == []


def test_symlink_to_a_character_device_writes_through(tmp_path):
    # a link to /dev/null stands in for /dev/null itself: the node is never touched by name
    link = tmp_path / "null.pt"
    link.symlink_to(os.devnull)
    before = os.stat(os.devnull)
    hookgrad.save(hookgrad.ones(2), str(link))
    after = os.stat(os.devnull)
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino
    assert link.is_symlink() and _temps(tmp_path) == []


def test_directory_target_raises_what_torch_raises_per_format(tmp_path, torch):
    for lib in (torch, hookgrad):
        with pytest.raises(RuntimeError, match="Is a directory"):  # the zip writer's
            lib.save(lib.ones(1), str(tmp_path))
        with pytest.raises(IsADirectoryError):  # the legacy format opens with open()
            lib.save(lib.ones(1), str(tmp_path), _use_new_zipfile_serialization=False)
    assert _temps(tmp_path) == []


def test_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "ck.pt"
    hookgrad.save(hookgrad.ones(2), str(path))
    with pytest.raises(TypeError):  # a generator cannot be pickled
        hookgrad.save({"bad": (i for i in range(3))}, str(path))
    assert hookgrad.load(str(path)).tolist() == [1.0, 1.0]
    assert _temps(tmp_path) == []


def test_stale_temporaries_of_dead_processes_are_removed(tmp_path):
    path = tmp_path / "ck.pt"
    dead = _dead_pid()
    stale = tmp_path / (_safe_write.temp_prefix(str(path), dead) + "abc.tmp")
    stale.write_bytes(b"x" * 1000)
    alive = tmp_path / (_safe_write.temp_prefix(str(path), os.getppid()) + "def.tmp")
    alive.write_bytes(b"y")
    other = tmp_path / (_safe_write.temp_prefix(str(tmp_path / "other.pt"), dead) + "g.tmp")
    other.write_bytes(b"z")
    hookgrad.save(hookgrad.ones(1), str(path))
    assert not stale.exists()  # ours, and its process is gone
    assert alive.exists()  # a live process may still be saving
    assert other.exists()  # a temporary of another target is not ours to remove


def _dead_pid():
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid
