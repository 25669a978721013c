"""Rendezvous: turn an ``init_method`` URL into ``(store, rank, world_size)``.

Handlers are generators keyed by URL scheme: ``file://PATH?rank=R&world_size=N`` (a
`FileStore`), ``tcp://HOST:PORT?rank=R&world_size=N`` (a `TCPStore`, served by rank 0) and
``env://`` (``MASTER_ADDR``, ``MASTER_PORT``, ``RANK``, ``WORLD_SIZE`` from the environment).
`register_rendezvous_handler` adds schemes.

Example:
    >>> import os, tempfile
    >>> from hookgrad.distributed import rendezvous
    >>> path = os.path.join(tempfile.mkdtemp(), "rdzv")
    >>> store, rank, world = next(rendezvous(f"file://{path}?rank=0&world_size=1"))
    >>> rank, world
    (0, 1)

Mirrors: ``torch.distributed.rendezvous``.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import urlparse, urlunparse

from hookgrad.distributed._file_store import FileStore
from hookgrad.distributed._names import default_pg_timeout
from hookgrad.distributed._tcp_store import TCPStore

__all__ = ["register_rendezvous_handler", "rendezvous"]

_rendezvous_handlers: dict[str, Callable[..., Iterator[tuple[Any, int, int]]]] = {}


def register_rendezvous_handler(scheme: str, handler: Callable[..., Any]) -> None:
    """Make ``rendezvous`` call ``handler(url, **kwargs)`` (a generator of ``(store, rank,
    world_size)``) for URLs of ``scheme``.

    Raises:
        RuntimeError: ``scheme`` already has a handler.

    Mirrors: ``torch.distributed.register_rendezvous_handler``.
    """
    if scheme in _rendezvous_handlers:
        raise RuntimeError(f"Rendezvous handler for {scheme}:// already registered")
    _rendezvous_handlers[scheme] = handler


def _query(query: str) -> dict[str, str]:
    return dict(pair.split("=") for pair in query.split("&") if pair)


def rendezvous(url: str, rank: int = -1, world_size: int = -1, **kwargs: Any) -> Any:
    """The handler's generator for ``url``; ``rank``/``world_size`` given here are added to
    the URL's query (they must not be in it already).

    Raises:
        RuntimeError: ``url`` is not a string, ``rank``/``world_size`` not integers, or no
            handler for the scheme.
        AssertionError: ``rank``/``world_size`` given both here and in the URL.

    Mirrors: ``torch.distributed.rendezvous``.
    """
    if not isinstance(url, (str, bytes)):
        raise RuntimeError(f"`url` must be a string. {type(url)}: {url}")
    if not isinstance(rank, numbers.Integral):
        raise RuntimeError(f"`rank` must be an integer. {rank}")
    if not isinstance(world_size, numbers.Integral):
        raise RuntimeError(f"`world_size` must be an integer. {world_size}")
    parts = urlparse(url)
    if rank != -1 or world_size != -1:
        query = _query(parts.query)
        if "rank" in query or "world_size" in query:
            raise AssertionError(
                f"The url: {url} has node-specific arguments(rank, world_size) already.")
        if rank != -1:
            query["rank"] = str(rank)
        if world_size != -1:
            query["world_size"] = str(world_size)
        parts = parts._replace(query="&".join(f"{k}={v}" for k, v in query.items()))
        url = urlunparse(parts)
    if parts.scheme not in _rendezvous_handlers:
        raise RuntimeError(f"No rendezvous handler for {parts.scheme}://")
    return _rendezvous_handlers[parts.scheme](url, **kwargs)


def _error(scheme: str, msg: str) -> ValueError:
    return ValueError(f"Error initializing torch.distributed using {scheme}:// rendezvous: "
                      f"{msg}")


def _rank_and_size(scheme: str, query: dict[str, str],
                   env: bool = False) -> tuple[int, int]:
    values = []
    for key, var, what in (("rank", "RANK", "rank parameter"),
                           ("world_size", "WORLD_SIZE", "world size parameter")):
        if key in query:
            values.append(int(query[key]))
        elif env:
            values.append(int(_env(var)))
        else:
            raise _error(scheme, f"{what} missing")
    return values[0], values[1]


def _env(var: str) -> str:
    value = os.environ.get(var)
    if not value:
        raise _error("env", f"environment variable {var} expected, but not set")
    return value


def _tcp_store(host: str, port: int, rank: int, world_size: int,
               timeout: timedelta) -> TCPStore:
    if not 0 <= port < 2 ** 16:
        raise ValueError(f"port must have value from 0 to 65535 but was {port}.")
    return TCPStore(host, port, world_size, is_master=rank == 0, timeout=timeout,
                    multi_tenant=True)


def _file_handler(url: str, **kwargs: Any) -> Iterator[tuple[Any, int, int]]:
    parts = urlparse(url)
    if not parts.path:
        raise _error("file", "path missing")
    rank, world_size = _rank_and_size("file", _query(parts.query))
    yield FileStore(parts.path, world_size), rank, world_size
    raise RuntimeError("Unable to perform rerendezvous using file:// method")


def _tcp_handler(url: str, timeout: timedelta = default_pg_timeout,
                 **kwargs: Any) -> Iterator[tuple[Any, int, int]]:
    parts = urlparse(url)
    if parts.port is None:
        raise _error("tcp", "port number missing")
    rank, world_size = _rank_and_size("tcp", _query(parts.query))
    yield _tcp_store(parts.hostname or "", parts.port, rank, world_size, timeout), rank, \
        world_size
    raise RuntimeError("Unable to perform re-rendezvous using tcp:// method")


def _env_handler(url: str, timeout: timedelta = default_pg_timeout,
                 **kwargs: Any) -> Iterator[tuple[Any, int, int]]:
    rank, world_size = _rank_and_size("env", _query(urlparse(url).query), env=True)
    store = _tcp_store(_env("MASTER_ADDR"), int(_env("MASTER_PORT")), rank, world_size, timeout)
    yield store, rank, world_size
    raise RuntimeError("Unable to perform re-rendezvous using env:// method")


register_rendezvous_handler("tcp", _tcp_handler)
register_rendezvous_handler("env", _env_handler)
register_rendezvous_handler("file", _file_handler)
