"""Settings applied across a DataPipe pipeline: sharding, shuffling and random seeds.

Each function walks the graph of `hookgrad.utils.data.graph.traverse_dps` and calls the hook a
DataPipe defines (``apply_sharding``, ``set_shuffle``/``set_seed``), as the DataLoader does for
a DataPipe dataset.

Mirrors: ``torch.utils.data.graph_settings``.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any

from hookgrad._dtypes import int64
from hookgrad._functional.creation import empty
from hookgrad.utils.data.graph import DataPipeGraph, traverse_dps

__all__ = ["apply_random_seed", "apply_sharding", "apply_shuffle_seed", "apply_shuffle_settings",
           "get_all_graph_pipes"]

_DEFAULT_SHARDING_GROUP = 1  # SHARDING_PRIORITIES.DEFAULT


def get_all_graph_pipes(graph: DataPipeGraph) -> list:
    """Every DataPipe of `graph`, each once, outermost first.

    Mirrors: ``torch.utils.data.graph_settings.get_all_graph_pipes``.
    """
    seen: set[int] = set()
    out: list = []

    def walk(g: DataPipeGraph) -> None:
        for dp_id, (dp, sub) in g.items():
            if dp_id in seen:
                continue
            seen.add(dp_id)
            out.append(dp)
            walk(sub)
    walk(graph)
    return out


def _has_method(dp: Any, *names: str) -> bool:
    return all(inspect.ismethod(getattr(dp, n, None)) for n in names)


def apply_sharding(datapipe: Any, num_of_instances: int, instance_id: int,
                   sharding_group: Any = _DEFAULT_SHARDING_GROUP) -> Any:
    """Call ``apply_sharding`` of the pipeline's sharding DataPipes (at most one per branch).

    Mirrors: ``torch.utils.data.graph_settings.apply_sharding``.
    """
    def helper(graph: DataPipeGraph, prev: Any = None) -> None:
        for dp, sub in graph.values():
            applied = prev
            if _has_method(dp, "apply_sharding"):
                if prev is not None:
                    raise RuntimeError(
                        "Sharding twice on a single pipeline is likely unintended and will cause "
                        f"data loss. Sharding already applied to {prev} while trying to apply to "
                        f"{dp}")
                if len(inspect.signature(dp.apply_sharding).parameters) < 3:
                    dp.apply_sharding(num_of_instances, instance_id)
                else:
                    dp.apply_sharding(num_of_instances, instance_id,
                                      sharding_group=sharding_group)
                applied = dp
            helper(sub, applied)
    helper(traverse_dps(datapipe))
    return datapipe


def apply_shuffle_settings(datapipe: Any, shuffle: bool | None = None) -> Any:
    """Turn shuffling on or off in every DataPipe with ``set_shuffle`` and ``set_seed``.

    Mirrors: ``torch.utils.data.graph_settings.apply_shuffle_settings`` (with ``shuffle=True`` and
    no shuffler, PyTorch appends ``datapipe.shuffle()``; that needs a registered ``shuffle``).
    """
    if shuffle is None:
        return datapipe
    pipes = get_all_graph_pipes(traverse_dps(datapipe))
    shufflers = [p for p in pipes if _has_method(p, "set_shuffle", "set_seed")]
    if not shufflers and shuffle:
        warnings.warn("`shuffle=True` was set, but the datapipe does not contain a `Shuffler`. "
                      "Adding one at the end. Be aware that the default buffer size might not "
                      "be sufficient for your task.", stacklevel=2)
        datapipe = datapipe.shuffle()
        shufflers = [datapipe]
    for shuffler in shufflers:
        shuffler.set_shuffle(shuffle)
    return datapipe


def apply_random_seed(datapipe: Any, rng: Any) -> Any:
    """Give each DataPipe with ``set_seed`` a seed drawn from generator `rng`.

    Mirrors: ``torch.utils.data.graph_settings.apply_random_seed``.
    """
    seen: set[int] = set()
    for pipe in get_all_graph_pipes(traverse_dps(datapipe)):
        if id(pipe) in seen or not _has_method(pipe, "set_seed"):
            continue
        seen.add(id(pipe))
        pipe.set_seed(int(empty((), dtype=int64).random_(generator=rng).item()))
    return datapipe


def apply_shuffle_seed(datapipe: Any, rng: Any) -> Any:
    """Deprecated spelling of `apply_random_seed`.

    Mirrors: ``torch.utils.data.graph_settings.apply_shuffle_seed``.
    """
    warnings.warn("`apply_shuffle_seed` is deprecated since 1.12 and will be removed in the "
                  "future releases. Please use `apply_random_seed` instead.", FutureWarning,
                  stacklevel=2)
    return apply_random_seed(datapipe, rng)
