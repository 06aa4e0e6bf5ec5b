"""The HTML page of a :class:`~..core.run_diff.RunDiff` (``tracejit diff old.pt new.pt -o diff.html``): one
self-contained file, no script, read offline.

It is built from the report page's parts (:mod:`.page`): the same Content-Security-Policy, the same stylesheet
(``report.css``: the JupyterLab theme variables, light and dark, and the explorer's tables and badges) and the diff's
JSON embedded the same safe way, for tools. The body is the verdict, one row per changed module scope with what
changed there, and one row per parameter that differs. Every text is escaped.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from ..core.words import plural
from .page import dark_badges, script_free_page

if TYPE_CHECKING:
    from ..core.run_diff import RunDiff

#: the ``<script type="application/json">`` element holding the diff's JSON
DIFF_ELEMENT_ID = "tracejit-diff"

_STYLE = """
.tracejit-diff h2 { font-size: var(--jp-ui-font-size1); margin: 14px 0 4px; }
.tracejit-diff th { text-align: left; font-weight: 600; padding: 1px 4px;
  border-bottom: var(--jp-border-width) solid var(--jp-border-color1); }
.tracejit-diff .number { text-align: right; }
.tracejit-diff ul { margin: 0; padding-left: 16px; }
.tracejit-diff .jp-TraceExplorer-badge { margin-right: 6px; }
/* the badges' dark colours: the explorer keys them on data-jp-theme-light, which this script-free page never sets */
""" + dark_badges("tracejit-diff")


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _scopes(diff: RunDiff) -> list[str]:
    if not diff.scopes:
        return ['<p class="jp-TraceExplorer-empty">The graphs match.</p>']
    rows = [
        "<tr><th>module</th><th>method</th><th>added</th><th>removed</th><th>changed</th><th>constants</th>"
        "<th>what</th></tr>"
    ]
    for s in diff.scopes:
        details = "".join(f"<li>{_e(d)}</li>" for d in s.details[:20])
        more = f"<li>… {len(s.details) - 20} more</li>" if len(s.details) > 20 else ""
        rows.append(
            f'<tr><td class="jp-TraceExplorer-mono">{_e(s.scope or "(top level)")}</td><td>{_e(s.method)}</td>'
            f"<td>{s.added}</td><td>{s.removed}</td><td>{s.changed}</td>"
            f'<td class="jp-TraceExplorer-mono">{_e(", ".join(s.constants))}</td>'
            f"<td><ul>{details}{more}</ul></td></tr>"
        )
    notes = []
    if diff.downstream:
        notes.append(
            f'<p class="jp-TraceExplorer-muted">{plural(diff.downstream, "more op")} '
            + ("differs only because it reads" if diff.downstream == 1 else "differ only because they read")
            + " what these changes computed.</p>"
        )
    return ['<table class="jp-TraceExplorer-table">', *rows, "</table>", *notes]


def _parameters(diff: RunDiff) -> list[str]:
    if not diff.parameters:
        compared = "names and types" + (f", values within {diff.atol:g}" if diff.atol is not None else "")
        return [f'<p class="jp-TraceExplorer-empty">The parameters match ({_e(compared)}).</p>']
    rows = [
        '<tr><th>parameter</th><th>change</th><th>old</th><th>new</th><th class="number">max abs difference</th></tr>'
    ]
    for p in diff.parameters:
        gap = "" if p.max_abs is None else f"{p.max_abs:.3g}"
        rows.append(
            f'<tr><td class="jp-TraceExplorer-mono">{_e(p.name)}</td><td>{_e(p.change)}</td>'
            f'<td class="jp-TraceExplorer-mono">{_e(p.before)}</td><td class="jp-TraceExplorer-mono">{_e(p.after)}'
            f'</td><td class="number">{_e(gap)}</td></tr>'
        )
    return ['<table class="jp-TraceExplorer-table">', *rows, "</table>"]


def render_diff_html(diff: RunDiff) -> str:
    """The page (see the module's docstring)."""
    level, label = (
        ("error", "not compared") if diff.error else ("ok", "same") if diff.same else ("warning", "different")
    )
    title = f"{diff.old} -> {diff.new}: {label} · jupyter-tracejit"
    methods = [f"method {m} added" for m in diff.methods_added] + [f"method {m} removed" for m in diff.methods_removed]
    if diff.error or diff.same:
        headline = diff.summary().splitlines()[0]
    else:
        counts = [(len(diff.scopes), "module scope changed", "module scopes changed")]
        counts += [(len(diff.parameters), "parameter differs", "parameters differ")]
        counts += [(len(methods), "method added or removed", "methods added or removed")]
        headline = ", ".join(plural(n, one, many) for n, one, many in counts if n)
    body = [
        f'<p><span class="jp-TraceExplorer-badge jp-mod-{level}">{_e(label)}</span>{_e(headline)}</p>',
        '<table class="jp-TraceExplorer-table">',
        f'<tr><th>old</th><td class="jp-TraceExplorer-mono">{_e(diff.old)}</td><td>{_e(diff.old_summary)}</td></tr>',
        f'<tr><th>new</th><td class="jp-TraceExplorer-mono">{_e(diff.new)}</td><td>{_e(diff.new_summary)}</td></tr>',
        "</table>",
    ]
    if diff.error:
        body.append(f'<p class="jp-TraceExplorer-error">{_e(diff.error)}</p>')
    else:
        compared = "a trace against an export" if diff.compared_as == "capture" else "node for node"
        body += [f"<h2>Graphs, by module ({_e(compared)})</h2>", *_scopes(diff)]
        body += [f"<p>{_e(m)}</p>" for m in methods]
        body += ["<h2>Parameters and buffers</h2>", *_parameters(diff)]
        if diff.values_note:
            body.append(f'<p class="jp-TraceExplorer-muted">{_e(diff.values_note)}</p>')
    return script_free_page(
        title=title,
        style=_STYLE,
        page_class="tracejit-diff",
        heading=f"{diff.old} → {diff.new}",
        meta="jupyter-tracejit diff",
        body=body,
        element_id=DIFF_ELEMENT_ID,
        data=diff.to_json(),
    )


__all__ = ["DIFF_ELEMENT_ID", "render_diff_html"]
