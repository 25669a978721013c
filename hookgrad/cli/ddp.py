"""Data-parallel ``hookgrad train``: ``--ddp`` (under ``mpiexec``), ``--nproc N`` (launches
``mpiexec`` itself) and ``--comm-hook``.

Every rank builds the same model (DDP broadcasts rank 0's weights anyway), walks the same
shuffled batches and takes its slice ``idx[rank::world]`` of each, so a step averages the
gradient of the same global batch as one process would: same accuracy, N times fewer samples
per rank. Only rank 0 shows progress, prints, writes the report and the checkpoint (of the
unwrapped model, so a single process loads it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from datetime import timedelta
from typing import Any

import numpy as np

import hookgrad
import hookgrad.distributed as dist
from hookgrad.cli.data import UserError
from hookgrad.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
from hookgrad.nn.parallel import DistributedDataParallel
from hookgrad.testing.distributed import RANK_DIR_ENV, BannerFilter, kill_launch, \
    lost_rank_message, mpiexec

COMM_HOOKS = ("allreduce", "fp16", "powersgd")


def add_arguments(parser: Any) -> None:
    """The DDP options of ``hookgrad train``."""
    parser.add_argument("--ddp", action="store_true",
                        help="data-parallel over the ranks of an MPI launch (mpiexec -n N)")
    parser.add_argument("--nproc", type=int, default=None,
                        help="launch N ranks with mpiexec and train data-parallel")
    parser.add_argument("--comm-hook", choices=COMM_HOOKS, default="allreduce",
                        help="how DDP reduces gradients (default: allreduce)")


def launch(argv: list[str], nproc: int) -> int:
    """Re-run this command under ``mpiexec -n nproc`` with ``--ddp``; return its exit code."""
    if nproc < 1:
        raise UserError("--nproc must be a positive number of processes")
    launcher = mpiexec()
    if launcher is None:
        raise UserError("--nproc needs mpiexec: pip install 'hookgrad[mpi]'")
    rest, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--nproc":
            skip = True
        elif not a.startswith("--nproc="):
            rest.append(a)
    if "--ddp" not in rest:
        rest.append("--ddp")
    with tempfile.TemporaryDirectory(prefix="hookgrad-ranks-") as rank_dir:
        env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
               "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "1"),
               RANK_DIR_ENV: rank_dir}
        cmd = [launcher, "-n", str(nproc), sys.executable, "-m", "hookgrad", *rest]
        # stdout passes through line by line, minus MPICH's multi-line termination banner,
        # which becomes one line naming the rank (stderr: progress bars, rank 0's errors)
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True, bufsize=1,
                                start_new_session=True)
        banner = BannerFilter(lambda line: print(line, end="", flush=True))
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                banner.feed(line)
            code = proc.wait()
        except KeyboardInterrupt:
            kill_launch(proc)
            raise
        banner.close()
        lost = lost_rank_message(banner.banner, rank_dir)
    if lost is not None:
        raise RuntimeError(lost)  # one line, exit code 1 (a failed run)
    return code


def note_failure(text: str) -> None:
    """Record why this rank is leaving; its peers' errors quote it (NOTE [Lost ranks])."""
    mpi = sys.modules.get("hookgrad.distributed._mpi")
    if mpi is not None:
        mpi.set_exit_reason(text)


def loss_everywhere(value: float) -> float:
    """The sum of this step's loss over ranks under ``--ddp`` (``value`` otherwise): a NaN or
    Inf on any rank shows on every rank, so all ranks stop at the same step with the same
    error instead of one rank leaving while the others wait for it in backward."""
    if not dist.is_initialized() or dist.get_world_size() == 1:
        return value
    t = hookgrad.tensor([value], dtype=hookgrad.float64)
    dist.all_reduce(t)
    return float(t.item())


def setup(enabled: bool) -> bool:
    """Initialise the MPI process group when ``enabled``; True on the rank that reports."""
    if not enabled:
        return True
    if not dist.is_initialized():
        try:
            # a rank that stops (a user error seen by one rank only) fails its peers within
            # this timeout, naming it, instead of leaving them waiting for 30 minutes
            dist.init_process_group("mpi", timeout=timedelta(seconds=120))
        except ImportError as e:
            raise UserError(str(e)) from None
    return dist.get_rank() == 0


def is_main() -> bool:
    """True unless this is a DDP rank other than 0 (also before the group exists, from the
    launcher's environment, so an error seen by every rank is printed once)."""
    if dist.is_initialized():
        return dist.get_rank() == 0
    return os.environ.get("PMI_RANK", "0") == "0" or RANK_DIR_ENV not in os.environ


def wrap(cfg: Any, model: hookgrad.nn.Module) -> hookgrad.nn.Module:
    """``model`` itself, or a `DistributedDataParallel` around it with the chosen comm hook."""
    if not getattr(cfg, "ddp", False):
        return model
    setup(True)
    ddp = DistributedDataParallel(model)
    hook = getattr(cfg, "comm_hook", "allreduce")
    if hook == "fp16":
        ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif hook == "powersgd":
        state = powerSGD_hook.PowerSGDState(None, matrix_approximation_rank=2,
                                            start_powerSGD_iter=10)
        ddp.register_comm_hook(state, powerSGD_hook.powerSGD_hook)
    return ddp


def shard(idx: np.ndarray) -> np.ndarray:
    """This rank's part of a global batch of sample indices (the whole batch when it has fewer
    samples than ranks: no rank may get an empty batch, and the mean is unchanged)."""
    if not dist.is_initialized() or len(idx) < dist.get_world_size():
        return idx
    return idx[dist.get_rank()::dist.get_world_size()]


def sum_over_ranks(*values: float) -> list[float]:
    """Sum per-rank epoch statistics (loss totals, correct and seen counts) over ranks."""
    if not dist.is_initialized() or dist.get_world_size() == 1:
        return list(values)
    t = hookgrad.tensor(np.array(values, dtype=np.float64))
    dist.all_reduce(t)
    return [float(v) for v in t.tolist()]
