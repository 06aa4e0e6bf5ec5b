"""Test doubles for the widgets: a recording comm (no kernel) and a clock advanced by hand.

ipywidgets' own ``widgets/tests/utils.py`` needs ipykernel and replaces ``Widget._repr_mimebundle_``,
which the display tests need; this keeps its idea (a dummy comm that records what is sent) in a few lines.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ipywidgets


class RecordingComm:
    """Stands in for a kernel comm: remembers the open state and every message sent to the front end."""

    #: ipywidgets only sends when the comm has a kernel
    kernel = "Truthy"

    def __init__(self, **kwargs: Any) -> None:
        self.comm_id = kwargs.get("comm_id") or uuid.uuid4().hex
        self.open_data = kwargs.get("data") or {}
        self.messages: list[dict[str, Any]] = []

    def open(self, *args: Any, **kwargs: Any) -> None:
        pass

    def on_msg(self, callback: Callable[..., Any]) -> None:
        pass

    def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        self.messages.append(data)

    def close(self, *args: Any, **kwargs: Any) -> None:
        pass

    def updates(self, key: str) -> list[Any]:
        """Values of ``key`` sent in state updates, in order."""
        return [m["state"][key] for m in self.messages if m.get("method") == "update" and key in m["state"]]


@dataclass
class _Timer:
    due: float
    seq: int
    fn: Callable[[], None]
    cancelled: bool = False

    def cancel(self) -> None:
        self.cancelled = True


@dataclass
class FakeClock:
    """A scheduler for ``Retracer`` / ``TraceExplorer``: callbacks run only when the test advances time."""

    now: float = 0.0
    timers: list[_Timer] = field(default_factory=list)
    _seq: int = 0

    def __call__(self, delay: float, fn: Callable[[], None]) -> _Timer:
        self._seq += 1
        timer = _Timer(self.now + delay, self._seq, fn)
        self.timers.append(timer)
        return timer

    @property
    def pending(self) -> list[_Timer]:
        return [t for t in self.timers if not t.cancelled]

    def advance(self, seconds: float = 0.0) -> None:
        """Move time forward, running every callback that falls due (including ones scheduled meanwhile)."""
        target = self.now + seconds
        while True:
            due = sorted((t for t in self.pending if t.due <= target), key=lambda t: (t.due, t.seq))
            if not due:
                break
            timer = due[0]
            self.timers.remove(timer)
            self.now = max(self.now, timer.due)
            timer.fn()
        self.now = target

    def run_first_scheduled(self) -> None:
        """Run only the first callback scheduled (of those pending), whenever it is due; time stands still."""
        first = min(self.pending, key=lambda t: t.seq)
        self.timers.remove(first)
        first.fn()


def front_end_update(widget: ipywidgets.Widget, **state: Any) -> None:
    """Deliver a state update as if the front end had sent it over the comm."""
    widget._handle_msg({"content": {"data": {"method": "update", "state": state}}, "buffers": []})


def front_end_custom(widget: ipywidgets.Widget, content: dict[str, Any]) -> None:
    """Deliver a custom message as if the front end had sent it (``model.send(content)``)."""
    widget._handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})
