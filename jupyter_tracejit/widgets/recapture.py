"""What the explorer does when the front end asks (its messages), and the capture work its :class:`~.retrace.Retracer`
runs: a re-trace or re-export with the options bar's values (and the dims editor's, :mod:`.explorer_dims`), or the
draft of the export on screen (``run.draft()``).

The work runs on the kernel's main thread (the Retracer schedules it there), blocking it as a cell would: the
kernel's Interrupt stops it, and the explorer's ``cancel`` message drops its result. While it runs, the explorer's
``phase`` trait says what the capture is doing (``exporting``, ``checking``, ``draft-exporting``: the phases of
:mod:`..core.progress`), and ``status`` is ``tracing``.

A draft works on a copy of the run on screen, joined there and shown when it arrives: a cancel leaves the history's
run as it was. The copy keeps the run's id: the history's entry for it is replaced by the drafted run.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from typing import TYPE_CHECKING, Any

from ..core.progress import phases_to
from ..core.registry import backend
from ..core.run import TraceRun
from .explorer_dims import DIMS, request_dims
from .explorer_options import CHECK_INPUTS_ENABLED
from .kernel_activity import as_kernel_work

if TYPE_CHECKING:
    from .explorer import TraceExplorer

#: the key of a Retracer payload that asks for the draft of the run with that id (any other payload is options)
DRAFT = "__draft__"
#: the messages the front end sends (explorer.schema.json ``ExplorerRequest``)
MESSAGES = ("retrace", "cancel", "show_run", "compare", "draft", "dims")


def on_front_end_msg(ex: TraceExplorer, content: Any) -> None:
    """One message from the front end; a bad one is said in the widget (``status_message``), never raised."""
    try:
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "retrace":
            ex.retrace()
        elif kind == "cancel":
            ex.cancel()
        elif kind == "show_run":
            ex.show_run(content.get("run_id"))
        elif kind == "compare":
            ex.compare(content.get("a"), content.get("b"), content.get("method", "forward"))
        elif kind == "draft":
            ex.draft()
        elif kind == "dims":
            request_dims(ex, content.get("specs"))
        else:
            raise ValueError(
                f"unknown message type {kind!r} from the front end; expected one of: {', '.join(MESSAGES)}"
            )
    except (ValueError, KeyError, RuntimeError, TypeError) as e:
        ex._fail(str(e))
    except Exception as e:  # a bug of ours: show it, keep the details in the log, never raise into the kernel
        ex.log.warning("trace explorer: handling %r failed", content, exc_info=True)
        ex._fail(f"internal error: {type(e).__name__}: {e}")


def draft_problem(run: TraceRun | None) -> str | None:
    """Why the run on screen cannot be drafted (a message naming what to do), or None."""
    if run is None or not backend(run.backend).has_action("draft"):
        return "the draft is torch.export's draft_export: this explorer shows no export run"
    if run.request is None:
        return (
            "this run holds no live model (it was loaded from JSON or a file): export again with "
            "draft='on_failure' to get its draft"
        )
    return None


def drafted_copy(run: TraceRun) -> TraceRun:
    """A copy of ``run`` that ``run.draft()`` can change without changing ``run`` (its graphs, records, findings
    and timings its own; the model, the request and the program shared)."""
    return dataclasses.replace(
        run,
        graphs=dict(run.graphs),
        findings=list(run.findings),
        timings=dict(run.timings),
        records=copy.deepcopy(run.records),
    )


def work(ex: TraceExplorer, payload: dict[str, Any]) -> TraceRun:
    """The Retracer's work: the draft of a history run (``{DRAFT: run_id}``), else a capture with these options;
    the phases go to the explorer's ``phase`` trait."""
    with phases_to(lambda phase: setattr(ex, "phase", phase)):
        if DRAFT in payload:
            original = ex._history_run(payload[DRAFT])
            with as_kernel_work():  # the kernel's Interrupt stops it, and the status bar says busy
                drafted = drafted_copy(original).draft()
            ex._traced_with[drafted.run_id] = ex._options_of(original)
            return drafted
        return _capture(ex, payload)


def _capture(ex: TraceExplorer, payload: dict[str, Any]) -> TraceRun:
    assert ex._request is not None
    options = {k: v for k, v in payload.items() if k != DIMS}
    # the bar's options; the read-only ones (an export's dynamic_shapes and check inputs) stay the request's, or
    # become what the dims editor asked for (explorer_dims.py)
    kwargs = {k: options[k] for k in ex._bar.keys if k != CHECK_INPUTS_ENABLED}
    kwargs.update(payload.get(DIMS, {}))
    if CHECK_INPUTS_ENABLED in ex._bar.keys:
        chosen = [c for c, on in zip(ex._check_sets, options[CHECK_INPUTS_ENABLED], strict=True) if on]
        # none chosen: None, which checks with the example inputs as torch does by default
        kwargs["check_inputs"] = chosen or None
    with as_kernel_work():  # the kernel's Interrupt stops it, and the status bar says busy
        result: TraceRun = diffed(ex, request_on_screen(ex).run(**kwargs))
    ex._traced_with[result.run_id] = dict(options)
    return result


def request_on_screen(ex: TraceExplorer) -> Any:
    """The request a re-capture changes: the run on screen's (its dims, as the dims editor left them), else the
    explorer's first."""
    own = ex._current.request if ex._current is not None else None
    return own if own is not None and type(own) is type(ex._request) else ex._request


def diffed(ex: TraceExplorer, run: TraceRun) -> TraceRun:
    """A re-trace of a diff's new side, diffed again against the same old run (the Diff view stays, now of the new
    capture); any other run as it is."""
    against = ex._current.diff_against if ex._current is not None else None
    if against is None or against.diff.old_run is None:
        return run
    return against.diff.with_new(run).explorer_run()


def on_start(ex: TraceExplorer) -> None:
    with ex.hold_sync():
        ex.status = "tracing"
        ex.status_since = time.time()


def on_result(ex: TraceExplorer, run: TraceRun) -> None:
    with ex.hold_sync():
        ex.phase = ""
        # the run on screen with its draft joined (same id): the draft worked, whatever the run's own error says
        drafted = ex._current is not None and run.run_id == ex._current.run_id
        if run.error is not None and ex._current is not None and ex._current.error is None and not drafted:
            # keep the last good run on screen; the failure is in the status and the history
            ex._remember(run)
            ex.status_message = str(run.error)
            ex.status = "error"
            return
        ex._show(run)
        ex._remember(run)
        failed = run.error is not None and not drafted
        ex.status_message = str(run.error) if failed else ""
        ex.status = "error" if failed else "idle"


def on_error(ex: TraceExplorer, exc: BaseException) -> None:
    ex.phase = ""
    if isinstance(exc, KeyboardInterrupt):
        ex._fail("re-trace interrupted: the run on screen is the one before it")
        return
    if isinstance(exc, SystemExit):
        ex._fail(f"re-trace stopped: the traced code called exit ({exc.code!r}); the kernel keeps running")
        return
    ex.log.warning("trace explorer: re-trace failed", exc_info=exc)
    ex._fail(f"re-trace failed: {type(exc).__name__}: {exc}")


__all__ = ["DRAFT", "MESSAGES", "draft_problem", "drafted_copy", "on_front_end_msg", "work"]
