"""What changed between two runs of one model: two versions of a saved archive, an archive and a fresh trace of
the current code, two exports (``tj.diff``, ``tracejit diff``).

The graphs are compared by the existing matchers, never by a new one: two captures of one back end by
:func:`~.diff.structural_diff` (node for node, by what each computes from what), a trace against an export by
:func:`~.capture_diff.compare_captures` (op names aligned per module). What differs is then summarised by module
scope, the way a reviewer reads a change::

    encoder.layer.3: 2 ops added, 1 constant changed 0.1 -> 0.2

Only the **roots** of a structural diff are counted (the places where the graphs part: an op added or removed, an
op reading another constant or another input); the ops that differ only because they read what a root computed are
counted (``RunDiff.downstream``), not listed as changes of their own. Parameters and buffers are compared by name
and type (``Float(16, 8, 3, 3)``, from ``run.parameters``), and by value with ``values=True`` (live runs only: a run
read back from JSON has no tensors).

Torch-free, except for what it is asked to open or compare: a path is loaded with :func:`~.archive.load` and values
are compared with torch, both imported on first use.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .diff import GraphDiff, structural_diff
from .graph import Graph
from .jsonio import NOT_IN_JSON, Decoders, JsonRecord, list_of
from .registry import names
from .run import TraceRun, _presenter, register_diff_against_decoder
from .run_changes import (
    ParameterChange,
    ScopeChange,
    capture_changes,
    parameter_changes,
    structural_changes,
    value_changes,
)
from .words import plural

#: the default tolerance of ``values=True``: two float32 weights this close are the same weight
DEFAULT_ATOL = 1e-6


@dataclass
class RunDiff(JsonRecord):
    """``tj.diff(a, b)``: what changed from run ``a`` (old) to run ``b`` (new)."""

    #: each side's label (its file, or its target's name) and one-line summary
    old: str
    new: str
    old_summary: str = ""
    new_summary: str = ""
    #: ``structural`` (two captures of one back end) or ``capture`` (a trace against an export)
    compared_as: str = "structural"
    scopes: list[ScopeChange] = field(default_factory=list)
    #: parameters and buffers that differ (by name and type; by value with ``values=True``)
    parameters: list[ParameterChange] = field(default_factory=list)
    #: ops that differ only because they read what a changed op computed (not listed as changes of their own)
    downstream: int = 0
    #: methods only one side has
    methods_added: list[str] = field(default_factory=list)
    methods_removed: list[str] = field(default_factory=list)
    #: whether values were compared, and with which tolerance (None: names and types only)
    atol: float | None = None
    #: why values could not be compared (a run read back from JSON has no tensors); ``""`` otherwise
    values_note: str = ""
    #: a side that failed to load or capture: its error's first line (nothing was compared)
    error: str = ""
    #: the two runs compared (live objects; None after ``from_json``): the explorer shows ``new_run`` with the diff
    old_run: TraceRun | None = field(default=None, repr=False, compare=False, metadata=NOT_IN_JSON)
    new_run: TraceRun | None = field(default=None, repr=False, compare=False, metadata=NOT_IN_JSON)
    #: each method's structural_diff, computed once for the summary and kept for the Diff view's pairing (live)
    graph_diffs: dict[str, GraphDiff] = field(default_factory=dict, repr=False, compare=False, metadata=NOT_IN_JSON)

    _json_decoders: ClassVar[Decoders] = {
        "scopes": list_of(ScopeChange.from_json),
        "parameters": list_of(ParameterChange.from_json),
    }
    _json_derived: ClassVar[tuple[str, ...]] = ("same", "summary_text")

    @property
    def same(self) -> bool:
        """Nothing differs: the graphs match, and so do the parameters (and their values, when compared)."""
        return not (self.error or self.scopes or self.parameters or self.methods_added or self.methods_removed)

    @property
    def summary_text(self) -> str:
        return self.summary()

    def summary(self) -> str:
        """One line per change, the verdict first."""
        if self.error:
            return f"not compared: {self.error}"
        if self.same:
            checked = f", values within {self.atol:g}" if self.atol is not None and not self.values_note else ""
            # values asked for and not compared: "same" says nothing of them, and the line says so
            unchecked = f" ({self.values_note})" if self.values_note else ""
            return f"same: {self.old} and {self.new} have the same graphs and parameters{checked}{unchecked}"
        lines = [f"different: {self.old} -> {self.new}"]
        lines += [f"  method {m} added" for m in self.methods_added]
        lines += [f"  method {m} removed" for m in self.methods_removed]
        lines += [f"  {s.text}" for s in self.scopes]
        if self.downstream:
            lines.append(f"  ({plural(self.downstream, 'op differs', 'ops differ')} downstream of these changes)")
        if self.parameters:
            lines.append(f"  {plural(len(self.parameters), 'parameter differs', 'parameters differ')}:")
            lines += [f"    {p.text}" for p in self.parameters]
        if self.values_note:
            lines.append(f"  ({self.values_note})")
        return "\n".join(lines)

    def to_html(self) -> str:
        """A self-contained HTML page of the diff (:func:`jupyter_tracejit.render.diff_page.render_diff_html`)."""
        return str(_presenter("diff_page")(self))

    def with_new(self, new: TraceRun) -> RunDiff:
        """The same comparison (the old side, values and tolerance, the old label) against another new run: what
        the explorer shows when the Diff view's run is re-traced or re-exported with other options."""
        if self.old_run is None:
            raise ValueError("this diff was read back from JSON and keeps no old run to compare against")
        atol = DEFAULT_ATOL if self.atol is None else self.atol
        result = diff_runs(self.old_run, new, values=self.atol is not None, atol=atol)
        result.old = self.old
        return result

    def explorer_run(self) -> TraceRun:
        """The new run carrying the explorer's Diff view (``run.diff_against``): what ``tj.explore(diff)`` and a
        displayed diff show, and what a saved notebook keeps, so the view renders there without a kernel."""
        old, new = self.old_run, self.new_run
        if old is None or new is None:
            raise ValueError(
                "this diff was read back from JSON and keeps neither run, so the explorer has no graphs to show: "
                "print(diff.summary()) or diff.to_html(), or compute it again with tj.diff(a, b)"
            )
        method = "forward" if "forward" in new.graphs else next(iter(new.graphs), "forward")
        old_graph = old.graphs.get(method) or old.graph
        if old_graph is None or method not in new.graphs:
            return new  # a side failed: nothing to show side by side (the diff's error says why)
        pairs = None
        if self.compared_as == "structural":
            pairs = self.graph_diffs.get(method) if method in old.graphs else None
            if pairs is None:  # old.graph stood in for a method the old run lacks: not what diff_runs compared
                pairs = structural_diff(old_graph, new.graphs[method], by_scope=True)
        view = DiffAgainst(diff=self, old_graph=old_graph, method=method, graph_diff=pairs)
        return dataclasses.replace(new, diff_against=view)

    def __repr__(self) -> str:
        return f"<RunDiff {self.summary().splitlines()[0]}>"


@dataclass
class DiffAgainst(JsonRecord):
    """What the explorer's Diff view needs beyond the new run it is shown on, carried in that run's JSON
    (``run.diff_against``) so that a saved notebook or page shows it without a kernel: the diff, the old run's
    graph of :attr:`method`, and how the two graphs' nodes pair."""

    diff: RunDiff
    old_graph: Graph
    method: str = "forward"
    #: :func:`~.diff.structural_diff` of the old graph and the new one (its matched pairs line the panes up);
    #: None for a trace against an export (``compared_as == "capture"``: no node-for-node pairing)
    graph_diff: GraphDiff | None = None

    _json_decoders: ClassVar[Decoders] = {
        "diff": RunDiff.from_json,
        "old_graph": Graph.from_json,
        "graph_diff": GraphDiff.from_json,
    }


# -- the diff -------------------------------------------------------------------------------------------------------
def _label(run: TraceRun, given: Any) -> str:
    if isinstance(given, (str, os.PathLike)):
        return os.fspath(given)
    return run.target.file if run.from_file and run.target.file else run.target.name


def _as_run(side: TraceRun | str | os.PathLike[str], map_location: Any, trusted: bool) -> TraceRun:
    if isinstance(side, TraceRun):
        return side
    if isinstance(side, (str, os.PathLike)):
        from .archive.saved import load

        return load(side, map_location=map_location, trusted=trusted)
    raise TypeError(f"tj.diff compares runs or saved files (a path), not a {type(side).__name__}")


def diff_runs(old: TraceRun, new: TraceRun, *, values: bool = False, atol: float = DEFAULT_ATOL) -> RunDiff:
    """The :class:`RunDiff` of two runs (see the module's docstring)."""
    result = RunDiff(
        old=old.target.name,
        new=new.target.name,
        old_summary=old.summary(),
        new_summary=new.summary(),
        old_run=old,
        new_run=new,
    )
    for run, side in ((old, "old"), (new, "new")):
        if run.error is not None or not run.graphs:
            reason = run.error.message.splitlines()[0] if run.error is not None else "it has no graph"
            result.error = f"the {side} run failed: {reason}"
            return result
    changes: dict[tuple[str, str], ScopeChange] = {}
    if old.backend != new.backend:  # two back ends' captures (a trace or TorchScript archive against an export)
        result.compared_as = "capture"
        # the capture comparison's sides in the registry's order: torch.jit.trace's, then torch.export's
        trace, export = sorted((old, new), key=lambda run: names().index(run.backend))
        assert trace.graph is not None and export.graph is not None
        capture_changes(trace.graph, export.graph, trace is old, changes)
    else:
        for method, graph in old.graphs.items():
            if method in new.graphs:
                diff = result.graph_diffs[method] = structural_diff(graph, new.graphs[method], by_scope=True)
                result.downstream += structural_changes(graph, new.graphs[method], method, changes, diff)
        result.methods_removed = [m for m in old.graphs if m not in new.graphs]
        result.methods_added = [m for m in new.graphs if m not in old.graphs]
    params = parameter_changes(old, new)
    if values:
        result.atol = atol
        by_value, result.values_note = value_changes(old, new, atol)
        params += by_value
    result.parameters = params
    result.scopes = sorted(changes.values(), key=lambda s: (s.method != "forward", s.method, _first_node(s)))
    return result


def _first_node(scope: ScopeChange) -> int:
    ids = scope.new_nodes or scope.old_nodes
    return min(ids) if ids else 1 << 30


def diff(
    a: TraceRun | str | os.PathLike[str],
    b: TraceRun | str | os.PathLike[str],
    *,
    values: bool = False,
    atol: float = DEFAULT_ATOL,
    map_location: Any = "cpu",
    trusted: bool = False,
) -> RunDiff:
    """``tj.diff(old, new)``: what changed between two runs or saved files (``.pt`` / ``.pt2``, loaded with
    ``tj.load``): the graphs by module scope, the parameters by name and type, and by value with ``values=True``
    (differences above ``atol``). ``diff.same`` says whether anything changed; ``print(diff.summary())``.
    ``trusted``: as ``tj.load``'s, for both files (only for files whose origin you trust)."""
    old, new = _as_run(a, map_location, trusted), _as_run(b, map_location, trusted)
    result = diff_runs(old, new, values=values, atol=atol)
    result.old, result.new = _label(old, a), _label(new, b)
    return result


register_diff_against_decoder(DiffAgainst.from_json)

__all__ = ["DEFAULT_ATOL", "DiffAgainst", "ParameterChange", "RunDiff", "ScopeChange", "diff", "diff_runs"]
