"""The re-trace timing rules alone: no torch, no widget."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from jupyter_tracejit.widgets.retrace import Retracer, default_scheduler

from .fakes import FakeClock


class Log:
    """Records the callbacks in order; ``work`` can be given a side effect."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []
        self.side_effect: Any = None

    def work(self, payload: Any) -> str:
        self.events.append(("work", payload))
        if self.side_effect is not None:
            effect, self.side_effect = self.side_effect, None
            effect()
        return f"result of {payload}"

    def retracer(self, clock: FakeClock, debounce: float = 0.3) -> Retracer[Any, str]:
        return Retracer(
            self.work,
            on_start=lambda: self.events.append(("start", None)),
            on_result=lambda r: self.events.append(("result", r)),
            on_error=lambda e: self.events.append(("error", f"{type(e).__name__}: {e}")),
            debounce=debounce,
            scheduler=clock,
        )


def test_a_burst_of_requests_runs_once_with_the_last_payload(clock: FakeClock) -> None:
    log = Log()
    r = log.retracer(clock)
    r.request("a")
    clock.advance(0.2)
    r.request("b")  # restarts the wait
    clock.advance(0.2)
    assert log.events == []
    assert r.pending
    clock.advance(0.1)
    assert log.events == [("start", None), ("work", "b"), ("result", "result of b")]
    assert not r.pending
    assert r.generation == 2


def test_start_is_reported_one_scheduler_turn_before_the_work(clock: FakeClock) -> None:
    log = Log()
    r = log.retracer(clock, debounce=0.0)
    r.request("a")
    clock.run_first_scheduled()  # the start, not the work
    assert log.events == [("start", None)]
    assert [t.due for t in clock.pending] == [0.0]
    clock.advance(0)
    assert log.events[-1] == ("result", "result of a")


def test_a_result_that_finishes_after_a_newer_request_is_dropped(clock: FakeClock) -> None:
    log = Log()
    r = log.retracer(clock)
    r.request("old")
    log.side_effect = lambda: r.request("new")  # arrives while "old" is being worked on
    clock.advance(0.3)
    assert ("result", "result of old") not in log.events
    assert r.dropped == 1
    assert r.pending
    clock.advance(0.3)
    assert log.events[-1] == ("result", "result of new")
    assert [e for e in log.events if e[0] == "work"] == [("work", "old"), ("work", "new")]


def test_work_superseded_before_it_starts_never_runs(clock: FakeClock) -> None:
    log = Log()
    r = log.retracer(clock, debounce=0.0)
    r.request("a")
    clock.run_first_scheduled()  # "a" has started (status would say tracing), its work is queued
    r.request("b")
    clock.advance(0)
    assert [e for e in log.events if e[0] == "work"] == [("work", "b")]


def test_failures_go_to_on_error_never_to_the_loop(clock: FakeClock) -> None:
    log = Log()
    r = log.retracer(clock)

    def boom() -> None:
        raise RuntimeError("model exploded")

    log.side_effect = boom
    r.request("a")
    clock.advance(0.3)
    assert log.events[-1] == ("error", "RuntimeError: model exploded")
    assert not r.pending

    # a failing result handler is reported as an error too
    bad = Retracer(
        log.work,
        on_start=lambda: None,
        on_result=lambda _: 1 / 0,
        on_error=lambda e: log.events.append(("error", type(e).__name__)),
        scheduler=clock,
    )
    bad.request("b")
    clock.advance(0.3)
    assert log.events[-1] == ("error", "ZeroDivisionError")

    # and a failing error handler is only logged
    worst = Retracer(log.work, on_start=lambda: 1 / 0, on_result=print, on_error=lambda e: 1 / 0, scheduler=clock)
    worst.request("c")
    clock.advance(0.3)


def test_cancel_forgets_everything(clock: FakeClock) -> None:
    log = Log()
    r = log.retracer(clock)
    r.request("a")
    r.cancel()
    clock.advance(1)
    assert log.events == []
    assert not r.pending


def test_a_result_waits_settle_seconds_and_a_cancel_meanwhile_drops_it(clock: FakeClock) -> None:
    log = Log()
    r = Retracer(
        log.work,
        on_start=lambda: log.events.append(("start", None)),
        on_result=lambda x: log.events.append(("result", x)),
        on_error=print,
        debounce=0.3,
        settle=0.1,
        scheduler=clock,
    )
    r.request("a")
    clock.advance(0.3)
    assert log.events == [("start", None), ("work", "a")]  # traced, not delivered yet
    assert r.pending
    clock.advance(0.1)
    assert log.events[-1] == ("result", "result of a") and not r.pending

    # the cancel the front end sent while the kernel was busy is read in the gap: the result is never delivered
    r.request("b")
    clock.advance(0.3)
    assert log.events[-1] == ("work", "b")
    assert r.cancel() is True
    clock.advance(1)
    assert log.events[-1] == ("work", "b") and r.dropped == 0 and not r.pending
    assert r.cancel() is False  # nothing left to cancel


def test_debounce_must_be_a_non_negative_number(clock: FakeClock) -> None:
    with pytest.raises(ValueError, match="debounce must be a number of seconds >= 0, got -1"):
        Log().retracer(clock, debounce=-1)
    with pytest.raises(ValueError, match="got nan"):
        Log().retracer(clock, debounce=float("nan"))
    with pytest.raises(ValueError, match=r"settle must be a number of seconds >= 0, got -0\.1"):
        Retracer(Log().work, on_start=print, on_result=print, on_error=print, settle=-0.1, scheduler=clock)


def test_default_scheduler_runs_now_without_a_loop() -> None:
    ran: list[int] = []
    default_scheduler(5.0, lambda: ran.append(1)).cancel()
    assert ran == [1]
    log = Log()
    r = Retracer(log.work, on_start=lambda: None, on_result=lambda x: log.events.append(("result", x)), on_error=print)
    r.request("a")
    assert log.events[-1] == ("result", "result of a")


def test_default_scheduler_uses_the_running_loop() -> None:
    async def main() -> list[str]:
        log = Log()
        done = asyncio.Event()

        def on_result(x: Any) -> None:
            log.events.append(("result", x))
            done.set()

        r = Retracer(
            log.work,
            on_start=lambda: log.events.append(("start", None)),
            on_result=on_result,
            on_error=print,
            debounce=0.0,
        )
        r.request("a")
        r.request("b")
        assert log.events == []  # nothing runs inside the call: the loop runs it later
        # no clock: the result is awaited (the bound only keeps a broken scheduler from hanging the suite)
        await asyncio.wait_for(done.wait(), timeout=60)
        return [e[0] for e in log.events] + [log.events[-1][1]]

    assert asyncio.run(main()) == ["start", "work", "result", "result of b"]


@pytest.mark.parametrize("escape", [KeyboardInterrupt, SystemExit], ids=lambda e: e.__name__)
def test_an_interrupt_or_exit_in_the_work_is_an_error_not_an_escape(clock: FakeClock, escape: type) -> None:
    # from a loop callback, either would end the kernel (ipykernel's loop does not catch them)
    log = Log()
    r = log.retracer(clock)

    def leave() -> None:
        raise escape()

    log.side_effect = leave
    r.request("a")
    clock.advance(0.3)
    assert log.events[-1] == ("error", f"{escape.__name__}: ")
    assert not r.pending
