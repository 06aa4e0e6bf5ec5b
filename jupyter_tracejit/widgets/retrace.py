"""Debounced, superseding re-traces: when to trace again, never how.

Kept free of torch and ipywidgets so the timing rules can be tested with a fake clock:

* a request waits ``debounce`` seconds; a newer request restarts the wait (one trace per burst of edits);
* every request takes a new *generation*; work whose generation is no longer the newest is skipped
  before it starts, and its result is dropped if it finishes late, so a stale trace is never shown;
* a result is delivered ``settle`` seconds after the work, not in the same callback: the work blocks the kernel,
  so a cancel (or a newer request) sent meanwhile is only read after it, and this gap lets it be read in time
  to drop the result (:meth:`Retracer.cancel`);
* ``on_start`` runs in its own callback, one scheduler turn before the work, so a front end receives
  "tracing" before the kernel blocks in the trace;
* nothing escapes to the event loop (or the kernel): a failure in the work (``KeyboardInterrupt`` and
  ``SystemExit`` included: an escape from a loop callback would end the kernel) or in our callbacks goes to
  ``on_error``, and a failure there is logged.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

log = logging.getLogger(__name__)

P = TypeVar("P")
R = TypeVar("R")


class Handle(Protocol):
    """What a scheduler returns: something that can be cancelled (``asyncio.TimerHandle`` is one)."""

    def cancel(self) -> object: ...


#: ``scheduler(delay_seconds, callback) -> Handle``: run ``callback`` once, ``delay_seconds`` from now
Scheduler = Callable[[float, Callable[[], None]], Handle]


class _Done:
    """Handle of a callback that already ran."""

    def cancel(self) -> None:
        pass


def default_scheduler(delay: float, fn: Callable[[], None]) -> Handle:
    """The running asyncio loop's ``call_later`` (ipykernel runs one); without a loop, run ``fn`` now."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        # plain Python (a script, a test without a loop): no way to wait without blocking, so don't wait
        fn()
        return _Done()
    return loop.call_later(delay, fn)


class _Forwarded:
    """Handle of a callback scheduled on another thread's loop: the timer exists only once that loop has run the
    scheduling, so a cancel before then is remembered, and a cancel after it is passed to that loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._timer: asyncio.TimerHandle | None = None
        self._cancelled = False

    def arm(self, delay: float, fn: Callable[[], None]) -> None:
        with self._lock:
            if not self._cancelled:
                self._timer = self._loop.call_later(delay, fn)

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            timer, self._timer = self._timer, None
        if timer is not None:
            self._loop.call_soon_threadsafe(timer.cancel)


def loop_scheduler(loop: asyncio.AbstractEventLoop) -> Scheduler:
    """Schedule on ``loop`` from any thread.

    JupyterLab sends widget messages over kernel subshells: their handlers (an option click) run on a subshell's
    thread, while the user's cells run on the main one. The re-trace must run on the main thread anyway: there
    the kernel's Interrupt reaches it (Python raises KeyboardInterrupt only on the main thread), and it never runs
    beside a cell that uses the same model.
    """

    def schedule(delay: float, fn: Callable[[], None]) -> Handle:
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is loop:
            return loop.call_later(delay, fn)
        handle = _Forwarded(loop)
        loop.call_soon_threadsafe(handle.arm, delay, fn)
        return handle

    return schedule


class Retracer(Generic[P, R]):
    """Run ``work(payload)`` for the newest request only, ``debounce`` seconds after the last one.

    ``on_start()`` is called when the work is about to run; ``on_result(result)`` with the result of
    the newest request; ``on_error(exc)`` when the work (or one of the callbacks) raised.
    """

    def __init__(
        self,
        work: Callable[[P], R],
        *,
        on_start: Callable[[], None],
        on_result: Callable[[R], None],
        on_error: Callable[[BaseException], None],
        debounce: float = 0.3,
        settle: float = 0.0,
        scheduler: Scheduler | None = None,
    ) -> None:
        if not debounce >= 0:  # also rejects NaN
            raise ValueError(f"debounce must be a number of seconds >= 0, got {debounce!r}")
        if not settle >= 0:
            raise ValueError(f"settle must be a number of seconds >= 0, got {settle!r}")
        self._work = work
        self._on_start = on_start
        self._on_result = on_result
        self._on_error = on_error
        self.debounce = float(debounce)
        self.settle = float(settle)
        self._schedule: Scheduler = scheduler if scheduler is not None else default_scheduler
        self._generation = 0
        self._handle: Handle | None = None
        #: generation of the request being waited on or worked on; None when idle
        self._pending: int | None = None
        #: how many results (or errors) were dropped because a newer request superseded them
        self.dropped = 0

    @property
    def generation(self) -> int:
        """The newest request's number (0 before the first)."""
        return self._generation

    @property
    def pending(self) -> bool:
        """True from a request until its work has finished (or it was superseded / cancelled)."""
        return self._pending is not None

    def request(self, payload: P, *, debounce: float | None = None) -> int:
        """Ask for ``work(payload)``; supersedes every earlier request. Returns the new generation."""
        self._generation += 1
        generation = self._generation
        self._pending = generation
        self._cancel_handle()
        delay = self.debounce if debounce is None else debounce
        self._handle = self._schedule(delay, lambda: self._start(generation, payload))
        return generation

    def cancel(self) -> bool:
        """Forget every request: nothing scheduled runs, and a result not yet delivered is dropped. Returns whether
        a request was pending."""
        was_pending = self._pending is not None
        self._generation += 1
        self._pending = None
        self._cancel_handle()
        return was_pending

    def _cancel_handle(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            handle.cancel()

    def _start(self, generation: int, payload: P) -> None:
        if generation != self._generation:
            return
        try:
            self._on_start()
        except Exception as exc:
            self._finish(generation, error=exc)
            return
        # a separate turn of the loop, so the state set by on_start is sent before the work blocks it
        self._handle = self._schedule(0.0, lambda: self._run(generation, payload))

    def _run(self, generation: int, payload: P) -> None:
        if generation != self._generation:
            return
        try:
            result = self._work(payload)
        except BaseException as exc:  # KeyboardInterrupt (an interrupt), SystemExit from user code: a result too
            self._deliver(generation, error=exc)
            return
        self._deliver(generation, result=result)

    def _deliver(self, generation: int, result: R | None = None, error: BaseException | None = None) -> None:
        if self.settle <= 0:
            self._finish(generation, result, error)
            return
        # a turn of the loop later: a cancel that arrived during the work is handled first (see the module doc)
        self._handle = self._schedule(self.settle, lambda: self._finish(generation, result, error))

    def _finish(self, generation: int, result: R | None = None, error: BaseException | None = None) -> None:
        if generation != self._generation:
            # a newer request (or a cancel) arrived while this one worked: its result would be out of date
            self.dropped += 1
            return
        self._pending = None
        self._handle = None
        try:
            if error is not None:
                self._on_error(error)
            else:
                self._on_result(result)  # type: ignore[arg-type]  # result is set whenever error is None
        except Exception as exc:
            if error is not None:
                log.exception("re-trace error handler failed")
                return
            try:
                self._on_error(exc)
            except Exception:
                log.exception("re-trace error handler failed")


__all__ = ["Handle", "Retracer", "Scheduler", "default_scheduler", "loop_scheduler"]
