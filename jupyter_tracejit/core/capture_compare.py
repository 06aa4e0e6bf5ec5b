"""Two runs of one model made by two back ends, op by op (``tj.compare`` of any pair: a trace or an export beside
a compiled run), on :mod:`.capture_diff`'s matcher. Above the back ends: it reads runs and their registry rows only.

Each side is the program its run ran for the first call: its one graph (``forward``), or, for a back end whose
records say the first call ran several graphs in order (a compiled run's regions between graph breaks,
``records.first_call_graphs()``), those graphs joined into one, in that order, each node remembered as
``(graph, node)``. The sides are put in the registry's order of back ends (trace, export, compile): the earlier is
the left (the matcher's "trace" side, where shape arithmetic and no-ops are looked for), the later the right. Ops
match within module scopes in order, then by parameters read, then by name at the same source line; what is left is
grouped by line with its reason, a line the right side ran outside its graphs (a graph break) saying so.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .capture_diff import CaptureComparison, LineDifference, compare_captures
from .categories import BY_NAME
from .graph import Block, Graph, Node, Value
from .jsonio import Decoders, JsonRecord
from .registry import backend, names
from .tracer_warnings import FROZEN
from .verdict import first_line
from .words import plural

#: a line the right side's back end ran in Python, outside its graphs (a compiled run's graph break)
OUTSIDE_GRAPHS = "outside_graphs"


def join_graphs(graphs: Sequence[tuple[str, Graph]], method: str) -> tuple[Graph, list[tuple[str, int]]]:
    """Graphs one after the other as one graph (ids shifted, scopes merged), and each joined node's
    ``(graph name, node id)``: what a run of several graphs ran, as one program to match."""
    nodes: list[Node] = []
    values: list[Value] = []
    inputs: list[int] = []
    outputs: list[int] = []
    scope_types: dict[str, str] = {}
    origin: list[tuple[str, int]] = []
    for name, graph in graphs:
        dn, dv = len(nodes), len(values)

        def node_id(i: int | None, dn: int = dn) -> int | None:
            return None if i is None else i + dn

        def shifted(ids: tuple[int, ...], d: int) -> tuple[int, ...]:
            return tuple(i + d for i in ids)

        for v in graph.values:
            values.append(dataclasses.replace(v, id=v.id + dv, producer=node_id(v.producer)))
        for n in graph.nodes:
            blocks = tuple(Block(shifted(b.inputs, dv), shifted(b.outputs, dv), shifted(b.nodes, dn)) for b in n.blocks)
            nodes.append(
                dataclasses.replace(
                    n,
                    id=n.id + dn,
                    inputs=shifted(n.inputs, dv),
                    outputs=shifted(n.outputs, dv),
                    blocks=blocks,
                    parent=node_id(n.parent),
                )
            )
            origin.append((name, n.id))
        inputs += shifted(graph.inputs, dv)
        outputs += shifted(graph.outputs, dv)
        scope_types.update({path: s.type for path, s in graph.scopes.items() if s.type})
    joined = Graph(
        method=method, nodes=nodes, values=values, inputs=tuple(inputs), outputs=tuple(outputs), scope_types=scope_types
    )
    return joined, origin


def program_of(run: Any) -> tuple[Graph, list[tuple[str, int]]] | None:
    """The graph a run ran for its first call (its graphs joined, in order, where its records list several) and
    each node's ``(graph, node)``; None when it has no graph."""
    first_call = getattr(run.records, "first_call_graphs", None)
    order = [name for name in first_call() if name in run.graphs] if callable(first_call) else []
    if len(order) > 1:
        return join_graphs([(name, run.graphs[name]) for name in order], "program")
    graph = run.graphs.get(order[0]) if order else run.graph
    if graph is None:
        return None
    name = order[0] if order else next(k for k, g in run.graphs.items() if g is graph)
    return graph, [(name, n.id) for n in graph.nodes]


@dataclass
class RunComparison(JsonRecord):
    """How the ops of two runs of one model by two back ends correspond (``tj.compare``). ``comparison`` is the
    matcher's record: its ``trace_*`` fields are the left side's, its ``export_*`` fields the right side's, node ids
    of each side's program (``left_nodes`` / ``right_nodes`` give each one's ``[graph, node]`` in its run)."""

    #: the two back ends (``run.backend``), in the registry's order
    left: str
    right: str
    left_summary: str
    right_summary: str
    comparison: CaptureComparison
    left_nodes: list[list[Any]] = field(default_factory=list)
    right_nodes: list[list[Any]] = field(default_factory=list)

    _json_decoders: ClassVar[Decoders] = {"comparison": CaptureComparison.from_json}

    @property
    def lines(self) -> list[LineDifference]:
        """The lines where they differ, in the order the model runs them, each with its reason."""
        return self.comparison.lines

    def place(self, side: str, node: int) -> tuple[str, int]:
        """``(graph, node id)`` in its run of a node of the ``left`` or ``right`` side's program."""
        graph, node_id = (self.left_nodes if side == "left" else self.right_nodes)[node]
        return str(graph), int(node_id)

    def summary(self) -> str:
        left, right = backend(self.left).noun, backend(self.right).noun
        c = self.comparison
        lines = plural(len(c.lines), "line")
        return (
            f"{len(c.matched)} of {c.trace_ops} {left} ops matched in the {right} ({c.coverage:.0%} of those it "
            f"could have), {c.export_ops} {right} ops; {lines} {'differs' if len(c.lines) == 1 else 'differ'}"
        )

    def __repr__(self) -> str:
        return f"<RunComparison {self.left} vs {self.right}: {self.summary()}>"


def _called_from(graph: Graph, ids: list[int], outside: set[tuple[str, int]]) -> bool:
    """Whether every one of the nodes was recorded under a line in ``outside`` (its own line, or a caller's: the
    ops of a helper the right side ran in Python are at the helper's lines, called from the break's)."""
    stacks = [graph.nodes[i].source for i in ids]
    return bool(ids) and all(s is not None and any((f.file, f.line) in outside for f in s.stack) for s in stacks)


def _reworded(
    lines: list[LineDifference], left: str, right: str, outside: set[tuple[str, int]], left_graph: Graph
) -> None:
    """The matcher's words for its sides ("only the trace", "only the export") said of these runs' back ends, and
    a line the right side ran outside its graphs (called from) said so."""
    nouns = {"trace": backend(left).noun, "export": backend(right).noun}
    for d in lines:
        if d.reason == "only_trace" and _called_from(left_graph, d.trace_nodes, outside):
            d.reason = OUTSIDE_GRAPHS
            d.detail = f"the {nouns['export']} ran this line in Python, outside its graphs (a graph break)"
            continue
        if (left, right) != ("trace", "export"):  # the matcher's words name its sides: name these runs' instead
            d.detail = re.sub(r"\b(trace|export)\b", lambda m: nouns[m.group(1)], d.detail)
        if d.reason in ("only_trace", "only_export"):
            side = d.reason.removeprefix("only_")
            d.reason = f"only_{left if side == 'trace' else right}"
            d.detail = f"ops only the {nouns[side]} recorded"


def compare_runs(a: Any, b: Any) -> RunComparison:
    """How two runs of one model by two back ends correspond, ops matched by scope, parameters and source line.
    ``ValueError`` for two runs of one back end (``tj.diff`` compares those), or a run with no graph (what failed)."""
    order = names()
    if a.backend == b.backend or a.backend not in order or b.backend not in order:
        raise ValueError(
            f"compare takes two runs of one model by two back ends ({', '.join(order)}), got {a.backend!r} and "
            f"{b.backend!r}; two runs of one back end: tj.diff(old, new)"
        )
    left, right = (a, b) if order.index(a.backend) < order.index(b.backend) else (b, a)
    left_program, right_program = program_of(left), program_of(right)
    if left_program is None or right_program is None:
        empty = left if left_program is None else right
        why = f" ({empty.error.type}: {first_line(empty.error.message)})" if empty.error is not None else ""
        raise ValueError(
            f"the {empty.capture_noun} recorded no graph{why}, so there is nothing to compare: capture a graph "
            "on both sides first (the run's error and findings say what stopped it)"
        )
    frozen = {(w.file, w.line): BY_NAME[w.category].title for w in left.warnings if w.category in FROZEN and w.file}
    comparison = compare_captures(left_program[0], right_program[0], frozen_lines=frozen)
    outside = getattr(right.records, "lines_outside_graphs", None)
    lines_outside = set(outside()) if callable(outside) else set()
    _reworded(comparison.lines, left.backend, right.backend, lines_outside, left_program[0])
    return RunComparison(
        left=left.backend,
        right=right.backend,
        left_summary=left.summary(),
        right_summary=right.summary(),
        comparison=comparison,
        left_nodes=[list(p) for p in left_program[1]],
        right_nodes=[list(p) for p in right_program[1]],
    )


__all__ = ["OUTSIDE_GRAPHS", "RunComparison", "compare_runs", "join_graphs", "program_of"]
