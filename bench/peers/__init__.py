"""The pure-Python autograd peers ``python -m bench --peers`` times beside hookgrad and PyTorch.

Each peer has one module here that writes the bench workloads in that library's own idiom, on
the same weights and data as `bench.workloads` (`bench.peers._data`). This file imports none of
the peers: the parent process only decides which are installed, and each peer's module is
imported in its own worker process (`bench._worker`), as hookgrad and torch are.

A peer module exposes ``build(name) -> (step, first_value)`` (like a `bench.workloads.TABLE`
factory), raising `Unavailable` for a workload the library cannot express, and ``NOTES``:
workload -> a label shown beside its ratio (e.g. "workaround").
"""

from __future__ import annotations

import importlib.util
from typing import NamedTuple


class Peer(NamedTuple):
    distribution: str  # what `pip install` takes, and the module whose presence is checked
    module: str  # this package's module with the workloads
    title: str  # the table's column heading


# the worker's name for each peer -> its description; the order is the table's column order
PEERS: dict[str, Peer] = {
    "autograd": Peer("autograd", "bench.peers.autograd_peer", "HIPS autograd"),
    "mygrad": Peer("mygrad", "bench.peers.mygrad_peer", "MyGrad"),
}

# peers tried and left out of the harness, with why (printed under the table of --peers)
NOT_SUPPORTED: dict[str, str] = {
    "Chainer": "7.8.1 (the last release) does not import under NumPy 2 (it reads np.sctypes, "
               "removed in NumPy 2.0), and its sdist only builds with setuptools < 81",
}


class Unavailable(Exception):
    """A workload the peer library cannot express (shown as "-" in the table, not a failure)."""


def installed() -> tuple[list[str], list[str]]:
    """(peer names that are installed, one-line notes for the ones that are not)."""
    names, notes = [], []
    for name, peer in PEERS.items():
        if importlib.util.find_spec(peer.distribution) is not None:
            names.append(name)
        else:
            notes.append(f"{peer.title}: not installed, left out (pip install "
                         f"{peer.distribution}, or the hookgrad[peers] extra)")
    notes += [f"{title}: not supported, {why}" for title, why in NOT_SUPPORTED.items()]
    return names, notes
