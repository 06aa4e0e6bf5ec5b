"""What a run saw, as the run's records: each compiled graph as a :class:`~..graph.Graph` and a
:class:`~.records.Region` (:mod:`.graphs`), torch's graph-break reports as :class:`~.records.GraphBreak` s joined to
the ops before and after them (:mod:`.break_table`), each region's guards in the inputs' terms (:mod:`.guards`), and
guard failures as :class:`~.records.Recompilation` s (:mod:`.recompiles`).
"""

from __future__ import annotations

import os
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from ..graph import Graph
from .break_table import BreakTable, join_ops, read_breaks, skipped_top
from .breaks import registry
from .graphs import regions_of
from .guards import region_guards, spread_name
from .recompiles import recompilations
from .recorder import Compiled, Recorder
from .records import CompileReport, GraphBreak


@dataclass
class Built:
    """What :func:`build` made: the records, the graphs by name, and each compiled graph's name."""

    report: CompileReport
    graphs: dict[str, Graph]
    names: list[str] = field(default_factory=list)


def build(
    recorder: Recorder,
    logged: Iterable[tuple[int, str]],
    warnings: Iterable[tuple[int, str]],
    *,
    model: Any,
    top: types.CodeType | None,
    calls: int,
    dynamic: bool | None,
    backend: str,
    limit: int,
) -> Built:
    """The run's graphs and records from what the recorder and torch's log saw."""
    made = regions_of(recorder, model=model, top=top, calls=calls)
    graphs, regions = made.graphs, made.regions
    table = BreakTable()
    logged_any = read_breaks(table, logged, recorder, regions)
    join_ops(table, recorder.compiled, regions, graphs)
    known = _known_files(graphs, table.breaks, recorder, top)
    for c, region in zip(recorder.compiled, regions, strict=True):
        region.guards, region.guards_total = _guards_of(
            c, recorder, known, spread_name(c.code) if c.code is top else ""
        )
    recompiled, limit_hit = recompilations(
        recorder, warnings, known, top=top, dynamic=dynamic, names=made.names, graphs=graphs, inputs_of=made.inputs_of
    )
    report = CompileReport(
        regions=regions,
        graph_breaks=table.breaks,
        recompilations=recompiled,
        calls=calls,
        backend=backend,
        recompile_limit=limit,
        limit_hit=limit_hit,
    )
    if registry() is None:
        report.unknown.append(
            f"torch {torch.__version__} has no graph-break registry (torch/_dynamo/graph_break_registry.json): "
            "breaks have no GB code, and their explanations and hints are only what the reason says"
        )
        skipped_top(table.breaks, regions, top)
    if not logged_any and any(r.ends_at_break is not None for r in regions):
        report.unknown.append(
            f"torch {torch.__version__} wrote no graph-break log this run could read: the breaks are the ones the "
            "graphs end at (what torch's explain reports); a break with no graph before it is not known"
        )
    return Built(report, graphs, made.names)


def _known_files(
    graphs: Mapping[str, Graph], breaks: list[GraphBreak], recorder: Recorder, top: types.CodeType | None
) -> list[str]:
    """Files the run knows of (to find torch's shortened paths again)."""
    files: set[str] = set()
    for graph in graphs.values():
        for node in graph.nodes:
            if node.source is not None:
                files.update(f.file for f in node.source.stack)
    for gb in breaks:
        files.update(f.file for f in gb.stack)
    for c in recorder.compiled:
        if c.code is not None:
            files.add(c.code.co_filename)
    if top is not None:
        files.add(top.co_filename)
    return sorted(f for f in files if f and os.path.isabs(f))


def _guards_of(c: Compiled, recorder: Recorder, known: list[str], spread: str) -> tuple[list[Any], int]:
    """The guards of the cache entry a graph was compiled into, read from torch's guard manager."""
    if c.code is None or not c.compile_id:
        return [], 0
    getter = getattr(torch._C._dynamo.eval_frame, "_debug_get_cache_entry_list", None)
    if getter is None:
        return [], 0
    try:
        entries = list(getter(c.code))
    except Exception:
        return [], 0
    for entry in entries:
        if getattr(entry, "backend", None) is recorder and _id_text(getattr(entry, "compile_id", None)) == c.compile_id:
            return region_guards(entry.guard_manager, known, spread)
    return [], 0


def _id_text(compile_id: Any) -> str:
    frame, attempt = getattr(compile_id, "frame_id", None), getattr(compile_id, "frame_compile_id", None)
    return f"{frame}/{attempt}" if frame is not None and attempt is not None else str(compile_id or "")


__all__ = ["Built", "build"]
