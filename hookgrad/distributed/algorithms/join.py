"""Training with uneven inputs: `Join`, `Joinable`, `JoinHook`.

Ranks that run out of inputs *join*: at the end of the ``with Join(...)`` block they keep
issuing the collectives that the ranks still training issue (each joinable's `JoinHook.
main_hook` shadows one iteration), until every rank has joined; then every joinable's
`JoinHook.post_hook` runs (DDP copies the last joiner's model to all ranks).

Each iteration of a rank that has not joined starts with `Join.notify_join_context`, an
all-reduce of 1; a joined rank answers it with an all-reduce of 0, so the sum is the number of
ranks still training, and 0 ends the loop everywhere.

Mirrors: ``torch.distributed.algorithms.join``.
"""

from __future__ import annotations

import threading
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np

import hookgrad.distributed as dist
from hookgrad._tensor import Tensor

__all__ = ["Join", "JoinHook", "Joinable"]
_WARN_THRESHOLD = 1000


class JoinHook:
    """What a joined rank does for one joinable: ``main_hook`` per shadowed iteration and
    ``post_hook`` once every rank joined.

    Mirrors: ``torch.distributed.algorithms.join.JoinHook``.
    """

    def main_hook(self) -> None:
        """Shadow one training iteration's collectives (default: nothing)."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Run once all ranks joined; ``is_last_joiner`` is True on the last rank to join."""


@dataclass
class _JoinConfig:
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config() -> _JoinConfig:
        return _JoinConfig(enable=False, throw_on_early_termination=False,
                           is_first_joinable=False)


class Joinable(ABC):
    """Something that can take part in `Join` (DDP, optimizers that communicate).

    Mirrors: ``torch.distributed.algorithms.join.Joinable``.
    """

    @abstractmethod
    def __init__(self) -> None:
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs: Any) -> JoinHook:
        """The `JoinHook` of this joinable (``kwargs`` come from `Join`'s keywords)."""

    @property
    @abstractmethod
    def join_device(self) -> Any:
        """Device of the join collectives."""

    @property
    @abstractmethod
    def join_process_group(self) -> Any:
        """Process group of the join collectives."""


_active = threading.local()  # the Join of this thread (ranks of the threads engine differ)


class Join:
    """Context manager letting ranks with fewer inputs shadow the others' collectives.

    Args:
        joinables: The `Joinable` objects taking part (all on one process group).
        enable: When False the context does nothing (even inputs).
        throw_on_early_termination: When True, every rank raises as soon as one rank ran
            out of inputs, instead of shadowing.
        **kwargs: Passed to every ``joinable.join_hook`` (e.g. DDP's
            ``divide_by_initial_world_size``).

    Raises:
        ValueError: No joinables, or joinables on different process groups.

    Example:
        >>> import hookgrad
        >>> from hookgrad.distributed.algorithms.join import Join
        >>> from hookgrad.nn.parallel import DistributedDataParallel as DDP
        >>> from hookgrad.testing.distributed import run_ranks
        >>> def fn(rank, world):
        ...     ddp = DDP(hookgrad.nn.Linear(2, 1))
        ...     with Join([ddp]):
        ...         for _ in range(rank + 1):  # rank 1 has one more batch
        ...             ddp(hookgrad.ones(1, 2)).sum().backward()
        ...     return ddp.module.weight.grad.tolist()
        >>> run_ranks(fn, 2)  # rank 1's second step: (2 + 0) / 2, rank 0 contributed zeros
        [[[1.0, 1.0]], [[1.0, 1.0]]]

    Mirrors: ``torch.distributed.algorithms.join.Join``.
    """

    def __init__(self, joinables: list[Joinable], enable: bool = True,
                 throw_on_early_termination: bool = False, **kwargs: Any) -> None:
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = list(joinables)
        self._join_hooks = [j.join_hook(**kwargs) for j in self._joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        self._set_joinable_configs()
        self._extract_dist_info()

    def _set_joinable_configs(self) -> None:
        for i, joinable in enumerate(self._joinables):
            joinable._join_config = _JoinConfig(self._enable, self._throw_on_early_termination,
                                                is_first_joinable=i == 0)

    def _extract_dist_info(self) -> None:
        groups = {id(j.join_process_group) for j in self._joinables}
        if len(groups) > 1:
            raise ValueError("Using join context manager with multiple process groups")
        self._process_group = self._joinables[0].join_process_group
        self._device = self._joinables[0].join_device
        self._rank = dist.get_rank(self._process_group)

    def __enter__(self) -> Join:
        _active.join = self
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        _active.join = None
        if not self._enable or exc_type is not None:
            return  # an error propagates as is
        all_joined, is_last_joiner, i = False, True, 0
        while not all_joined:
            if i == _WARN_THRESHOLD:
                warnings.warn(f"Detected uneven input skew of greater than {_WARN_THRESHOLD}. "
                              "This means that rank "
                              f"{self._rank} has at least {_WARN_THRESHOLD} fewer inputs than "
                              "other currently-active ranks. This level of skew could lead "
                              "to performance degradation during training.", stacklevel=2)
            if self._get_num_nonjoined_procs() == 0:
                all_joined = True
            else:
                if self._throw_on_early_termination:
                    self._notify_procs_to_terminate()
                for hook in self._join_hooks:
                    hook.main_hook()
                is_last_joiner = False
            i += 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)

    def _get_num_nonjoined_procs(self) -> int:
        count = Tensor._make(np.zeros(1, dtype=np.float32))
        dist.all_reduce(count, group=self._process_group)
        return int(count.item())

    def _notify_procs_to_terminate(self) -> None:
        dist.all_reduce(Tensor._make(np.ones(1, dtype=np.float32)), group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable: Joinable) -> Any:
        """Tell the joined ranks that this one has not joined yet (an all-reduce of 1); with
        ``throw_on_early_termination``, raise when some rank has already joined.

        Returns:
            The `Work` of that all-reduce (its result: the number of ranks still training),
            or None when ``joinable`` is not the first joinable of an enabled `Join`.

        Raises:
            RuntimeError: A rank exhausted its inputs and ``throw_on_early_termination``.
        """
        config = getattr(joinable, "_join_config", None)
        if config is None:
            raise AssertionError("Check that the Joinable's `__init__()` calls the "
                                 "`Joinable` constructor")
        if not config.is_first_joinable or not config.enable:
            return None
        group = joinable.join_process_group
        ones = Tensor._make(np.ones(1, dtype=np.float32))
        work = dist.all_reduce(ones, group=group, async_op=True)
        if config.throw_on_early_termination:
            zeros = Tensor._make(np.zeros(1, dtype=np.float32))
            dist.all_reduce(zeros, group=group)
            if zeros.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing "
                                   "across all ranks.")
        return work
