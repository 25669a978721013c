"""`Work`: the handle of an asynchronous collective, and its `Future`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from hookgrad.futures import Future


class Work:
    """A collective launched with ``async_op=True``.

    ``wait()`` drives the engine on the calling thread until the collective completes, then
    runs the post-processing (copy back into the tensors) and completes the future, whose
    callbacks run right there (contracts/distributed.md §3.2).

    Mirrors: ``torch.distributed.Work``.
    """

    def __init__(self, group: Any, request: Any, outputs: list[Any],
                 finish: Callable[[Any], Any] | None = None) -> None:
        self._group, self._request, self._outputs = group, request, outputs
        self._finish = finish
        self._future: Future[list[Any]] = Future()
        self._future._driver = self._wait_for_future
        self._completed = False
        self._error: BaseException | None = None
        if request is not None:
            group._pending.append(self)
        else:
            self._complete()

    def _wait_for_future(self) -> None:
        try:
            self.wait()
        except Exception:  # noqa: BLE001 - the future holds the error; wait() re-raises it
            pass

    def _complete(self) -> None:
        if self._completed:
            return
        self._completed = True
        if self in self._group._pending:
            self._group._pending.remove(self)
        try:
            if self._finish is not None:
                self._finish(self._request.result if self._request is not None else None)
        except BaseException as exc:  # noqa: BLE001
            self._fail(exc)
            raise
        self._future.set_result(list(self._outputs))

    def _fail(self, exc: BaseException) -> None:
        self._completed = True
        self._error = exc
        if self in self._group._pending:
            self._group._pending.remove(self)
        if not self._future.done():
            self._future.set_exception(exc)

    def _drive(self) -> None:
        """Let the engine make progress on this collective; never runs callbacks. An engine
        error is kept and raised by ``wait``."""
        if self._completed or self._error is not None:
            return
        try:
            self._request.test()
        except Exception as exc:  # noqa: BLE001 - re-raised by wait()
            self._error = exc

    def _poll(self) -> bool:
        """Make progress without blocking; complete (running callbacks) when finished."""
        if self._completed:
            return True
        try:
            finished = self._request.test()
        except BaseException as exc:  # noqa: BLE001
            self._fail(exc)
            raise
        if finished:
            self._complete()
        return finished

    def wait(self, timeout: timedelta | float | None = None) -> bool:
        """Block until the collective completed; re-raise its error. Returns True.

        Mirrors: ``torch.distributed.Work.wait``.
        """
        if self._error is not None:
            if not self._completed:
                self._fail(self._error)
            raise self._error
        if not self._completed:
            seconds = self._group._timeout_s if timeout is None else (
                timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout))
            try:
                self._request.wait(seconds)
            except BaseException as exc:  # noqa: BLE001
                self._fail(exc)
                raise
            self._complete()
        return True

    def is_completed(self) -> bool:
        """Mirrors: ``torch.distributed.Work.is_completed`` (polls the engine once)."""
        if not self._completed and self._error is None:
            try:
                self._poll()
            except Exception:  # noqa: BLE001 - reported through exception()
                pass
        return self._completed

    def is_success(self) -> bool:
        """Mirrors: ``torch.distributed.Work.is_success``."""
        return self.is_completed() and self._error is None

    def exception(self) -> BaseException | None:
        """Mirrors: ``torch.distributed.Work.exception``."""
        return self._error

    def result(self) -> list[Any]:
        """The output tensors. Mirrors: ``torch.distributed.Work.result``."""
        return list(self._outputs)

    def get_future(self) -> Future[list[Any]]:
        """A future resolving to the list of output tensors.

        Mirrors: ``torch.distributed.Work.get_future``.
        """
        return self._future
