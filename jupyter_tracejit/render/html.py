"""A static HTML fragment of a :class:`TraceRun`: the ``text/html`` fallback for places with neither the widget nor
our MIME renderer (nbconvert, GitHub, an untrusted notebook), and the scriptless part of a saved report.

It holds the verdict the explorer's badge shows (``ok``, ``warnings``, ``check failed``, ``failed``) with its reasons,
the summary, the error with its hint, the warnings with their source lines, the check cases with their
root divergences, findings and probe results, and each method's graph: inline SVG when the Graphviz ``dot``
binary is on ``PATH`` (sanitized: no scripts, links, event handlers or styles survive), the IR text otherwise.
Every text comes from user code and is escaped with :func:`html.escape`; nothing here is a link.

Torch-free: it reads the run's data only.
"""

from __future__ import annotations

import html
import shutil
import subprocess
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from ..core.verdict import first_line
from ..core.words import plural
from .dot import to_dot
from .location import location_label

if TYPE_CHECKING:
    from ..core.check import CheckCase
    from ..core.graph import Graph
    from ..core.run import TraceRun

__all__ = ["graph_svg", "location_label", "sanitize_svg", "to_html"]

#: graphs with more nodes are shown as IR text: inline SVG would bloat the notebook (and ``dot`` gets slow)
MAX_SVG_NODES = 500
#: seconds ``dot -Tsvg`` may take before the IR text is shown instead
DOT_TIMEOUT = 20.0
#: lines of IR text shown before ``… N more lines``
MAX_TEXT_LINES = 1500
#: root divergences listed per check case before ``… N more``
MAX_ROOTS = 10

SVG_NS = "http://www.w3.org/2000/svg"
#: elements dropped from Graphviz's SVG with their content (as the frontend's ``svg.ts`` does)
_DROP = {"script", "foreignobject", "iframe", "object", "embed", "use", "image", "style"}

#: scoped to the fragment; sanitizers that strip ``<style>`` (GitHub) just lose the colours
_STYLE = """<style>
.tracejit-html svg { max-width: 100%; height: auto; }
.tracejit-html svg g.node.warning path, .tracejit-html svg g.node.warning polygon { stroke: #f57c00; }
.tracejit-html svg g.node.root path, .tracejit-html svg g.node.root polygon { fill: #ffcdd2; stroke: #b71c1c; }
.tracejit-html svg g.node.downstream path, .tracejit-html svg g.node.downstream polygon { fill: #fff3f3; }
.tracejit-html .tracejit-ok { color: var(--jp-success-color0, #1b5e20); }
.tracejit-html .tracejit-warning { color: var(--jp-warn-color0, #8a4b00); }
.tracejit-html .tracejit-bad, .tracejit-html .tracejit-error { color: var(--jp-error-color0, #b71c1c); }
.tracejit-html .tracejit-detail { white-space: pre-wrap; font-family: monospace; margin: 2px 0; }
</style>"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _code(text: str) -> str:
    return f"<code>{_e(text)}</code>"


def _node(run: TraceRun, graph: Graph | None, node_id: int | None) -> str:
    if graph is None or node_id is None or not 0 <= node_id < len(graph.nodes):
        return "<em>no counterpart</em>"
    n = graph.nodes[node_id]
    out = _code(f"%{n.id} {n.kind}")
    if n.scope:
        out += f" in {_code(n.scope)}"
    if n.source is not None:
        out += f" at {_code(location_label(n.source.file, n.source.line, run.file_names))}"
        if n.source.code:
            out += f": {_code(n.source.code.strip())}"
    return out


def _error(run: TraceRun) -> list[str]:
    e = run.error
    if e is None:
        return []
    parts = [f'<p class="tracejit-bad"><strong>{_e(e.type)}</strong>: {_e(e.message)}</p>']
    if e.file:
        code = f": {_code(e.code.strip())}" if e.code else ""
        parts.append(f"<p>at {_code(location_label(e.file, e.line, run.file_names))}{code}</p>")
    if e.hint:
        parts.append(f"<p><strong>Hint:</strong> {_e(e.hint)}</p>")
    return parts


def _warnings(run: TraceRun) -> list[str]:
    if not run.user_warnings:
        return []
    items = []
    for w in run.user_warnings:
        times = f" ×{w.count}" if w.count > 1 else ""
        code = f": {_code(w.code.strip())}" if w.code else ""
        advice = f"<br><em>{_e(w.advice)}</em>" if w.advice else ""
        # torch's own detail under the first line (an output mismatch's numbers), as the explorer shows it
        detail = "\n".join(w.message.splitlines()[1:]).strip()
        shown = f'<div class="tracejit-detail">{_e(detail)}</div>' if detail else ""
        items.append(
            f"<li>{_code('[' + w.category + ']')}{_e(times)} {_code(location_label(w.file, w.line, run.file_names))}"
            f"{code}"
            f"<br>{_e(first_line(w.message))}{shown}{advice}</li>"
        )
    return ["<h4>Warnings</h4>", "<ul>", *items, "</ul>"]


def _case(run: TraceRun, case: CheckCase) -> str:
    verdict = '<span class="tracejit-ok">ok</span>' if case.ok else '<strong class="tracejit-bad">FAILED</strong>'
    head = f"{_e(case.label)} ({_e(case.method)}, {_e(', '.join(case.inputs))}): {verdict}"
    inner: list[str] = []
    if case.exception is not None:
        inner.append(f"<li>{_e(case.exception.type)}: {_e(first_line(case.exception.message))}</li>")
    for o in case.outputs:
        if not o.ok:
            inner.append(f"<li>{_e(o.mismatch())}</li>")
    if case.diff is not None and case.diff.divergences:
        roots, down = case.diff.roots, case.diff.downstream
        trace_graph = run.graphs.get(case.method)
        rows = [
            f"<li><strong>{_e(d.reason or d.kind)}</strong>"
            f"<br>trace: {_node(run, trace_graph, d.trace_node)}<br>check: {_node(run, case.graph, d.check_node)}</li>"
            for d in roots[:MAX_ROOTS]
        ]
        if len(roots) > MAX_ROOTS:
            rows.append(f"<li>… {len(roots) - MAX_ROOTS} more</li>")
        inner.append(
            f"<li>{plural(len(roots), 'root divergence')}, {len(down)} downstream<ol>{''.join(rows)}</ol></li>"
        )
    elif case.text_differs:
        inner.append("<li>the graphs differ only in debug names</li>")
    return f"<li>{head}" + (f"<ul>{''.join(inner)}</ul>" if inner else "") + "</li>"


def _check(run: TraceRun) -> list[str]:
    check = run.check
    if check is None:
        if run.error is not None:
            return []
        if run.from_file:
            return ["<p>Read from a saved file: nothing was run, so nothing was checked.</p>"]
        if run.check_off:
            return [f"<p>The check was off (<code>{_e(run.check_off)}</code>).</p>"]
        return [f"<p>{_e(run.check_name.capitalize())} was off.</p>"]
    title = f"Check ({plural(len(check.cases), 'input set')}, tolerance {check.tolerance:g})"
    return [f"<h4>{_e(title)}</h4>", "<ul>", *(_case(run, c) for c in check.cases), "</ul>"]


def _findings(run: TraceRun) -> list[str]:
    parts: list[str] = []
    if run.findings:
        parts += ["<h4>Findings</h4>", "<ul>"]
        for f in run.findings:
            fix = f"<br><em>fix: {_e(f.hint)}</em>" if f.hint else ""
            parts.append(
                f"<li>{_code('[' + f.severity + ']')} <strong>{_e(f.title)}</strong>: {_e(f.message)}{fix}</li>"
            )
        parts.append("</ul>")
    if run.probe is not None:
        verdict = "ok" if run.probe.ok else "the trace does not generalize"
        parts += [f"<h4>Generalization probe: {_e(verdict)}</h4>", "<ul>"]
        for c in run.probe.cases:
            detail = f": {_e(c.message)}" if c.message and c.status != "agree" else ""
            parts.append(f"<li>{_code(c.status)} {_e(c.name)} ({_e(', '.join(c.input_shapes))}){detail}</li>")
        parts.append("</ul>")
    return parts


# -- the graph ------------------------------------------------------------------------------------------------
def _local(name: str) -> str:
    return name.rsplit("}", 1)[-1]


def _serialize(el: ET.Element, out: list[str], *, root: bool = False) -> None:
    """Write ``el`` as HTML-embeddable SVG with everything active removed; ``<a>`` is unwrapped."""
    tag = _local(el.tag)
    keep_tag = tag.lower() != "a"
    if keep_tag:
        attrs = [] if not root else [("xmlns", SVG_NS)]
        for key, value in el.attrib.items():
            name = key.lower()
            if key.startswith("{") or name.startswith("on") or name in ("href", "target", "style", "xmlns"):
                continue
            if "javascript:" in value.lower().replace(" ", ""):
                continue
            attrs.append((key, value))
        out.append(f"<{tag}" + "".join(f' {k}="{_e(v)}"' for k, v in attrs) + ">")
    if el.text:
        out.append(html.escape(el.text, quote=False))
    for child in el:
        if _local(child.tag).lower() not in _DROP:
            _serialize(child, out)
        if child.tail:
            out.append(html.escape(child.tail, quote=False))
    if keep_tag:
        out.append(f"</{tag}>")


def sanitize_svg(svg_text: str) -> str:
    """Graphviz's SVG document as an inline ``<svg>`` element: no XML prolog, doctype or comments, and no
    scripts, links, event handlers, styles or foreign content. Raises ``ValueError`` on malformed input."""
    try:
        root = ET.fromstring(svg_text)
    except ET.ParseError as exc:
        raise ValueError(f"Graphviz did not return well-formed SVG: {exc}") from exc
    if _local(root.tag) != "svg":
        raise ValueError("Graphviz did not return an SVG document")
    out: list[str] = []
    _serialize(root, out, root=True)
    return "".join(out)


def _highlights(run: TraceRun, method: str) -> dict[int, list[str]]:
    marks: dict[int, list[str]] = {}
    for w in run.user_warnings:
        if w.method == method:
            for nid in w.node_ids:
                marks.setdefault(nid, []).append("warning")
    if run.check is not None:
        for case in run.check.cases:
            if case.method == method and case.diff is not None:
                for d in case.diff.divergences:
                    if d.trace_node is not None:
                        marks.setdefault(d.trace_node, []).append(d.kind)
    return marks


def graph_svg(run: TraceRun, method: str, *, timeout: float = DOT_TIMEOUT) -> str | None:
    """The method's graph laid out by the ``dot`` binary as a sanitized inline ``<svg>``; ``None`` when ``dot``
    is not installed, the graph is too large (:data:`MAX_SVG_NODES`), or Graphviz fails or times out."""
    dot = shutil.which("dot")
    graph = run.graphs.get(method)
    if dot is None or graph is None or len(graph) > MAX_SVG_NODES:
        return None
    try:
        source = to_dot(graph, highlights=_highlights(run, method), file_names=run.file_names)
        done = subprocess.run([dot, "-Tsvg"], input=source.encode(), capture_output=True, timeout=timeout, check=False)
    except Exception:  # a display fallback never raises: the IR text is shown instead
        return None
    if done.returncode != 0:
        return None
    try:
        return sanitize_svg(done.stdout.decode("utf-8", errors="replace"))
    except ValueError:
        return None


def _graph_text(graph: Graph) -> str:
    lines = graph.text().splitlines()
    if len(lines) > MAX_TEXT_LINES:
        lines = [*lines[:MAX_TEXT_LINES], f"… {len(lines) - MAX_TEXT_LINES} more lines"]
    return "\n".join(lines)


def _graphs(run: TraceRun) -> list[str]:
    parts: list[str] = []
    for method, graph in run.graphs.items():
        svg = graph_svg(run, method)
        title = f"Graph of {method} ({plural(len(graph), 'node')})"
        if svg is not None:
            parts.append(f'<details open class="tracejit-graph"><summary>{_e(title)}</summary>{svg}</details>')
        else:
            parts.append(
                f'<details class="tracejit-graph"><summary>{_e(title)}</summary>'
                f"<pre>{_e(_graph_text(graph))}</pre></details>"
            )
    return parts


def _diff(run: TraceRun) -> list[str]:
    """A run shown as the new side of ``tj.diff``: the diff's summary first (what a reader without the explorer
    most needs: nbconvert, GitHub, the offline page with scripts off)."""
    if run.diff_against is None:
        return []
    diff = run.diff_against.diff
    return [f"<h4>Diff against {_e(diff.old)}</h4>", f"<pre>{_e(diff.summary())}</pre>"]


def to_html(run: TraceRun, *, graph: bool = True) -> str:
    """The run as an HTML fragment (a ``<div>``); ``graph=False`` leaves the graphs out."""
    verdict = run.verdict
    reasons = "".join(f"<li>{_e(r)}</li>" for r in verdict.reasons)
    parts = [
        '<div class="tracejit-html">',
        _STYLE,
        f'<p><strong class="tracejit-{verdict.level}">{_e(verdict.label)}</strong> {_e(run.summary())}</p>',
        f'<ul class="tracejit-verdict">{reasons}</ul>' if verdict.level != "ok" else "",
        *_diff(run),
        *_error(run),
        *_warnings(run),
        *_check(run),
        *_findings(run),
    ]
    if graph:
        parts += _graphs(run)
    parts.append("</div>")
    return "\n".join(parts)
