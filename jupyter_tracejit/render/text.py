"""A plain-text report of a :class:`TraceRun`: for terminals, logs and ``text/plain`` output."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..core.check import CheckCase
from ..core.graph import Graph
from ..core.run import TraceRun
from ..core.verdict import first_line
from ..core.words import plural
from .location import location_label


def _node(graph: Graph | None, node_id: int | None, file_names: Mapping[str, str]) -> str:
    if graph is None or node_id is None:
        return "-"
    n = graph.nodes[node_id]
    src = f" at {location_label(n.source.file, n.source.line, file_names)}" if n.source is not None else ""
    scope = f" [{n.scope}]" if n.scope else ""
    return f"%{n.id} {n.kind}{scope}{src}"


def _case_lines(run: TraceRun, case: CheckCase, limit: int) -> list[str]:
    verdict = "skipped" if case.skipped else "ok" if case.ok else "FAILED"
    lines = [f"  {case.label} ({case.method}, {', '.join(case.inputs)}): {verdict}"]
    if case.exception is not None:
        lines.append(f"    ! {first_line(case.exception.message)}")
    for o in case.outputs:
        if not o.ok:
            lines.append(f"    {o.mismatch()}")
    if case.diff is not None and case.diff.divergences:
        roots, down = case.diff.roots, case.diff.downstream
        lines.append(f"    {plural(len(roots), 'root divergence')}, {len(down)} downstream")
        trace_graph = run.graphs.get(case.method)
        for d in roots[:limit]:
            lines.append(f"    - {d.reason}")
            lines.append(f"        trace: {_node(trace_graph, d.trace_node, run.file_names)}")
            lines.append(f"        check: {_node(case.graph, d.check_node, run.file_names)}")
        if len(roots) > limit:
            lines.append(f"    ... {len(roots) - limit} more")
    elif case.text_differs:
        lines.append("    graphs differ only in debug names")
    return lines


def format_run(run: TraceRun, *, limit: int = 5, spelling: Callable[[str], str] = str) -> str:
    """Summary, warnings with their lines, check cases with root divergences, findings and probe results.

    ``spelling`` rewrites advice for where it is read (the CLI passes ``command_line_spelling``: ``--non-strict``
    rather than ``strict=False``)."""
    lines = [run.summary()]
    text_lines = getattr(run.records, "text_lines", None)
    if callable(text_lines):  # the back end's records say their part (an export's signature, a compiled run's breaks)
        lines.extend(text_lines(lambda file, line: location_label(file, line, run.file_names), spelling))
    if run.error is not None:
        e = run.error
        lines.append(f"error: {e.type}: {e.message}")
        if e.file:
            lines.append(f"  at {location_label(e.file, e.line, run.file_names)}: {e.code}")
        if e.hint:
            lines.append(f"  hint: {spelling(e.hint)}")
    if run.user_warnings:
        lines.append("warnings:")
        for w in run.user_warnings:
            times = f" (x{w.count})" if w.count > 1 else ""
            where = location_label(w.file, w.line, run.file_names)
            lines.append(f"  [{w.category}]{times} {where}: {w.code or first_line(w.message)}")
            if w.advice:
                lines.append(f"    {spelling(w.advice)}")
    if run.check is not None:
        lines.append(f"check ({plural(len(run.check.cases), 'input set')}, tolerance {run.check.tolerance:g}):")
        for case in run.check.cases:
            lines.extend(_case_lines(run, case, limit))
    if run.findings:
        lines.append("findings:")
        for f in run.findings:
            lines.append(f"  [{f.severity}] {f.title}")
            lines.append(f"    {f.message}")
            if f.hint:
                lines.append(f"    fix: {spelling(f.hint)}")
    if run.probe is not None:
        lines.append(f"generalization probe: {'ok' if run.probe.ok else 'trace does not generalize'}")
        for c in run.probe.cases:
            detail = f": {c.message}" if c.message and c.status != "agree" else ""
            lines.append(f"  {c.status:11} {c.name} ({', '.join(c.input_shapes)}){detail}")
    return "\n".join(lines)
