"""Futures: results that arrive later (collectives, comm hooks), with chained callbacks.

Execution model (contracts/distributed.md §3.2): there is no background progress thread. A future
backed by a collective completes when the thread waiting on it (``wait``/``value``) or a
polling reducer drives the collective; callbacks then run synchronously on that thread, in
registration order. A ``then`` chain is fully resolved before ``wait()`` of its last link
returns. A plain ``Future()`` completed from another thread wakes its waiters.

Mirrors: ``torch.futures``.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

T = TypeVar("T")
S = TypeVar("S")

_NOT_SET = object()


class Future(Generic[T]):
    """A value (or an exception) that becomes available later.

    Example:
        >>> import hookgrad
        >>> fut = hookgrad.futures.Future()
        >>> child = fut.then(lambda f: f.value() + 1)
        >>> fut.set_result(41)
        >>> child.wait()
        42

    Mirrors: ``torch.futures.Future``.
    """

    def __init__(self, *, devices: Any = None) -> None:
        self._value: Any = _NOT_SET
        self._exception: BaseException | None = None
        self._callbacks: list[Callable[[Future[T]], Any]] = []
        self._cond = threading.Condition()
        # Called by wait() to make progress on whatever will complete this future (a Work, or
        # the parent of a ``then`` link); None for a future completed by set_result.
        self._driver: Callable[[], Any] | None = None

    # -- state ---------------------------------------------------------------------------------
    def done(self) -> bool:
        """True once a result or an exception was set. Mirrors: ``torch.futures.Future.done``."""
        return self._value is not _NOT_SET or self._exception is not None

    def set_result(self, result: T) -> None:
        """Complete the future and run its callbacks on this thread.

        Raises:
            RuntimeError: If the future was already completed.

        Mirrors: ``torch.futures.Future.set_result``.
        """
        self._complete(result, None)

    def set_exception(self, result: BaseException) -> None:
        """Complete the future with an error that ``wait``/``value`` re-raise.

        Mirrors: ``torch.futures.Future.set_exception``.
        """
        if not isinstance(result, BaseException):  # PyTorch asserts here
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(_NOT_SET, result)

    def _complete(self, value: Any, exc: BaseException | None) -> None:
        with self._cond:
            if self.done():
                raise RuntimeError(
                    "Attempting to mark a completed Future as complete again. Note that a Future "
                    "can only be marked completed once.")
            self._value, self._exception = value, exc
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
        for cb in callbacks:
            cb(self)

    # -- reading -------------------------------------------------------------------------------
    def wait(self) -> T:
        """Block until completed, driving its source if any; return the value or re-raise.

        Mirrors: ``torch.futures.Future.wait``.
        """
        if not self.done() and self._driver is not None:
            self._driver()
        with self._cond:
            while not self.done():
                self._cond.wait()
        return self.value()

    def value(self) -> T:
        """The value of a completed future (re-raises its exception).

        Mirrors: ``torch.futures.Future.value``.
        """
        if self._exception is not None:
            raise self._exception
        if self._value is _NOT_SET:
            raise RuntimeError("Future is not completed yet; call wait() first.")
        return self._value

    # -- chaining ------------------------------------------------------------------------------
    def then(self, callback: Callable[[Future[T]], S]) -> Future[S]:
        """A new future holding ``callback(self)`` once this one completes.

        If the callback raises, the child fails with ``RuntimeError("Got the following error
        when running the callback: {Type}: {msg}")``.

        Mirrors: ``torch.futures.Future.then``.
        """
        child: Future[S] = Future()
        child._driver = self.wait_quietly

        def run(parent: Future[T]) -> None:
            try:
                out = callback(parent)
            except Exception as exc:  # noqa: BLE001 - rewrapped like torch does
                child.set_exception(RuntimeError(
                    "Got the following error when running the callback: "
                    f"{type(exc).__name__}: {exc}"))
                return
            child.set_result(out)

        self.add_done_callback(run)
        return child

    def add_done_callback(self, callback: Callable[[Future[T]], Any]) -> None:
        """Run ``callback(self)`` when completed (now, if already done); result ignored.

        Mirrors: ``torch.futures.Future.add_done_callback``.
        """
        with self._cond:
            if not self.done():
                self._callbacks.append(callback)
                return
        callback(self)

    def wait_quietly(self) -> None:
        """Wait for completion without re-raising (used to drive ``then`` children)."""
        if not self.done() and self._driver is not None:
            self._driver()
        with self._cond:
            while not self.done():
                self._cond.wait()

    def __repr__(self) -> str:
        return f"Future(done={self.done()})"


def future_type_name() -> str:
    """``"torch.futures.Future"`` while ``torch`` is hookgrad (the alias), else
    ``"hookgrad.futures.Future"``: messages name the type the user's code spells."""
    aliased = sys.modules.get("torch") is sys.modules.get("hookgrad")
    return "torch.futures.Future" if aliased else \
        "hookgrad.futures.Future"


def collect_all(futures: Iterable[Future[Any]]) -> Future[list[Future[Any]]]:
    """A future completed with the list of ``futures`` once all of them completed.

    Example:
        >>> import hookgrad
        >>> a, b = hookgrad.futures.Future(), hookgrad.futures.Future()
        >>> both = hookgrad.futures.collect_all([a, b])
        >>> a.set_result(1); b.set_result(2)
        >>> [f.value() for f in both.wait()]
        [1, 2]

    Mirrors: ``torch.futures.collect_all``.
    """
    futs = list(futures) if isinstance(futures, (list, tuple)) else None
    if futs is None or not all(isinstance(f, Future) for f in futs):
        name = future_type_name()
        raise TypeError(f"_collect_all(): incompatible function arguments: expected a sequence "
                        f"of {name} objects, invoked with: {futures!r}")
    out: Future[list[Future[Any]]] = Future()
    out._driver = lambda: [f.wait_quietly() for f in futs]
    remaining = [len(futs)]
    lock = threading.Lock()

    def one_done(_: Future[Any]) -> None:
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            out.set_result(futs)

    if not futs:
        out.set_result(futs)
    for f in futs:
        f.add_done_callback(one_done)
    return out


def wait_all(futures: Iterable[Future[Any]]) -> list[Any]:
    """Wait for every future and return their values (re-raises the first error).

    Mirrors: ``torch.futures.wait_all``.
    """
    return [f.wait() for f in collect_all(futures).wait()]


__all__ = ["Future", "collect_all", "wait_all"]
