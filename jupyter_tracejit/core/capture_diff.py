"""A trace and an export of the same model, side by side: which ops correspond, and why the others differ.

:func:`~.diff.structural_diff` compares two captures of one back end, node for node; across back ends it pairs
almost nothing (``aten::linear`` against ``aten::linear.default``, size ops only one side records). So this module
has its own matcher, on the torch-free :class:`~.graph.Graph` of each:

1. ops are named by their bare op name (``linear``; the overload and an in-place ``_`` dropped: export
   functionalises ``add_`` into ``add``);
2. within each module scope, the two sequences of names are aligned in order (longest matching runs first);
3. ops left over are paired when both read the same parameter (``encoder.layer.0.attention.self.query.weight``),
   then when they have the same name at the same source line.

What stays unmatched is grouped by the user's source line, each group with its reason: shape arithmetic only the
trace records (``aten::size``, ``prim::NumToTensor``: export keeps sizes as symbols or constants), runtime checks only
export records, no-ops export leaves out (``contiguous``, a full ``slice``), a value the trace froze at that line
(its warning), control flow export keeps as ``cond``, else ops only one side has.
"""

from __future__ import annotations

import bisect
import difflib
from collections import defaultdict
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .diff import ROOT, Divergence, GraphDiff
from .graph import PLUMBING_ROLES, Graph, Node
from .jsonio import NOT_IN_JSON, Decoders, JsonRecord, list_of
from .words import plural

#: ops that compute sizes, not tensors: the trace records them, export keeps sizes symbolic (or constant)
SHAPE_OPS = frozenset(
    {"size", "Int", "NumToTensor", "ScalarImplicit", "IntImplicit", "FloatImplicit", "sym_size", "sym_numel"}
)
#: runtime checks export inserts for its guards and unbacked sizes
CHECK_OPS = frozenset(
    {
        "_assert_scalar",
        "_assert_tensor_metadata",
        "_assert_async",
        "sym_constrain_range",
        "sym_constrain_range_for_size",
    }
)
#: ops that change nothing for a contiguous tensor or a full range: export leaves them out
NO_OP_OPS = frozenset({"contiguous", "slice", "detach", "alias", "clone", "dropout", "lift_fresh", "lift_fresh_copy"})
#: trace warning categories that freeze a value at their line (core/categories.py frozen rows)
_REASONS = {
    "shape_arithmetic": "shape arithmetic only the trace records: export keeps the sizes symbolic or constant",
    "runtime_check": "a runtime check only export records (for a guard or a size it could not know)",
    "no_op": "an op that changes nothing here, which export leaves out",
    "control_flow": "control flow export keeps as a cond / while_loop node, where the trace recorded one path",
    "frozen": "the trace froze a value at this line ({what}): export guards it or refuses it instead",
    "only_trace": "ops only the trace recorded",
    "only_export": "ops only the export recorded",
    "refused": "the line export refused: the export side is draft_export's graph, which recorded it as the trace "
    "did, for the example's sizes only",
}


#: one op under two names: the trace records ``aten::_convolution`` (with every argument; ``_convolution_mode`` for
#: ``padding="same"``), export ``conv2d`` (``conv2d.padding``), ``conv_transpose2d``
SAME_OP = {
    "_convolution": "convolution",
    "_convolution_mode": "convolution",
    **{f"conv{d}d": "convolution" for d in (1, 2, 3)},
    **{f"conv_transpose{d}d": "convolution" for d in (1, 2, 3)},
}


def bare_name(kind: str) -> str:
    """``aten::linear.default`` -> ``linear``; ``aten::add_`` -> ``add`` (export functionalises in-place ops);
    ``aten::_convolution`` and ``aten::conv2d.default`` -> ``convolution`` (:data:`SAME_OP`)."""
    name = kind.split("::", 1)[-1].split(".", 1)[0]
    if name.endswith("_") and not name.startswith("_"):
        name = name[:-1]
    return SAME_OP.get(name, name)


@dataclass
class LineDifference(JsonRecord):
    """Ops of one source line that have no counterpart, with why."""

    file: str
    line: int
    code: str
    reason: str
    detail: str
    trace_nodes: list[int] = field(default_factory=list)
    export_nodes: list[int] = field(default_factory=list)


@dataclass
class CaptureComparison(JsonRecord):
    """How a trace's graph and an export's graph of one model correspond."""

    #: ``[trace node id, export node id]`` per matched op
    matched: list[list[int]] = field(default_factory=list)
    #: the trace's ops that compute tensors (its shape arithmetic has no counterpart to look for), and the export's
    trace_ops: int = 0
    export_ops: int = 0
    #: the trace's ops that compute sizes (``aten::size``, ``prim::NumToTensor``, int ``mul``...)
    trace_shape_ops: int = 0
    lines: list[LineDifference] = field(default_factory=list)

    _json_decoders: ClassVar[Decoders] = {"lines": list_of(LineDifference.from_json)}

    @property
    def coverage(self) -> float:
        """The share of the trace's ops that have a counterpart in the export, of those export could have: ops
        that change nothing here (a ``contiguous`` of a contiguous tensor) have none to look for."""
        no_ops = sum(len(d.trace_nodes) for d in self.lines if d.reason == "no_op")
        comparable = self.trace_ops - no_ops
        return len(self.matched) / comparable if comparable else 1.0

    @property
    def explained(self) -> float:
        """The share of the trace's ops matched, or unmatched for a reason other than being only in the trace."""
        unexplained = sum(len(d.trace_nodes) for d in self.lines if d.reason == "only_trace")
        return 1 - unexplained / self.trace_ops if self.trace_ops else 1.0

    def as_graph_diff(self) -> GraphDiff:
        """The comparison in the shape the explorer's side-by-side panes draw (trace left, export right): the
        matched ops, and each op without a counterpart as a root divergence carrying its line's reason. Shape
        arithmetic and export's runtime checks are left out: they are why the sides differ, not where."""
        quiet = {"shape_arithmetic", "runtime_check"}
        divergences = [
            Divergence(t, None, ROOT, d.detail) for d in self.lines if d.reason not in quiet for t in d.trace_nodes
        ] + [Divergence(None, e, ROOT, d.detail) for d in self.lines if d.reason not in quiet for e in d.export_nodes]
        return GraphDiff(divergences=divergences, matched={a: b for a, b in self.matched})

    def summary(self) -> str:
        refused = next((d for d in self.lines if d.reason == "refused"), None)
        if refused is not None:  # matched against a draft: no reassurance, the refused line first
            code = f" (`{refused.code}`)" if refused.code else ""
            return (
                f"export refused line {refused.line}{code}: matched against draft_export's graph, which recorded that "
                f"line as the trace did, for the example's sizes only; {len(self.matched)} of {self.trace_ops} trace "
                f"ops matched the draft's"
            )
        return (
            f"{len(self.matched)} of {self.trace_ops} trace ops matched ({self.coverage:.0%} of those export could "
            f"have), {plural(self.export_ops, 'export op')}; {plural(len(self.lines), 'line')} "
            + ("differs" if len(self.lines) == 1 else "differ")
        )

    def mark_refused(self, trace: Graph, draft: Graph, file: str, line: int, code: str) -> None:
        """The comparison is against a refused export's draft: the line export refused comes first, with the ops
        both sides recorded there (they agree for the example's sizes only)."""

        def at(graph: Graph) -> list[int]:
            return [n.id for n in graph.nodes if n.role == "op" and n.source is not None and n.source.line == line
                    and n.source.file == file]  # fmt: skip

        self.lines.insert(0, LineDifference(file, line, code, "refused", _REASONS["refused"], at(trace), at(draft)))


@dataclass
class TraceComparison(JsonRecord):
    """An export run's comparison with a trace of the same model (``compare_trace=True``): the trace's graph, what
    the trace said (its summary) and how the two graphs correspond (export graph: the run's own ``forward``). Shown
    as a cell's last expression, it is the export run's explorer with its "Trace vs export" tab (:attr:`export_run`,
    the run it belongs to, when ``tj.compare`` made it)."""

    trace: Graph
    trace_summary: str
    comparison: CaptureComparison
    #: the export run this comparison is kept in (``export_run.compared``); None after ``from_json``
    export_run: Any = field(default=None, repr=False, compare=False, metadata=NOT_IN_JSON)

    _json_decoders: ClassVar[Decoders] = {"trace": Graph.from_json, "comparison": CaptureComparison.from_json}

    def __repr__(self) -> str:
        return f"<TraceComparison {self.comparison.summary()}>"


def _ops(graph: Graph) -> list[Node]:
    return [n for n in graph.nodes if n.role == "op"]


_NUMBER_TYPES = frozenset({"int", "float", "bool", "Scalar", "number", "SymInt", "SymFloat", "int[]"})


def shape_arithmetic(graph: Graph) -> set[int]:
    """The ops that compute sizes, not data: size ops, ops whose outputs are all numbers (``int``), and ops whose
    results are 0-dim (or of no known shape) and computed from sizes alone, through the lists, tuples and unpacking
    between them (a trace's ``aten::remainder`` of a width that came through a tuple of ``prim::NumToTensor`` s:
    Swin's window padding)."""
    found: set[int] = set()
    sizes: set[int] = set()  # values that hold sizes
    for node in graph.nodes:
        producers = [graph.producer(v) for v in node.inputs]
        data = [v for v, p in zip(node.inputs, producers, strict=True) if p is None or p.role != "constant"]
        from_sizes = bool(data) and all(v in sizes for v in data)
        if node.role in PLUMBING_ROLES:
            packed = producers[0] if node.role == "unpack" and len(producers) == 1 else None
            if packed is not None and packed.role in ("tuple", "list") and len(packed.inputs) == len(node.outputs):
                # a tuple of a tensor and sizes taken apart: each item is what was put there
                sizes.update(out for out, item in zip(node.outputs, packed.inputs, strict=True) if item in sizes)
            elif from_sizes:
                sizes.update(node.outputs)
            continue
        if node.role != "op":
            continue
        types = [graph.values[v].type for v in node.outputs]
        scalar = bool(node.outputs) and all(graph.values[v].shape in ((), None) for v in node.outputs)
        if (
            bare_name(node.kind) in SHAPE_OPS
            or (types and all(t in _NUMBER_TYPES for t in types))
            or (scalar and from_sizes)
        ):
            found.add(node.id)
            sizes.update(node.outputs)
    return found


#: what the trace's item reads of a structured input are, as an unmatched op's detail
_UNPACKING = "reads an item of a dict or list input, which export flattens into separate inputs: no op to match"


def input_unpacking(graph: Graph) -> set[int]:
    """The ops that only take a structured graph input apart (``batch["x"]`` on a dict input is the trace's
    ``aten::__getitem__``): export flattens its inputs, so they have no counterpart there."""
    found: set[int] = set()
    from_inputs = set(graph.inputs)
    for node in graph.nodes:
        if not node.inputs or node.inputs[0] not in from_inputs:
            continue
        if node.role in PLUMBING_ROLES or (node.role == "op" and bare_name(node.kind) == "__getitem__"):
            from_inputs.update(node.outputs)
            if node.role == "op":
                found.add(node.id)
    return found


def _parameters_read(graph: Graph, node: Node) -> tuple[str, ...]:
    """Qualified names of the parameters and buffers a node reads (a chain of attribute reads, as run.ts does)."""
    names = []
    for v in node.inputs:
        path: list[str] = []
        producer = graph.producer(v)
        while producer is not None and producer.role == "getattr":
            path.insert(0, str(producer.attributes.get("name", "?")))
            producer = graph.producer(producer.inputs[0]) if producer.inputs else None
        if path:
            names.append(".".join(path))
    return tuple(names)


def _place(node: Node) -> tuple[str, int, str]:
    src = node.source
    return (src.file, src.line, src.code) if src is not None else ("", 0, "")


def _align(trace: Sequence[Node], export: Sequence[Node]) -> list[tuple[Node, Node]]:
    a = [bare_name(n.kind) for n in trace]
    b = [bare_name(n.kind) for n in export]
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [(trace[i + k], export[j + k]) for i, j, size in matcher.get_matching_blocks() for k in range(size)]


def _pair_by(
    trace: Iterable[Node], export: list[Node], trace_key: Any, export_key: Any, taken: set[int]
) -> list[tuple[Node, Node]]:
    """Pair leftovers with equal keys, in order (None keys never pair)."""
    waiting: dict[Any, list[Node]] = defaultdict(list)
    for n in export:
        k = export_key(n)
        if k is not None:
            waiting[k].append(n)
    pairs = []
    for n in trace:
        k = trace_key(n)
        if k is not None and waiting.get(k):
            other = waiting[k].pop(0)
            pairs.append((n, other))
            taken.add(other.id)
    return pairs


def compare_captures(
    trace: Graph,
    export: Graph,
    *,
    frozen_lines: dict[tuple[str, int], str] | None = None,
    callers: Container[tuple[str, int]] = (),
) -> CaptureComparison:
    """Match the ops of a trace's graph and an export's graph of the same model; ``frozen_lines`` maps the
    ``(file, line)`` of the trace's frozen-value warnings to their titles (a reason of their own). ``callers`` are
    the lines that asked for the captures (the ``tj.export(...)`` / ``%export`` line): ops recorded entirely inside
    torch are put there by the captures, and such a line is never a line that differs: those ops are grouped with
    no line."""
    trace_ops, export_ops = _ops(trace), _ops(export)
    shape_t = shape_arithmetic(trace)
    unpacking = input_unpacking(trace) - shape_t
    shape_e = shape_arithmetic(export) | {n.id for n in export_ops if bare_name(n.kind) in CHECK_OPS}
    by_scope_t: dict[str, list[Node]] = defaultdict(list)
    by_scope_e: dict[str, list[Node]] = defaultdict(list)
    for n in trace_ops:
        if n.id not in shape_t and n.id not in unpacking:
            by_scope_t[n.scope].append(n)
    for n in export_ops:
        if n.id not in shape_e:
            by_scope_e[n.scope].append(n)
    pairs: list[tuple[Node, Node]] = []
    for scope in by_scope_t.keys() & by_scope_e.keys():
        pairs += _align(by_scope_t[scope], by_scope_e[scope])
    done_t = {a.id for a, _ in pairs}
    done_e = {b.id for _, b in pairs}
    left_t = [n for ns in by_scope_t.values() for n in ns if n.id not in done_t]
    left_e = [n for ns in by_scope_e.values() for n in ns if n.id not in done_e]
    left_t.sort(key=lambda n: n.id)
    left_e.sort(key=lambda n: n.id)

    def by_parameters(graph: Graph) -> Any:
        def key(n: Node) -> Any:
            read = _parameters_read(graph, n)
            return (bare_name(n.kind), read) if read else None

        return key

    def by_line(n: Node) -> Any:
        return (bare_name(n.kind), _place(n)[:2]) if n.source is not None else None

    for trace_key, export_key in ((by_parameters(trace), by_parameters(export)), (by_line, by_line)):
        taken: set[int] = set()
        found = _pair_by(left_t, left_e, trace_key, export_key, taken)
        pairs += found
        paired = {a.id for a, _ in found}
        left_t = [n for n in left_t if n.id not in paired]
        left_e = [n for n in left_e if n.id not in taken]
    matched_t = {a.id for a, _ in pairs}
    matched_e = {b.id for _, b in pairs}
    unmatched_t = [n for n in trace_ops if n.id not in matched_t]
    unmatched_e = [n for n in export_ops if n.id not in matched_e]
    return CaptureComparison(
        matched=sorted([a.id, b.id] for a, b in pairs),
        trace_ops=len(trace_ops) - len(shape_t),
        export_ops=len(export_ops),
        trace_shape_ops=len(shape_t),
        lines=_in_program_order(
            _differences(unmatched_t, unmatched_e, frozen_lines or {}, shape_t, shape_e, unpacking, callers), pairs
        ),
    )


def _reason(
    node: Node, side: str, frozen: dict[tuple[str, int], str], is_size: bool, is_unpacking: bool = False
) -> tuple[str, str]:
    name = bare_name(node.kind)
    if is_unpacking:  # a no-op for the data: reading an input's item (the comparison's coverage leaves it out)
        return "no_op", _UNPACKING
    if side == "export" and name in CHECK_OPS:
        return "runtime_check", _REASONS["runtime_check"]
    if side == "trace" and is_size:
        return "shape_arithmetic", _REASONS["shape_arithmetic"]
    if side == "export" and is_size:
        return "shape_arithmetic", "size ops export records for a dynamic dimension"
    if side == "export" and node.blocks:
        return "control_flow", _REASONS["control_flow"]
    where = _place(node)[:2]
    if where in frozen:
        return "frozen", _REASONS["frozen"].format(what=frozen[where])
    if side == "trace" and name in NO_OP_OPS:
        return "no_op", _REASONS["no_op"]
    return f"only_{side}", _REASONS[f"only_{side}"]


def _differences(
    trace_nodes: list[Node],
    export_nodes: list[Node],
    frozen: dict[tuple[str, int], str],
    trace_sizes: set[int],
    export_sizes: set[int],
    unpacking: Container[int] = (),
    callers: Container[tuple[str, int]] = (),
) -> list[LineDifference]:
    """Unmatched ops grouped by (file, line, reason); ``*_sizes``: each side's shape arithmetic; ``unpacking``: the
    trace's reads of a structured input's items (:func:`input_unpacking`); ``callers``: lines that are no op's own."""
    groups: dict[tuple[str, int, str], LineDifference] = {}
    for side, nodes, sizes in (("trace", trace_nodes, trace_sizes), ("export", export_nodes, export_sizes)):
        for n in nodes:
            file, line, code = _place(n)
            if (file, line) in callers:
                file, line, code = "", 0, ""
            reason, detail = _reason(n, side, frozen, n.id in sizes, side == "trace" and n.id in unpacking)
            diff = groups.get((file, line, reason))
            if diff is None:
                diff = groups[(file, line, reason)] = LineDifference(file, line, code, reason, detail)
            (diff.trace_nodes if side == "trace" else diff.export_nodes).append(n.id)
    return list(groups.values())


def _in_program_order(lines: list[LineDifference], pairs: list[tuple[Node, Node]]) -> list[LineDifference]:
    """The lines in the order the model runs them (a line's first trace op; an export-only line just after the
    matched op before it), those with no source line last. Not by file name: that order would change with the
    directory a model (or a notebook's cell) happens to live in."""
    pairs_by_export = sorted((b.id, a.id) for a, b in pairs)
    export_ids = [e for e, _ in pairs_by_export]

    def position(d: LineDifference) -> float:
        if d.trace_nodes:
            return min(d.trace_nodes)
        first = min(d.export_nodes)
        before = bisect.bisect_left(export_ids, first)
        return pairs_by_export[before - 1][1] + 0.5 if before else -0.5

    return sorted(lines, key=lambda d: (not d.file, position(d), d.line, d.reason))


__all__ = [
    "CHECK_OPS",
    "NO_OP_OPS",
    "SHAPE_OPS",
    "CaptureComparison",
    "LineDifference",
    "TraceComparison",
    "bare_name",
    "compare_captures",
]
