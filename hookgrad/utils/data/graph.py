"""The graph of a DataPipe pipeline: which DataPipes each one reads from.

PyTorch finds the connections by pickling each DataPipe with hooks that catch the DataPipes it
references; hookgrad reads the same references directly from each DataPipe's state
(``__getstate__`` when defined, else its attributes), looking into lists, tuples, sets and dicts
as PyTorch does. A DataPipe reachable along several paths appears under each of them; a cycle
stops at the repeated DataPipe.

Mirrors: ``torch.utils.data.graph`` (``traverse_dps``, ``traverse``, ``DataPipeGraph``).
"""

from __future__ import annotations

import warnings
from typing import Any

from hookgrad.utils.data.datapipe import IterDataPipe, MapDataPipe

__all__ = ["traverse", "traverse_dps"]

DataPipe = IterDataPipe | MapDataPipe
DataPipeGraph = dict  # {id(dp): (dp, DataPipeGraph)}


def _connected(value: Any, found: list, seen: set[int], scan: Any, cache: set[int]) -> None:
    if isinstance(value, (IterDataPipe, MapDataPipe)):
        if value is not scan and id(value) not in cache and id(value) not in seen:
            seen.add(id(value))
            found.append(value)
        return
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _connected(item, found, seen, scan, cache)


def _state(dp: Any) -> Any:
    getstate = getattr(type(dp), "__getstate__", None)
    if getstate is not None and getstate is not object.__getstate__:
        return dp.__getstate__()
    return dict(vars(dp)) if hasattr(dp, "__dict__") else {}


def _list_connected(dp: Any, cache: set[int]) -> list:
    found: list = []
    _connected(_state(dp), found, set(), dp, cache)
    return found


def _traverse(dp: Any, cache: set[int]) -> DataPipeGraph:
    if not isinstance(dp, (IterDataPipe, MapDataPipe)):
        raise RuntimeError(
            f"Expected `IterDataPipe` or `MapDataPipe`, but {type(dp)} is found")
    if id(dp) in cache:
        return {}
    cache.add(id(dp))
    graph: DataPipeGraph = {id(dp): (dp, {})}
    for item in _list_connected(dp, cache.copy()):
        graph[id(dp)][1].update(_traverse(item, cache.copy()))
    return graph


def traverse_dps(datapipe: Any) -> DataPipeGraph:
    """The pipeline ending at `datapipe`: ``{id(dp): (dp, sub_graph)}``.

    Mirrors: ``torch.utils.data.graph.traverse_dps``.
    """
    return _traverse(datapipe, set())


def traverse(datapipe: Any, only_datapipe: bool | None = None) -> DataPipeGraph:
    """Deprecated spelling of `traverse_dps`. Mirrors: ``torch.utils.data.graph.traverse``."""
    msg = ("`traverse` function is deprecated and will be removed after 1.13. Please use "
           "`traverse_dps` instead.")
    if not only_datapipe:
        msg += " And, the behavior will be changed to the equivalent of `only_datapipe=True`."
    warnings.warn(msg, FutureWarning, stacklevel=2)
    return traverse_dps(datapipe)
