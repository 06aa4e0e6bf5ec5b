"""Is this saved run something we can read? (``TraceRun.from_json`` / ``TraceRun.load`` ask before decoding.)

A run read from a file may have been edited, cut short or written by another version. Two checks, each the one
definition on this side (``labextension/src/model/validate.ts`` and ``references.ts`` are the front end's):

- the run's JSON Schema (``run.schema.json``), checked by a small validator compiled from the keywords that schema
  uses (:mod:`.schema_validator`, which says why not ``jsonschema`` and where it deviates on purpose);
- the references inside it (:func:`reference_problem`): every id points at something that exists (strings, frames,
  stacks, values, nodes, blocks, divergence endpoints, warnings', findings' and export guards' nodes), a block's
  nodes are its node's children, and attribute values are not nested deeper than the renderers walk.

Either gives one :class:`RunInvalid` (a ``ValueError``) naming where (a JSON pointer) and what is wrong.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping, Sequence
from importlib import resources
from typing import Any

from .registry import backend
from .schema_validator import JSON_TYPES, Check, SchemaCompiler, json_kind, json_pointer

__all__ = ["MAX_ATTRIBUTE_DEPTH", "RunInvalid", "check_run", "reference_problem", "schema_problem"]

#: attribute values (a node's constants) nested deeper than this are refused: the renderers walk them recursively
MAX_ATTRIBUTE_DEPTH = 64


class RunInvalid(ValueError):
    """A saved run that does not match the run schema or whose ids point nowhere."""

    def __init__(self, location: str, detail: str) -> None:
        self.location = location
        self.detail = detail
        super().__init__(f"not a valid jupyter-tracejit run: at {location or '/'}: {detail}")


# -- the schema (the validator is schema_validator.py) -------------------------------------------------------------
@functools.cache
def run_schema() -> dict[str, Any]:
    """The run schema (core/run.schema.json), read once."""
    schema: dict[str, Any] = json.loads((resources.files(__package__) / "run.schema.json").read_text(encoding="utf-8"))
    return schema


@functools.cache
def _run_check() -> Check:
    schema = run_schema()
    return SchemaCompiler(schema).compile(schema)


def schema_problem(data: Any) -> tuple[str, str] | None:
    """``(JSON pointer, what is wrong)`` for the first place ``data`` does not match the run schema, or ``None``."""
    problem = _run_check()(data)
    if problem is None:
        return None
    parts, detail = problem
    path = ""
    for key in reversed(parts):
        path = json_pointer(path, key)
    return path, detail


# -- references --------------------------------------------------------------------------------------------------
def _index(value: int, size: int, what: str, optional: bool = False) -> str | None:
    """Why ``value`` is not an index of a table of ``size`` (``-1`` allowed when ``optional``), or ``None``."""
    if (optional and value == -1) or 0 <= value < size:
        return None
    has = f"{size} {what}s, 0..{size - 1}" if size else f"no {what}s"
    return f"{what} {value} points nowhere (the graph has {has}{', or -1 for none' if optional else ''})"


def _attribute_problem(attributes: Any) -> str | None:
    """Why a node's attribute values cannot be shown, or ``None``: nested deeper than the renderers walk
    (iteratively here: the value may be deeper than the interpreter's recursion limit), or a tensor constant
    (``{"tensor": {"dtype": ..., "shape": [...], "preview": [...]}}``) of another form than the one they read."""
    stack: list[tuple[Any, int]] = [(attributes, 0)]
    while stack:
        item, depth = stack.pop()
        if not isinstance(item, (list, tuple, Mapping)):
            continue
        if depth >= MAX_ATTRIBUTE_DEPTH:
            return f"attribute values nest deeper than {MAX_ATTRIBUTE_DEPTH} levels"
        if isinstance(item, Mapping) and "tensor" in item:
            tensor = item["tensor"]
            if not isinstance(tensor, Mapping):
                return "a tensor constant must be an object"
            for key, kind in (("shape", "array"), ("preview", "array"), ("dtype", "string")):
                if key in tensor and not JSON_TYPES[kind](tensor[key]):
                    return f"a tensor constant's {key} must be {kind}, not {json_kind(tensor[key])}"
        stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, Mapping) else item))
    return None


class _GraphCheck:
    """The ids of one saved graph, checked table by table (the order references.ts's ``graphProblems`` keeps)."""

    def __init__(self, graph: Mapping[str, Any], at: str) -> None:
        self.graph, self.at = graph, at
        self.strings = len(graph["strings"])
        self.frames, self.stacks = graph["frames"], graph["stacks"]
        self.values, self.nodes = graph["values"], graph["nodes"]

    def string(self, i: int, where: str) -> Iterator[tuple[str, str]]:
        why = _index(i, self.strings, "string")
        if why:
            yield where, why

    def frame_problems(self) -> Iterator[tuple[str, str]]:
        for i, (file, _line, func, code, _internal) in enumerate(self.frames):
            for column in (0, 2, 3):
                yield from self.string((file, _line, func, code)[column], f"{self.at}/frames/{i}/{column}")

    def stack_problems(self) -> Iterator[tuple[str, str]]:
        for i, row in enumerate(self.stacks):
            for j, frame in enumerate(row[1:], start=1):
                why = _index(frame, len(self.frames), "frame")
                if why:
                    yield f"{self.at}/stacks/{i}/{j}", why
            if not 0 <= row[0] < len(row) - 1:
                yield (
                    f"{self.at}/stacks/{i}/0",
                    f"the user frame {row[0]} is not one of the stack's {len(row) - 1} frames",
                )

    def value_problems(self) -> Iterator[tuple[str, str]]:
        nodes = self.nodes
        for i, (name, typ, _shape, dtype, device, _grad, producer) in enumerate(self.values):
            here = f"{self.at}/values/{i}"
            yield from self.string(name, f"{here}/0")
            yield from self.string(typ, f"{here}/1")
            for column, index in ((3, dtype), (4, device)):
                if index != -1:
                    yield from self.string(index, f"{here}/{column}")
            why = _index(producer, len(nodes), "node", optional=True)
            if why:
                yield f"{here}/6", why
            elif producer != -1 and i not in nodes[producer][2]:
                yield f"{here}/6", f"node {producer} is named as its producer but does not output value {i}"

    def node_problems(self) -> Iterator[tuple[str, str]]:
        values, nodes = self.values, self.nodes
        block_owner: dict[int, int] = {}
        for i, (kind, inputs, outputs, scope, stack, attributes, blocks, parent, _flags, _role, *title) in enumerate(
            nodes
        ):
            here = f"{self.at}/nodes/{i}"
            yield from self.string(kind, f"{here}/0")
            yield from self.string(scope, f"{here}/3")
            for column in title:  # absent in a graph saved before titles
                yield from self.string(column, f"{here}/10")
            for column, ids in ((1, inputs), (2, outputs)):
                for j, v in enumerate(ids):
                    why = _index(v, len(values), "value")
                    if why:
                        yield f"{here}/{column}/{j}", why
                    elif column == 1 and values[v][6] >= i:
                        # graph order is data order: a value is read after the node that makes it (no cycles)
                        yield f"{here}/1/{j}", f"value {v} is read by node {i} before node {values[v][6]} makes it"
            for column, why in (
                (4, _index(stack, len(self.stacks), "stack", optional=True)),
                (5, _attribute_problem(attributes) if attributes else None),
                (7, _index(parent, len(nodes), "node", optional=True)),
            ):
                if why:
                    yield f"{here}/{column}", why
            yield from self.block_problems(i, blocks or [], block_owner)

    def block_problems(self, i: int, blocks: list[Any], block_owner: dict[int, int]) -> Iterator[tuple[str, str]]:
        """Node ``i`` 's blocks: their values exist, and each node they hold is in no other block and names ``i``
        as its parent."""
        nodes, here = self.nodes, f"{self.at}/nodes/{i}"
        for b, (b_inputs, b_outputs, b_nodes) in enumerate(blocks):
            for column, ids in ((0, b_inputs), (1, b_outputs)):
                for j, v in enumerate(ids):
                    why = _index(v, len(self.values), "value")
                    if why:
                        yield f"{here}/6/{b}/{column}/{j}", why
            for j, child in enumerate(b_nodes):
                where = f"{here}/6/{b}/2/{j}"
                why = _index(child, len(nodes), "node")
                if why:
                    yield where, why
                elif child in block_owner:
                    yield where, f"node {child} is already in a block of node {block_owner[child]}"
                elif nodes[child][7] != i:
                    yield where, f"node {child} is in a block of node {i} but its parent is {nodes[child][7]}"
                else:
                    block_owner[child] = i

    def parent_cycle(self) -> Iterator[tuple[str, str]]:
        """Parents are in the table and match their blocks (above): now no node may be its own ancestor. Each node
        is walked up once (0: not seen, 1: on this walk, 2: reaches the top): a long chain costs no more than its
        length."""
        nodes = self.nodes
        state = [0] * len(nodes)
        for i in range(len(nodes)):
            walk, j = [], i
            while 0 <= j < len(nodes) and state[j] == 0:
                state[j] = 1
                walk.append(j)
                j = nodes[j][7]
            if 0 <= j < len(nodes) and state[j] == 1:
                yield f"{self.at}/nodes/{i}/7", f"node {i} is inside itself (its parents go round in a circle)"
                return
            for k in walk:
                state[k] = 2

    def end_and_scope_problems(self) -> Iterator[tuple[str, str]]:
        for key in ("inputs", "outputs"):
            for j, v in enumerate(self.graph[key]):
                why = _index(v, len(self.values), "value")
                if why:
                    yield f"{self.at}/{key}/{j}", why
        for i, (path, typ) in enumerate(self.graph["scopes"]):
            yield from self.string(path, f"{self.at}/scopes/{i}/0")
            yield from self.string(typ, f"{self.at}/scopes/{i}/1")


def _graph_problems(graph: Mapping[str, Any], at: str) -> Iterator[tuple[str, str]]:
    check = _GraphCheck(graph, at)
    yield from check.frame_problems()
    yield from check.stack_problems()
    yield from check.value_problems()
    yield from check.node_problems()
    yield from check.parent_cycle()
    yield from check.end_and_scope_problems()


def _node_ids(ids: Sequence[int], graph: Mapping[str, Any] | None, at: str) -> Iterator[tuple[str, str]]:
    size = len(graph["nodes"]) if graph is not None else 0
    for j, node in enumerate(ids):
        why = _index(node, size, "node")
        if why:
            yield f"{at}/{j}", why


def _diff_problems(
    diff: Mapping[str, Any], trace: Mapping[str, Any] | None, check: Mapping[str, Any] | None, at: str
) -> Iterator[tuple[str, str]]:
    trace_nodes = len(trace["nodes"]) if trace is not None else 0
    check_nodes = len(check["nodes"]) if check is not None else 0
    for i, (a, b, _kind, _reason) in enumerate(diff["divergences"]):
        for column, node, size in ((0, a, trace_nodes), (1, b, check_nodes)):
            why = _index(node, size, "node", optional=True)
            if why:
                yield f"{at}/divergences/{i}/{column}", why
    for i, c in enumerate(diff["constant_diffs"]):
        for key, size in (("trace_node", trace_nodes), ("check_node", check_nodes)):
            why = _index(c[key], size, "node")
            if why:
                yield f"{at}/constant_diffs/{i}/{key}", why
    for i, (a, b, length) in enumerate(diff["matched_runs"]):
        if length < 0 or a < 0 or b < 0 or a + length > trace_nodes or b + length > check_nodes:
            yield (
                f"{at}/matched_runs/{i}",
                f"the run [{a}, {b}, {length}] reaches past the graphs' nodes ({trace_nodes} and {check_nodes})",
            )


def reference_problems(data: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Every ``(JSON pointer, what is wrong)`` for an id of a schema-valid run that points nowhere."""
    graphs: Mapping[str, Any] = data["graphs"]
    for method, graph in graphs.items():
        yield from _graph_problems(graph, json_pointer("/graphs", method))
    for key in ("warnings", "findings"):
        for i, item in enumerate(data[key]):
            # node ids are of the graph of the item's method; one with no graph (a failed trace) has none
            yield from _node_ids(item["node_ids"], graphs.get(item["method"]), f"/{key}/{i}/node_ids")
    records = data.get("records")
    records_class = backend(data["backend"]).records_class() if records else None
    for pointer, method, ids in records_class.node_references(records) if records_class is not None else ():
        # the back end's records name nodes of its graphs (an export's guards, of forward)
        yield from _node_ids(ids, graphs.get(method), f"/records{pointer}")
    compared = data.get("compared")
    if compared:
        # trace node ids point into the compared trace's graph, export ones into the run's forward graph
        trace, comparison, forward = compared["trace"], compared["comparison"], graphs.get("forward")
        yield from _graph_problems(trace, "/compared/trace")
        for i, (a, b) in enumerate(comparison["matched"]):
            for column, node, graph in ((0, a, trace), (1, b, forward)):
                why = _index(node, len(graph["nodes"]) if graph is not None else 0, "node")
                if why:
                    yield f"/compared/comparison/matched/{i}/{column}", why
        for i, line in enumerate(comparison["lines"]):
            at = f"/compared/comparison/lines/{i}"
            yield from _node_ids(line["trace_nodes"], trace, f"{at}/trace_nodes")
            yield from _node_ids(line["export_nodes"], forward, f"{at}/export_nodes")
    check = data["check"]
    for i, case in enumerate(check["cases"] if check else []):
        at = f"/check/cases/{i}"
        if case["graph"] is not None:
            yield from _graph_problems(case["graph"], f"{at}/graph")
        if case["diff"] is not None:
            trace = graphs.get(case["method"])
            # the re-trace's graph is stored only when it differs; otherwise it is the trace's
            yield from _diff_problems(case["diff"], trace, case["graph"] or trace, f"{at}/diff")


def reference_problem(data: Mapping[str, Any]) -> tuple[str, str] | None:
    """The first :func:`reference_problems` of a schema-valid run, or ``None``."""
    return next(reference_problems(data), None)


def check_run(data: Any) -> None:
    """Raise :class:`RunInvalid` when ``data`` does not match the run schema or holds ids that point nowhere."""
    problem = schema_problem(data) or reference_problem(data)
    if problem is not None:
        raise RunInvalid(*problem)
