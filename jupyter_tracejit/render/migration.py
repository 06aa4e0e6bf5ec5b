"""A migration report (``tracejit migrate``) as the terminal's table and as one offline HTML page.

The page is built like the diff's (:mod:`.diff_page`): no script, the report stylesheet (JupyterLab's theme
variables, light and dark), the same Content-Security-Policy, the report's JSON embedded for tools. One row per
model: its status, where export refused it or which dims it specialised (each at its line), the export check's
verdict, how many of the trace's ops the export matched, the timings, and against a baseline what changed. The
model's name links its explorer page (the offline explorer of its export, with the trace beside it), written
beside the report. Every text is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .page import dark_badges, script_free_page

if TYPE_CHECKING:
    from ..migrate.report import Change, MigrationReport, ModelResult

#: the ``<script type="application/json">`` element holding the report's JSON
REPORT_ELEMENT_ID = "tracejit-migration"
#: a status's badge colour (the explorer's badge classes)
_LEVEL = {"ok": "ok", "warnings": "warning", "check_failed": "error", "refused": "error", "not_run": "error"}

_STYLE = """
.tracejit-migration th { text-align: left; font-weight: 600; padding: 2px 6px; vertical-align: bottom;
  border-bottom: var(--jp-border-width) solid var(--jp-border-color1); }
.tracejit-migration table { width: 100%; }
.tracejit-migration td { padding: 3px 6px; vertical-align: top; }
.tracejit-migration td.where { max-width: 48em; overflow-wrap: anywhere; }
.tracejit-migration td.nowrap { white-space: nowrap; }
.tracejit-migration details summary { cursor: pointer; color: var(--jp-ui-font-color2); }
.tracejit-migration tr + tr td { border-top: var(--jp-border-width) solid var(--jp-border-color2); }
.tracejit-migration .number { text-align: right; white-space: nowrap; }
.tracejit-migration .jp-TraceExplorer-badge { white-space: nowrap; }
.tracejit-migration a { color: var(--jp-content-link-color); }
.tracejit-migration .detail { color: var(--jp-ui-font-color2); }
.tracejit-migration .change-regressed { color: var(--jp-error-color1); font-weight: 600; }
.tracejit-migration .change-improved { color: var(--jp-success-color1); }
.tracejit-migration ul { margin: 0; padding-left: 16px; }
""" + dark_badges("tracejit-migration")


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def where_text(m: ModelResult) -> str:
    """The refusal's line and exception, or the specialised dims at their lines; ``-`` for neither."""
    if m.refusal is not None:
        place = m.refusal_label if m.status == "refused" else "not run"
        return f"{place}: {m.refusal.type}: {m.refusal.message}"
    if m.specialized:
        return "; ".join(f"{s.dim} = {s.value} at {s.place.label}" for s in m.specialized)
    return "-"


def coverage_text(m: ModelResult) -> str:
    c = m.coverage
    return f"{c.share:.0%} ({c.matched}/{c.trace_ops})" if c is not None else "-"


def seconds(m: ModelResult, key: str = "total") -> str:
    value = m.timings.get(key)
    return f"{value:.1f} s" if value is not None else "-"


def format_table(report: MigrationReport, changes: Sequence[Change] = (), baseline: str = "", width: int = 60) -> str:
    """The terminal's table: one line per model, then the summary, and against a baseline what regressed."""
    by_name = {c.name: c for c in changes}
    rows: list[tuple[str, ...]] = [("model", "status", "refused at / specialised", "check", "trace ops", "time")]
    if changes:
        rows[0] += ("baseline",)
    for m in report.models:
        where = where_text(m)
        where = where if len(where) <= width else where[: width - 1] + "…"
        row: tuple[str, ...] = (m.name, m.status_words, where, m.check_text or "-", coverage_text(m), seconds(m))
        if changes:
            change = by_name.get(m.name)
            row += (change.kind if change is not None else "-",)
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.append(report.summary())
    if changes:
        kinds = {k: sum(1 for c in changes if c.kind == k) for k in ("regressed", "improved", "same", "new")}
        lines.append(f"against {baseline or 'the baseline'}: " + ", ".join(f"{n} {k}" for k, n in kinds.items() if n))
    for c in changes:
        if c.kind == "regressed":
            lines.append(f"REGRESSED {c.name}: " + "; ".join(c.reasons))
    return "\n".join(lines)


def _row(m: ModelResult, change: Change | None, with_baseline: bool) -> str:
    level = _LEVEL.get(m.status, "error")
    name = f'<a href="{_e(m.page)}">{_e(m.name)}</a>' if m.page else _e(m.name)
    where = [f'<span class="jp-TraceExplorer-mono">{_e(where_text(m))}</span>']
    if m.refusal is not None and m.refusal.code:
        where.append(f'<div class="detail jp-TraceExplorer-mono">{_e(m.refusal.code)}</div>')
    if m.refusal is not None and m.refusal.hint:
        where.append(f'<details><summary>hint</summary><div class="detail">{_e(m.refusal.hint)}</div></details>')
    dims = f'<div class="detail jp-TraceExplorer-mono">{_e(" ".join(m.dynamic))}</div>' if m.dynamic else ""
    coverage = _e(coverage_text(m))
    if m.coverage is None and m.coverage_note:
        # "the export recorded no graph (its exception...)": the exception is in the row already
        coverage = f'<span class="detail" title="{_e(m.coverage_note)}">{_e(m.coverage_note.split(" (")[0])}</span>'
    timings = ", ".join(f"{k} {v:.2f} s" for k, v in m.timings.items())
    cells = [
        f'<td>{name}<div class="detail jp-TraceExplorer-mono">{_e(m.target)}</div>{dims}</td>',
        f'<td><span class="jp-TraceExplorer-badge jp-mod-{level}" title="{_e("; ".join(m.reasons))}">'
        f"{_e(m.status_words)}</span></td>",
        f'<td class="where">{"".join(where)}</td>',
        f'<td class="nowrap">{_e(m.check_text or "-")}</td>',
        f'<td class="number" title="{_e(m.trace)}">{coverage}</td>',
        f'<td class="number" title="{_e(timings)}">{_e(seconds(m))}</td>',
    ]
    if with_baseline:
        kind = change.kind if change is not None else "-"
        reasons = "".join(f"<li>{_e(r)}</li>" for r in (change.reasons if change is not None else []))
        cells.append(f'<td><span class="change-{_e(kind)}">{_e(kind)}</span><ul>{reasons}</ul></td>')
    return f'<tr data-model="{_e(m.name)}" data-status="{_e(m.status)}">{"".join(cells)}</tr>'


def render_migration_html(report: MigrationReport, changes: Sequence[Change] = (), baseline: str = "") -> str:
    """The page (see the module's docstring)."""
    by_name = {c.name: c for c in changes}
    regressed = [c for c in changes if c.kind == "regressed"]
    head = ["model", "status", "refused at / specialised", "export check", "trace ops matched", "time"]
    if changes:
        head.append(f"against {baseline or 'the baseline'}")
    verdict = (
        f'<p class="change-regressed">{len(regressed)} regressed against {_e(baseline)}</p>'
        if regressed
        else f"<p>nothing regressed against {_e(baseline)}</p>"
        if changes
        else ""
    )
    body = [
        f"<p>{_e(report.summary())} · torch {_e(report.torch_version)} · {_e(report.created)}</p>",
        verdict,
        '<p class="jp-TraceExplorer-muted">Each model was exported with torch.export and traced with '
        "torch.jit.trace on the same inputs; a model's name opens its explorer (the export, the trace beside it).</p>",
        '<table class="jp-TraceExplorer-table">',
        "<tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>",
        *(_row(m, by_name.get(m.name), bool(changes)) for m in report.models),
        "</table>",
    ]
    return script_free_page(
        title=f"Migration to torch.export: {report.summary()} · jupyter-tracejit",
        style=_STYLE,
        page_class="tracejit-migration",
        heading="Migration to torch.export",
        meta="jupyter-tracejit migrate",
        body=body,
        element_id=REPORT_ELEMENT_ID,
        data=report.to_json(),
    )


__all__ = ["REPORT_ELEMENT_ID", "coverage_text", "format_table", "render_migration_html", "where_text"]
