"""Presentation of runs, kept out of the core: DOT (:mod:`.dot`), the static HTML fragment (:mod:`.html`), the
plain-text report (:mod:`.text`), the standalone offline page (:mod:`.page`) and the page of a diff
(:mod:`.diff_page`).

Importing this package registers ``run.to_dot()``, ``run.to_html()``, ``run.save_html()`` and
``RunDiff.to_html()`` with the core (which
imports no presentation code); ``import jupyter_tracejit`` does that. The modules are imported on first use.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..core.run import TraceRun, register_presenter


def _dot(run: TraceRun, method: str | None, **options: Any) -> str:
    from .dot import to_dot

    if method is not None and method not in run.graphs and run.graphs:
        raise ValueError(f"this run has no method {method!r}; it traced {', '.join(map(repr, run.graphs))}")
    graph = run.graphs.get(method) if method is not None else run.graph
    if graph is None:
        return _no_graph_dot(run)
    return to_dot(graph, **{"file_names": run.file_names, **options})


def _no_graph_dot(run: TraceRun) -> str:
    """A DOT graph of one note saying why there is no graph (a failed trace), as ``to_html()`` says it: a run
    never raises for what its trace did."""
    from .dot import label_lines

    if run.error is not None:
        first = (run.error.message.splitlines() or [""])[0]
        why = [f"no graph: tracing failed ({run.error.phase})", f"{run.error.type}: {first}"]
    else:
        why = ["no graph: tracing recorded none"]
    return f"digraph {{\n  node [shape=note];\n  no_graph [label={label_lines([run.target.name, *why])}];\n}}\n"


def _html(run: TraceRun, *, graph: bool = True) -> str:
    from .html import to_html

    return to_html(run, graph=graph)


def _page(run: TraceRun, path: str | os.PathLike[str]) -> Path:
    from .page import save_html

    return save_html(run, path)


register_presenter("dot", _dot)
register_presenter("html", _html)


def _diff_page(diff: Any) -> str:
    from .diff_page import render_diff_html

    return render_diff_html(diff)


register_presenter("page", _page)
register_presenter("diff_page", _diff_page)
