"""Structural diff of two graphs (a trace and its check re-trace, or any two runs).

torch compares the printed graphs with ``difflib.ndiff`` and names the first pair of nodes whose
text differs, which is often a false lead (a debug name, a ``___torch_mangle_N`` class name). Here
nodes are identified by *what they compute from what*:

- graph inputs by position; a node by its kind, non-tensor constant values and attributes, the
  identities of its inputs, its output count and the content of its blocks; an output by its
  node and position. Debug names, shapes and mangled class names play no part.
- Tensor constants are identified by dtype, shape and occurrence, and their *values* are compared
  separately (as torch does), so a changed tensor constant is reported as a value difference.
- Nodes with equal identity are matched in topological order (the k-th occurrence in one graph
  with the k-th in the other). What is left diverges.
- A divergent node whose inputs all match is a **root**: the place where the graphs first part.
  Divergent nodes that read a divergent value are **downstream**. Constants and list/tuple
  plumbing are looked through: a changed constant makes its consumer the root.
- Downstream nodes are paired op with op (kind and line). One that is more than a consequence is a root of its
  own, a second cause that would otherwise hide behind the first: at a line holding no root, an op the other side
  records fewer times (a loop over a shape ran another number of times) or whose constant arguments differ (a size
  frozen into the trace).

Everything is linear in the graph size.
"""

from __future__ import annotations

import json
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .graph import Graph, Node
from .jsonio import JsonRecord
from .loops import enclosing_loop, loops_in

ROOT = "root"
DOWNSTREAM = "downstream"


@dataclass(frozen=True)
class Divergence:
    """A pair of corresponding nodes that differ; one side is ``None`` when the node has no counterpart."""

    trace_node: int | None
    check_node: int | None
    kind: str  # ROOT or DOWNSTREAM
    reason: str = ""

    def to_json(self) -> list[Any]:
        return [
            -1 if self.trace_node is None else self.trace_node,
            -1 if self.check_node is None else self.check_node,
            0 if self.kind == ROOT else 1,
            self.reason,
        ]

    @classmethod
    def from_json(cls, row: list[Any]) -> Divergence:
        a, b, k, reason = row
        return cls(None if a < 0 else a, None if b < 0 else b, ROOT if k == 0 else DOWNSTREAM, reason)


@dataclass(frozen=True)
class ConstantDiff(JsonRecord):
    """Matched tensor constants whose values differ."""

    trace_node: int
    check_node: int
    message: str
    max_abs: float | None = None


@dataclass
class GraphDiff:
    """The result of :func:`structural_diff`. ``divergences`` lists roots first, then downstream nodes."""

    divergences: list[Divergence] = field(default_factory=list)
    constant_diffs: list[ConstantDiff] = field(default_factory=list)
    #: trace node id -> check node id for every matched node
    matched: dict[int, int] = field(default_factory=dict)

    @property
    def roots(self) -> list[Divergence]:
        return [d for d in self.divergences if d.kind == ROOT]

    @property
    def downstream(self) -> list[Divergence]:
        return [d for d in self.divergences if d.kind == DOWNSTREAM]

    @property
    def first(self) -> Divergence | None:
        return self.divergences[0] if self.divergences else None

    @property
    def identical(self) -> bool:
        return not self.divergences and not self.constant_diffs

    def trace_partner(self, check_node: int) -> int | None:
        inverse = getattr(self, "_inverse", None)
        if inverse is None:
            inverse = {b: a for a, b in self.matched.items()}
            self._inverse = inverse
        return inverse.get(check_node)

    def to_json(self) -> dict[str, Any]:
        # matched pairs mostly run in lock-step: store [trace_start, check_start, length] runs
        runs: list[list[int]] = []
        for a, b in sorted(self.matched.items()):
            if runs and runs[-1][0] + runs[-1][2] == a and runs[-1][1] + runs[-1][2] == b:
                runs[-1][2] += 1
            else:
                runs.append([a, b, 1])
        return {
            "divergences": [d.to_json() for d in self.divergences],
            "constant_diffs": [c.to_json() for c in self.constant_diffs],
            "matched_runs": runs,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GraphDiff:
        matched: dict[int, int] = {}
        for a, b, n in data["matched_runs"]:
            for i in range(n):
                matched[a + i] = b + i
        return cls(
            divergences=[Divergence.from_json(r) for r in data["divergences"]],
            constant_diffs=[ConstantDiff.from_json(c) for c in data["constant_diffs"]],
            matched=matched,
        )


#: compares two tensor constants (trace node id, check node id) -> (message, max_abs) or None when equal
TensorCompare = Callable[[int, int], "tuple[str, float | None] | None"]


class _Interner:
    """Maps structural keys to small ints shared by both graphs, so equal ints mean equal content."""

    def __init__(self) -> None:
        self.table: dict[Any, int] = {}

    def __call__(self, key: Any) -> int:
        found = self.table.get(key)
        if found is None:
            found = self.table[key] = len(self.table)
        return found


def _freeze(value: Any) -> Any:
    """A hashable key of an attribute value that tells types apart (``0``, ``False`` and ``0.0`` are equal in
    Python, but a constant ``False`` is not the constant ``0``)."""
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True)
    return (type(value).__name__, value)


def _keys(graph: Graph, intern: _Interner, by_scope: bool = False) -> list[int]:
    """The structural key of every node of ``graph`` (index = node id); ``by_scope``: an op's module scope is part
    of its key."""
    value_key = [0] * len(graph.values)
    node_key = [0] * len(graph.nodes)
    for pos, v in enumerate(graph.inputs):
        value_key[v] = intern(("input", pos))
    tensor_seen: dict[tuple[Any, ...], int] = {}

    def attr_key(n: Node) -> Any:
        if not n.attributes:
            return None
        if n.role == "constant":
            val = n.attributes.get("value")
            if isinstance(val, dict) and "tensor" in val:
                t = val["tensor"]
                sig = ("tensor", t.get("dtype"), tuple(t.get("shape", ())))
                occurrence = tensor_seen.get(sig, 0)
                tensor_seen[sig] = occurrence + 1
                return (*sig, occurrence)
        return tuple((k, _freeze(v)) for k, v in sorted(n.attributes.items()))

    def visit(n: Node) -> None:
        pre = intern(
            # ops only: constants and attribute reads are what they hold (their scope is where a back end put them)
            (
                n.kind,
                attr_key(n),
                tuple(value_key[v] for v in n.inputs),
                len(n.outputs),
                n.scope if by_scope and n.role == "op" else "",
            )
        )
        key = pre
        if n.blocks:
            sigs = []
            for bi, blk in enumerate(n.blocks):
                for j, v in enumerate(blk.inputs):
                    value_key[v] = intern(("block_input", pre, bi, j))
                for child in blk.nodes:
                    visit(graph.nodes[child])
                sigs.append(intern((tuple(node_key[c] for c in blk.nodes), tuple(value_key[v] for v in blk.outputs))))
            key = intern((pre, tuple(sigs)))
        node_key[n.id] = key
        for i, v in enumerate(n.outputs):
            value_key[v] = intern(("output", key, i))

    for n in graph.nodes:
        if n.parent is None:
            visit(n)
    return node_key


def _tainted_unmatched(graph: Graph, matched: set[int]) -> tuple[list[int], list[int], list[int], dict[int, int]]:
    """Split the unmatched nodes of one graph into (roots, downstream, unmatched foldable, origin), where origin
    maps each downstream node to the first root it depends on.

    A changed constant (or list of constants) taints nothing by itself: the op reading it is the root. An
    unmatched unpack of a matched value is a root of its own: a ``prim::ListUnpack`` of ``aten::unbind`` unpacking
    5 rows instead of 3 is where a loop over a tensor diverges.
    """
    origin_of_value: list[int | None] = [None] * len(graph.values)
    roots: list[int] = []
    downstream: list[int] = []
    foldable: list[int] = []
    origin: dict[int, int] = {}
    for n in graph.nodes:
        if n.id in matched:
            continue
        sources = [origin_of_value[v] for v in n.inputs if origin_of_value[v] is not None]
        source = sources[0] if sources else None
        if n.foldable:
            foldable.append(n.id)
            producers = [graph.values[v].producer for v in n.inputs]
            unpacks_a_match = bool(producers) and all(p is None or p in matched for p in producers)
            if n.role == "unpack" and source is None and unpacks_a_match:
                roots.append(n.id)
                source = n.id
        elif source is None:
            roots.append(n.id)
            source = n.id
        else:
            downstream.append(n.id)
            origin[n.id] = source
        if source is not None:
            for v in n.outputs:
                origin_of_value[v] = source
    return roots, downstream, foldable, origin


def _describe_constant(graph: Graph, value_id: int, depth: int = 0, *, detailed: bool = False) -> str | None:
    """A constant input as text (``3``, ``[0, 1]``), looking through list/tuple plumbing; None otherwise.

    ``detailed``: tensor constants also name their dtype, shape and content digest, for two constants whose
    previews read the same."""
    from .graph import format_attribute, python_number

    producer = graph.producer(value_id)
    if producer is None or depth > 4:
        return None
    if producer.role == "constant":
        if not producer.attributes:
            return "None"
        if isinstance(producer.attributes.get("value"), dict) and "tensor" in producer.attributes["value"]:
            text = "tensor constant " + _preview(graph, producer.id)
            if detailed:
                t = producer.attributes["value"]["tensor"]
                shape = ", ".join(str(d) for d in t.get("shape", []))
                text += f" ({t.get('dtype', '?')}[{shape}], digest {t.get('digest', '?')})"
            return text
        return format_attribute(producer.attributes.get("value"), python_number)
    if producer.role in ("list", "tuple"):
        items = [_describe_constant(graph, v, depth + 1, detailed=detailed) for v in producer.inputs]
        if all(i is not None for i in items):
            inner = ", ".join(i for i in items if i is not None)
            return f"[{inner}]" if producer.role == "list" else f"({inner})"
    return None


def _preview(graph: Graph, node_id: int) -> str:
    from .graph import format_attribute, python_number

    value = graph.nodes[node_id].attributes.get("value")
    if isinstance(value, dict) and "tensor" in value:
        t = value["tensor"]
        items = [format_attribute(x, python_number) for x in t.get("preview", [])]
        if not t.get("shape"):
            return items[0] if items else "?"
        more = ", ..." if len(items) < _numel(t.get("shape", [])) else ""
        return "[" + ", ".join(items) + more + "]"
    return format_attribute(value, python_number)


def _numel(shape: list[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _reason(a: Graph, b: Graph, an: Node | None, bn: Node | None, matched_values: dict[int, int]) -> str:
    if an is None and bn is not None:
        return f"only in the check trace: {bn.kind}"
    if bn is None and an is not None:
        return f"only in the trace: {an.kind}"
    assert an is not None and bn is not None
    if an.kind != bn.kind:
        return f"{an.kind} in the trace, {bn.kind} in the check trace"
    if len(an.inputs) != len(bn.inputs):
        return f"{an.kind} takes {len(an.inputs)} inputs in the trace, {len(bn.inputs)} in the check trace"
    for i, (va, vb) in enumerate(zip(an.inputs, bn.inputs, strict=True)):
        if matched_values.get(va) == vb:
            continue
        ca, cb = _describe_constant(a, va), _describe_constant(b, vb)
        if ca is not None and ca == cb:  # same text: say what differs beneath it (dtype, digest)
            ca, cb = _describe_constant(a, va, detailed=True), _describe_constant(b, vb, detailed=True)
        if (ca is not None or cb is not None) and ca != cb:
            return f"input {i} of {an.kind} differs: {ca or '%' + a.values[va].name} vs {cb or '%' + b.values[vb].name}"
        oa, ob = _origin(a, va), _origin(b, vb)
        if oa == ob:  # never name two identical texts as different
            return f"input {i} of {an.kind} comes from another computation: {oa}, whose own inputs differ"
        return f"input {i} of {an.kind} comes from another computation: {oa} vs {ob}"
    if an.attributes != bn.attributes:
        return f"attributes of {an.kind} differ"
    if len(an.outputs) != len(bn.outputs):
        if an.role == "unpack":
            source = a.producer(an.inputs[0]) if an.inputs else None
            what = f"the result of {source.kind}" if source is not None else "its input"
            because = (
                ": a loop over a tensor (for row in x) was unrolled for its length"
                if source is not None and source.kind == "aten::unbind"
                else ""
            )
            line = _line(a, an)
            at = f" (line {line})" if line is not None else ""
            return (
                f"{an.kind} unpacks {len(an.outputs)} values of {what}{at} in the trace, {len(bn.outputs)} in the "
                f"check trace{because}"
            )
        return f"{an.kind} has {len(an.outputs)} outputs in the trace, {len(bn.outputs)} in the check trace"
    return f"blocks of {an.kind} differ"


def _origin(graph: Graph, value_id: int) -> str:
    """Where a value comes from, in words that differ for different values: ``%x (input 0)``,
    ``%row.1 (output 2 of prim::ListUnpack, line 12)``."""
    value = graph.values[value_id]
    producer = graph.producer(value_id)
    if producer is None:
        where = f"input {graph.inputs.index(value_id)}" if value_id in graph.inputs else "a block input"
        return f"%{value.name} ({where})"
    line = f", line {producer.source.line}" if producer.source is not None else ""
    index = producer.outputs.index(value_id)
    return f"%{value.name} (output {index} of {producer.kind}{line})"


def _line(graph: Graph, node: Node) -> int | None:
    """A node's user line (plumbing without one takes its input's, see :func:`_recorded_at`)."""
    place = _recorded_at(graph, node)
    return place[1] if place is not None else None


def _follows(graph: Graph, root_id: int, side: str) -> str:
    root = graph.nodes[root_id]
    line = _line(graph, root)
    where = f" at line {line}" if line is not None else ""
    return f"follows from the divergence{where} ({root.kind} in the {side})"


def _pair_in_order(ga: list[int], gb: list[int]) -> list[tuple[int | None, int | None]]:
    """The k-th divergent node of one graph with the k-th of the other, the longer side's rest alone."""
    return [(ga[i] if i < len(ga) else None, gb[i] if i < len(gb) else None) for i in range(max(len(ga), len(gb)))]


def _pair_in_scope(a: Graph, b: Graph, ga: list[int], gb: list[int]) -> list[tuple[int | None, int | None]]:
    """:func:`_pair_in_order` within each module scope: a node of one scope is never the changed version of a node
    of another (a layer added before ``norm`` is added, and ``norm`` reads other inputs); the scopes of ``ga`` in
    its order, those only in ``gb`` after them."""
    scopes_a: dict[str, list[int]] = {}
    for x in ga:
        scopes_a.setdefault(a.nodes[x].scope, []).append(x)
    scopes_b: dict[str, list[int]] = {}
    for y in gb:
        scopes_b.setdefault(b.nodes[y].scope, []).append(y)
    pairs: list[tuple[int | None, int | None]] = []
    for scope in [*scopes_a, *(s for s in scopes_b if s not in scopes_a)]:
        pairs += _pair_in_order(scopes_a.get(scope, []), scopes_b.get(scope, []))
    return pairs


def _place(node: Node) -> tuple[str, int] | None:
    return (node.source.file, node.source.line) if node.source is not None else None


def _pair_by_op(
    a: Graph, b: Graph, ga: list[int], gb: list[int], by_scope: bool = False
) -> list[tuple[int | None, int | None]]:
    """Downstream nodes paired by what they are: the k-th op of a kind at a line with the k-th of that kind and line
    on the other side, then what is left of both sides in order (``aten::sin`` changed into ``aten::cos``); only the
    surplus of the longer side stays alone. Pairing by position alone would pair an ``aten::relu`` with an
    ``aten::add`` as soon as one side ran a loop more often, and hide which ops it recorded more. ``by_scope``: the
    scope is part of what a node is (two modules of one class share their lines)."""

    def what(graph: Graph, nid: int) -> tuple[str, tuple[str, int] | None, str]:
        node = graph.nodes[nid]
        return node.kind, _place(node), node.scope if by_scope else ""

    waiting: dict[tuple[str, tuple[str, int] | None, str], deque[int]] = {}
    for y in gb:
        waiting.setdefault(what(b, y), deque()).append(y)
    partner: dict[int, int] = {}
    for x in ga:
        queue = waiting.get(what(a, x))
        if queue:
            partner[x] = queue.popleft()
    taken = set(partner.values())
    left_a, left_b = [x for x in ga if x not in partner], [y for y in gb if y not in taken]
    leftover = _pair_in_scope(a, b, left_a, left_b) if by_scope else _pair_in_order(left_a, left_b)
    paired_left = {x: (x, y) for x, y in leftover if x is not None}
    # in the trace's order, each leftover trace node with its leftover partner; the check's surplus last
    pairs = [(x, partner[x]) if x in partner else paired_left[x] for x in ga]
    return pairs + [p for p in leftover if p[0] is None]


def _rejoin_lone_roots(
    a: Graph,
    b: Graph,
    roots: list[tuple[float, Divergence]],
    downstream: list[tuple[float, Divergence]],
    matched_values: dict[int, int],
) -> tuple[list[tuple[float, Divergence]], list[tuple[float, Divergence]]]:
    """A root alone on one side and an op alone downstream on the other, of the same scope, kind and line, are one
    op that reads other inputs: a layer added before ``norm`` makes the old ``norm``'s first op a root (its input was
    matched) and the new one downstream of the added layer. Paired, ``norm`` reads other inputs, not removed."""

    def what(graph: Graph, nid: int) -> tuple[str, str, tuple[str, int] | None]:
        node = graph.nodes[nid]
        return node.scope, node.kind, _place(node)

    lone_down: dict[tuple[bool, tuple[str, str, tuple[str, int] | None]], deque[int]] = {}
    for i, (_, d) in enumerate(downstream):
        if d.trace_node is None and d.check_node is not None:
            lone_down.setdefault((False, what(b, d.check_node)), deque()).append(i)
        elif d.check_node is None and d.trace_node is not None:
            lone_down.setdefault((True, what(a, d.trace_node)), deque()).append(i)
    if not lone_down:
        return roots, downstream
    taken: set[int] = set()
    rejoined: list[tuple[float, Divergence]] = []
    for order, d in roots:
        # a lone old root looks for a lone new op downstream (False: on the check side), and the other way round
        key = (
            (False, what(a, d.trace_node))
            if d.check_node is None and d.trace_node is not None
            else (True, what(b, d.check_node))
            if d.trace_node is None and d.check_node is not None
            else None
        )
        queue = lone_down.get(key) if key is not None else None
        if not queue:
            rejoined.append((order, d))
            continue
        i = queue.popleft()
        taken.add(i)
        other = downstream[i][1]
        x = d.trace_node if d.trace_node is not None else other.trace_node
        y = d.check_node if d.check_node is not None else other.check_node
        assert x is not None and y is not None
        reason = _reason(a, b, a.nodes[x], b.nodes[y], matched_values)
        rejoined.append((float(x), Divergence(x, y, ROOT, reason)))
    rejoined.sort(key=lambda t: t[0])
    return rejoined, [t for i, t in enumerate(downstream) if i not in taken]


def _causes_of_their_own(
    graphs: tuple[Graph, Graph],
    roots: list[Divergence],
    downstream: list[Divergence],
    matched_values: dict[int, int],
    by_scope: bool = False,
) -> dict[int, Divergence]:
    """Downstream divergences that are causes of their own, by ``id()`` of the divergence, as roots with the reason.

    A divergence reads a diverged value, so the diff calls it downstream; but when no root sits at its line (nor in
    the loop that holds it) and it is more than a consequence, it is a second cause, which would otherwise hide
    behind the first: an op the other side records fewer times at that line (a loop over a shape ran another number
    of times, a later branch went the other way), or an op whose constant arguments differ (a size frozen into the
    trace). ``by_scope``: counted per module scope (a line of a module class used by one more layer records its
    ops once more, which is the layer's change, not the line's).
    """
    a, b = graphs
    rooted: set[tuple[str, int]] = set()
    for d in roots:
        for graph, node_id in ((a, d.trace_node), (b, d.check_node)):
            place = _recorded_at(graph, graph.nodes[node_id]) if node_id is not None else None
            if place is not None:
                rooted.add(place)
    spans: dict[str, tuple[tuple[int, int], ...]] = {}

    def explained_by_a_root(place: tuple[str, int]) -> bool:
        """A root at this line, or in the loop that holds it (the loop is then that root's own)."""
        file, line = place
        if file not in spans:
            spans[file] = loops_in(file)
        loop = enclosing_loop(file, line, spans[file])
        if loop is None:
            return place in rooted
        return any(f == file and loop[0] <= at <= loop[1] for f, at in rooted)

    own: dict[int, Divergence] = {}
    recorded: list[Counter[tuple[str, tuple[str, int] | None, str]]] = []  # per graph, counted once when needed
    for d in downstream:
        an = a.nodes[d.trace_node] if d.trace_node is not None else None
        bn = b.nodes[d.check_node] if d.check_node is not None else None
        node = an if an is not None else bn
        assert node is not None
        place = _place(node)
        if place is None or explained_by_a_root(place):
            continue
        if an is None or bn is None:
            if not recorded:
                recorded += [Counter((n.kind, _place(n), n.scope if by_scope else "") for n in g.nodes) for g in (a, b)]
            in_trace, in_check = (count[(node.kind, place, node.scope if by_scope else "")] for count in recorded)
            if in_trace == in_check:  # alone only because of where it sits, not recorded more often
                continue
            side = "trace" if bn is None else "check trace"
            reason = (
                f"only in the {side}: {node.kind} (line {place[1]} records it {in_trace} time"
                f"{'' if in_trace == 1 else 's'} in the trace, {in_check} in the check trace: a cause of its own)"
            )
        else:
            differs = _constant_difference(a, b, an, bn, matched_values)
            if differs is None:
                continue
            reason = differs
        own[id(d)] = Divergence(d.trace_node, d.check_node, ROOT, reason)
    return own


def _recorded_at(graph: Graph, node: Node) -> tuple[str, int] | None:
    """A node's user line; plumbing the tracer records without one takes its input's (``for row in x``)."""
    for _ in range(4):
        if node.source is not None:
            return _place(node)
        producer = graph.producer(node.inputs[0]) if node.inputs else None
        if producer is None:
            return None
        node = producer
    return None


def _constant_difference(a: Graph, b: Graph, an: Node, bn: Node, matched_values: dict[int, int]) -> str | None:
    """``input 1 of aten::view differs: [3, -1] vs [5, -1]`` when paired ops read constants that differ."""
    if an.kind != bn.kind or len(an.inputs) != len(bn.inputs):
        return None
    for i, (va, vb) in enumerate(zip(an.inputs, bn.inputs, strict=True)):
        if matched_values.get(va) == vb:
            continue
        ca, cb = _describe_constant(a, va), _describe_constant(b, vb)
        if ca is not None and cb is not None and ca != cb:
            return f"input {i} of {an.kind} differs: {ca} vs {cb} (a cause of its own)"
    return None


def structural_diff(
    a: Graph, b: Graph, *, compare_tensors: TensorCompare | None = None, by_scope: bool = False
) -> GraphDiff:
    """Diff graph ``a`` (the trace) against graph ``b`` (the check trace, or another run).

    ``compare_tensors`` compares the values of matched tensor constants; without it their digests
    (from the JSON) are compared. ``by_scope`` (two versions of a model): nodes match, and pair as changed, only
    within the same module scope. Without it a layer added before the final norm would match the old ``norm``'s
    ops with the new layer's own norm (the same computation on the same input) and call ``norm`` added.
    """
    intern = _Interner()
    ka, kb = _keys(a, intern, by_scope), _keys(b, intern, by_scope)

    pending: dict[int, deque[int]] = {}
    for nid, key in enumerate(kb):
        pending.setdefault(key, deque()).append(nid)
    matched: dict[int, int] = {}
    for nid, key in enumerate(ka):
        queue = pending.get(key)
        if queue:
            matched[nid] = queue.popleft()
    matched_b = set(matched.values())

    roots_a, down_a, fold_a, origin_a = _tainted_unmatched(a, set(matched))
    roots_b, down_b, fold_b, origin_b = _tainted_unmatched(b, matched_b)
    if not (roots_a or down_a or roots_b or down_b):
        # only constants or plumbing differ (e.g. a constant returned directly): report them
        roots_a, roots_b = fold_a, fold_b

    # value correspondence for the explanations
    matched_values: dict[int, int] = {}
    for x, y in matched.items():
        for va, vb in zip(a.nodes[x].outputs, b.nodes[y].outputs, strict=False):
            matched_values[va] = vb
    for va, vb in zip(a.inputs, b.inputs, strict=False):
        matched_values[va] = vb

    # anchor every divergent node at the last matched node before it (in check-graph numbering),
    # then pair the divergent nodes of both graphs that share an anchor, in order
    def anchors_a() -> dict[int, int]:
        out: dict[int, int] = {}
        last = -1
        divergent = set(roots_a) | set(down_a)
        for n in a.nodes:
            if n.id in matched:
                last = matched[n.id]
            elif n.id in divergent:
                out[n.id] = last
        return out

    def anchors_b() -> dict[int, int]:
        out: dict[int, int] = {}
        last = -1
        divergent = set(roots_b) | set(down_b)
        for n in b.nodes:
            if n.id in matched_b:
                last = n.id
            elif n.id in divergent:
                out[n.id] = last
        return out

    anc_a, anc_b = anchors_a(), anchors_b()
    inverse = {y: x for x, y in matched.items()}

    def pair(ids_a: list[int], ids_b: list[int], kind: str) -> list[tuple[float, Divergence]]:
        groups_a: dict[int, list[int]] = {}
        for nid in ids_a:
            groups_a.setdefault(anc_a[nid], []).append(nid)
        groups_b: dict[int, list[int]] = {}
        for nid in ids_b:
            groups_b.setdefault(anc_b[nid], []).append(nid)
        out: list[tuple[float, Divergence]] = []
        for anchor in sorted(set(groups_a) | set(groups_b)):
            ga, gb = groups_a.get(anchor, []), groups_b.get(anchor, [])
            # where the anchor sits in the trace graph, for ordering check-only nodes
            base = inverse.get(anchor, -1) if anchor >= 0 else -1
            if kind == DOWNSTREAM:
                pairs = _pair_by_op(a, b, ga, gb, by_scope)
            else:
                pairs = _pair_in_scope(a, b, ga, gb) if by_scope else _pair_in_order(ga, gb)
            for x, y in pairs:
                xn = a.nodes[x] if x is not None else None
                yn = b.nodes[y] if y is not None else None
                if kind == ROOT:
                    reason = _reason(a, b, xn, yn, matched_values)
                elif x is not None and x in origin_a:
                    reason = _follows(a, origin_a[x], "trace")
                else:
                    reason = _follows(b, origin_b[y], "check trace") if y is not None and y in origin_b else ""
                order = float(x) if x is not None else base + 0.5
                out.append((order, Divergence(x, y, kind, reason)))
        return out

    ordered_roots = sorted(pair(roots_a, roots_b, ROOT), key=lambda t: t[0])
    ordered_down = sorted(pair(down_a, down_b, DOWNSTREAM), key=lambda t: t[0])
    if by_scope:
        ordered_roots, ordered_down = _rejoin_lone_roots(a, b, ordered_roots, ordered_down, matched_values)
    own = _causes_of_their_own(
        (a, b), [d for _, d in ordered_roots], [d for _, d in ordered_down], matched_values, by_scope
    )
    if own:
        ordered_roots += [(order, own[id(d)]) for order, d in ordered_down if id(d) in own]
        ordered_down = [(order, d) for order, d in ordered_down if id(d) not in own]
        ordered_roots.sort(key=lambda t: t[0])

    constant_diffs: list[ConstantDiff] = []
    for x, y in matched.items():
        an = a.nodes[x]
        if an.role != "constant":
            continue
        constant = an.attributes.get("value")
        if not (isinstance(constant, dict) and "tensor" in constant):
            continue
        # only constants that play the same role matter: some consumer reads them in both graphs
        # (constants feeding diverged ops are paired by accident and already covered by the roots)
        value_a, value_b = an.outputs[0], b.nodes[y].outputs[0]
        consumers = [
            c
            for c in a.users(value_a)
            if not a.nodes[c].foldable and c in matched and value_b in b.nodes[matched[c]].inputs
        ]
        if not consumers:
            continue
        if compare_tensors is not None:
            result = compare_tensors(x, y)
        else:
            other = b.nodes[y].attributes.get("value")
            da = constant["tensor"].get("digest")
            db = other["tensor"].get("digest") if isinstance(other, dict) and "tensor" in other else None
            result = None if da == db else ("tensor constant values differ (content digests differ)", None)
        if result is None:
            continue
        constant_diffs.append(ConstantDiff(x, y, result[0], result[1]))
        # its consumers become roots, so the stepper reaches them
        shown_a, shown_b = _preview(a, x), _preview(b, y)
        for consumer in consumers:
            cn = a.nodes[consumer]
            reason = f"input {cn.inputs.index(value_a)} of {cn.kind} differs: tensor constant {shown_a} vs {shown_b}"
            ordered_roots.append((float(consumer), Divergence(consumer, matched[consumer], ROOT, reason)))
    constant_diffs.sort(key=lambda c: c.trace_node)
    ordered_roots.sort(key=lambda t: t[0])

    return GraphDiff(
        divergences=[d for _, d in ordered_roots] + [d for _, d in ordered_down],
        constant_diffs=constant_diffs,
        matched=matched,
    )
