"""DataLoader workers run in the calling process, with the randomness of PyTorch's workers.

PyTorch's worker ``w`` of an iterator seeds its own generators when it starts: ``torch`` and
``random`` with ``base_seed + w``, NumPy's global generator with a state hashed from both
(``_generate_state``), then calls ``worker_init_fn(w)``. Batch ``k`` of a map-style dataset is
loaded by worker ``k % num_workers``; an iterable dataset is read by every worker (each shards it
through `get_worker_info`), their batches taken in turn until each is exhausted. hookgrad starts
no processes: a `Worker` keeps the three generator states of its worker and swaps them in around
every load, so random augmentation inside ``__getitem__`` draws what PyTorch's workers draw, and
the main process's streams are untouched. Departure: the worker's ``dataset`` is the loader's
object itself, not a copy, so a dataset that changes itself while loading is seen changed.

Mirrors: the worker side of ``torch.utils.data._utils.worker`` (``WorkerInfo``,
``_generate_state``, the seeding in ``_worker_loop``).
"""

from __future__ import annotations

import os
import random
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hookgrad._functional import random as _random

__all__ = ["WorkerInfo", "Worker", "current_worker", "check_worker_number"]

_CURRENT: list[Any] = [None]
_MASK = 0xFFFFFFFF


def current_worker() -> Any:
    """The `WorkerInfo` of the worker now loading, else None."""
    return _CURRENT[0]


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """``id``, ``num_workers``, ``seed`` and ``dataset`` of a loader worker (read-only).

    Mirrors: ``torch.utils.data._utils.worker.WorkerInfo``.
    """

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: Any = None
    worker_method: str | None = "multiprocessing"


def _hash_stream(init: int, mult: int) -> Callable[[int], int]:
    const = [init]

    def step(value: int) -> int:
        value = (value ^ const[0]) & _MASK
        const[0] = (const[0] * mult) & _MASK
        value = (value * const[0]) & _MASK
        return (value ^ (value >> 16)) & _MASK
    return step


def numpy_seed(base_seed: int, worker_id: int) -> list[int]:
    """The four 32-bit words PyTorch seeds a worker's NumPy generator with: a SeedSequence-style
    hash of the worker id and the two halves of the base seed."""
    hash_a = _hash_stream(0x43B0D7E5, 0x931E8875)
    pool = [hash_a(v) for v in (worker_id, base_seed & _MASK, base_seed >> 32, 0)]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                mixed = ((0xCA01F9DD * pool[dst]) - (0x4973F715 * hash_a(pool[src]))) & _MASK
                pool[dst] = (mixed ^ (mixed >> 16)) & _MASK
    hash_b = _hash_stream(0x8B51F9DD, 0x58F38DED)
    return [hash_b(v) for v in pool]


def _capture() -> tuple:
    return (_random.default_generator.get_state(), random.getstate(), np.random.get_state())


def _restore(states: tuple) -> None:
    _random.default_generator.set_state(states[0])
    random.setstate(states[1])
    np.random.set_state(states[2])


class Worker:
    """One worker's identity and generator states; `run` loads inside them."""

    def __init__(self, worker_id: int, num_workers: int, base_seed: int, dataset: Any,
                 init_fn: Callable[[int], None] | None) -> None:
        self.info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=base_seed + worker_id,
                               dataset=dataset)
        self.base_seed = base_seed
        self.init_fn = init_fn
        self.states: tuple | None = None

    def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` as this worker: its generators and `get_worker_info`, then back."""
        outer, saved = _CURRENT[0], _capture()
        _CURRENT[0] = self.info
        try:
            if self.states is None:  # the worker starts: PyTorch's _worker_loop seeding
                random.seed(self.info.seed)
                _random.manual_seed(self.info.seed)
                np.random.seed(numpy_seed(self.base_seed, self.info.id))
                self.states = _capture()
                if self.init_fn is not None:
                    self.init_fn(self.info.id)
            else:
                _restore(self.states)
            return fn(*args)
        finally:
            self.states = _capture()
            _restore(saved)
            _CURRENT[0] = outer


def check_worker_number(num_workers: int) -> None:
    """PyTorch's warning when a loader asks for more workers than the CPUs this process may
    use. Mirrors: ``DataLoader.check_worker_number_rationality``."""
    if not num_workers:
        return
    cpuset = hasattr(os, "sched_getaffinity")
    suggest = len(os.sched_getaffinity(0)) if cpuset else os.cpu_count()
    if suggest is not None and num_workers <= suggest:
        return
    if suggest is None:
        advice = ("DataLoader is not able to compute a suggested max number of worker in "
                  "current system.")
    else:
        advice = (f"Our suggested max number of worker in current system is {suggest}"
                  f"{'' if cpuset else ' (`cpuset` is not taken into account)'}, which is "
                  "smaller than what this DataLoader is going to create.")
    warnings.warn(f"This DataLoader will create {num_workers} worker processes in total. {advice} "
                  "Please be aware that excessive worker creation might get DataLoader running "
                  "slow or even freeze, lower the worker number to avoid potential slowness/freeze "
                  "if necessary.", stacklevel=3)
