"""What a capture magic (:mod:`.magic`) shows: the placeholder that stands for a capture while the kernel is busy
with it (its phases, a cancel), the kernel-free view of a run (``--static``), and the variable that follows the run
an explorer shows. Every output goes through :func:`_display` (tests replace it with a recorder).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator
from typing import Any

from .core.progress import TRACING, phases_to
from .core.run import TraceRun
from .widgets import PROGRESS_MIME, RUN_MIME, TraceExplorer, run_mime_payload, uses_anywidget
from .widgets.explorer_dims import dims_of


def _display(obj: Any, *, raw: bool = False, display_id: str | None = None, update: bool = False) -> None:
    """Every output of the magic goes through here (tests replace it with a recorder); with ``update``, replaces
    the output shown under ``display_id``."""
    from IPython.display import display

    display(obj, raw=raw, display_id=display_id, update=update)


def progress_bundle(name: str, started: float, phase: str = TRACING) -> dict[str, Any]:
    """The placeholder shown while the kernel traces: our renderer counts the seconds (and offers a cancel), the
    text gives the phase and the start. Where the explorer is the anywidget one, our renderers are not on the page:
    the text only."""
    clock = time.strftime("%H:%M:%S", time.localtime(started))
    bundle: dict[str, Any] = {"text/plain": f"{phase} {name}… (started {clock})"}
    if not uses_anywidget():
        bundle[PROGRESS_MIME] = {"target": name, "started": started, "phase": phase}
    return bundle


class Placeholder:
    """The output that stands for a capture while the kernel is busy with it: what is captured, the phase it is
    in (updated as the capture enters each one) and since when; its result then replaces it."""

    def __init__(self, name: str, phase: str = TRACING) -> None:
        self.name = name
        self.phase = phase
        self.started = time.time()
        self.display_id = uuid.uuid4().hex
        #: the user interrupted the capture (the placeholder's cancel, the kernel's interrupt): nothing to show
        self.cancelled = False

    def show(self) -> None:
        _display(progress_bundle(self.name, self.started, self.phase), raw=True, display_id=self.display_id)

    def enter(self, phase: str) -> None:
        """The capture entered ``phase`` (a :func:`~.core.progress.phases_to` listener)."""
        if phase != self.phase:
            self.phase = phase
            self.replace(progress_bundle(self.name, self.started, phase), raw=True)

    def replace(self, obj: Any, *, raw: bool = False) -> None:
        _display(obj, raw=raw, display_id=self.display_id, update=True)

    def stopped(self, how: str) -> str:
        """One line for a capture that did not finish: "cancelled after 3.2 s (checking BertModel)"."""
        return f"{how} after {time.time() - self.started:.1f} s ({self.phase} {self.name})"


@contextlib.contextmanager
def progress_shown(name: str, phase: str = TRACING) -> Iterator[Placeholder]:
    """Show a :class:`Placeholder` for the capture made inside the block, following its phases.

    An interrupt (the placeholder's cancel button interrupts the kernel) ends the block quietly: the capture has
    put the model back, the placeholder becomes one "cancelled after ..." line and ``cancelled`` is set, so the
    caller stores and shows nothing. Anything else that escapes the capture still leaves no placeholder counting.
    """
    placeholder = Placeholder(name, phase)
    placeholder.show()
    try:
        with phases_to(placeholder.enter):
            yield placeholder
    except KeyboardInterrupt:
        placeholder.cancelled = True
        placeholder.replace({"text/plain": placeholder.stopped("cancelled")}, raw=True)
    except BaseException:
        placeholder.replace({"text/plain": placeholder.stopped("stopped")}, raw=True)
        raise


def follow_runs(explorer: TraceExplorer, namespace: dict[str, Any], name: str) -> None:
    """Keep ``namespace[name]`` on the run the explorer shows, while it holds the explorer's previous run."""
    shown = [explorer.run]

    def on_run(_change: Any) -> None:
        if namespace.get(name) is shown[0] and explorer.run is not None:
            namespace[name] = explorer.run
        shown[0] = explorer.run

    explorer.observe(on_run, names="run_json")


def summary_lines(run: TraceRun) -> str:
    """The run's summary, and for a run with dynamic dims (an export's) the ``--dynamic`` flags that capture it
    again, to paste (the explorer shows them above its options bar); none for a run refused for its arguments (its
    dims may be what was wrong)."""
    refused = run.error is not None and run.error.phase == "arguments"
    flags = "" if refused else dims_of(run).get("flags", "")
    return run.summary() + (f"\nas %{run.capture_noun} flags: {flags}" if flags else "")


def static_bundle(run: TraceRun) -> dict[str, Any]:
    """The kernel-free view of a run (``--static``): its JSON for our MIME renderer (not where the explorer is the
    anywidget one: no renderer reads it there), its summary (with its ``--dynamic`` flags), and HTML when the run
    can render itself as HTML."""
    bundle: dict[str, Any] = {"text/plain": summary_lines(run)}
    if not uses_anywidget():
        bundle[RUN_MIME] = run_mime_payload(run.to_json())
    to_html = getattr(run, "to_html", None)
    if callable(to_html):
        bundle["text/html"] = to_html()
    return bundle
