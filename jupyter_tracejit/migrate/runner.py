"""Running a migration: each model of the lists exported with ``tj.export(..., compare_trace=True)`` (the trace of
the same model beside it), one at a time, its row made, its explorer page rendered, and its run dropped before the
next model loads (twenty models are never in memory together)."""

from __future__ import annotations

import contextlib
import datetime
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..cli_target import UsageError
from .listing import Entry
from .report import MigrationReport, ModelResult, not_run, result_of


@dataclass
class Outcome:
    """A model's row, and its explorer page (the offline HTML of its export run) when pages were asked for."""

    result: ModelResult
    page: str | None = None


def run_entry(entry: Entry, *, page: bool = False, draft: str | None = None) -> Outcome:
    """Export one model (after ``torch.manual_seed(entry.seed)``) and make its row; a model that cannot be loaded
    is a row of its own (``not_run``), never an exception."""
    import torch

    from ..core.caller import call_site
    from ..core.export.request import export

    torch.manual_seed(entry.seed)
    try:
        loaded = entry.load()
    except UsageError as exc:
        return Outcome(not_run(entry.name, entry.target, str(exc), entry.dynamic))
    options = entry.export_options()
    if draft is not None:
        options["draft"] = draft
    started = time.perf_counter()
    with call_site(loaded.file, loaded.line) if loaded.file else contextlib.nullcontext():
        run = export(
            loaded.model, loaded.args, loaded.kwargs, check_inputs=loaded.check_inputs, compare_trace=True, **options
        )
    wall = time.perf_counter() - started
    result = result_of(run, entry.name, entry.target, entry.dynamic or _shapes_text(run))
    captured = run.timings.get("total", 0.0)
    result.timings["trace"] = round(max(0.0, wall - captured), 4)  # the trace and its matching, after the export
    result.timings["total"] = round(wall, 4)
    html = None
    if page:
        from ..render.page import render_html

        html = render_html(run)
    return Outcome(result, html)


def _shapes_text(run: Any) -> list[str]:
    shapes = run.options.get("dynamic_shapes")
    return [shapes] if isinstance(shapes, str) and shapes else []


def run_all(
    entries: list[Entry],
    *,
    pages: bool = False,
    draft: str | None = None,
    on_result: Callable[[int, Outcome], None] | None = None,
) -> tuple[MigrationReport, list[str | None]]:
    """Every entry in order: the report, and each model's page (None where none was asked for)."""
    import torch

    report = MigrationReport(
        torch_version=torch.__version__, created=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    )
    html: list[str | None] = []
    for i, entry in enumerate(entries):
        outcome = run_entry(entry, page=pages, draft=draft)
        report.models.append(outcome.result)
        html.append(outcome.page)
        if on_result is not None:
            on_result(i, outcome)
    return report, html


__all__ = ["Outcome", "run_all", "run_entry"]
