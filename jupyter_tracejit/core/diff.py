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
from collections import deque
from dataclasses import dataclass
from typing import Any

from .diff_pairing import _causes_of_their_own, _pair_by_op, _pair_in_order, _pair_in_scope, _rejoin_lone_roots
from .diff_reasons import _follows, _preview, _reason
from .diff_records import DOWNSTREAM, ROOT, ConstantDiff, Divergence, GraphDiff, TensorCompare
from .graph import Graph, Node


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


def _match(ka: list[int], kb: list[int]) -> dict[int, int]:
    """Nodes of equal identity, matched in order: the k-th occurrence in one graph with the k-th in the other."""
    pending: dict[int, deque[int]] = {}
    for nid, key in enumerate(kb):
        pending.setdefault(key, deque()).append(nid)
    matched: dict[int, int] = {}
    for nid, key in enumerate(ka):
        queue = pending.get(key)
        if queue:
            matched[nid] = queue.popleft()
    return matched


def _matched_values(a: Graph, b: Graph, matched: dict[int, int]) -> dict[int, int]:
    """Which value of ``b`` each value of ``a`` corresponds to (for the explanations)."""
    values: dict[int, int] = {}
    for x, y in matched.items():
        for va, vb in zip(a.nodes[x].outputs, b.nodes[y].outputs, strict=False):
            values[va] = vb
    for va, vb in zip(a.inputs, b.inputs, strict=False):
        values[va] = vb
    return values


def _anchors(graph: Graph, divergent: set[int], anchor_of: dict[int, int]) -> dict[int, int]:
    """Each divergent node's anchor: the last matched node before it, numbered in the check graph (``anchor_of``
    gives a matched node's number there)."""
    out: dict[int, int] = {}
    last = -1
    for n in graph.nodes:
        if n.id in anchor_of:
            last = anchor_of[n.id]
        elif n.id in divergent:
            out[n.id] = last
    return out


@dataclass
class _Divergent:
    """What pairing the divergent nodes of both graphs needs: the graphs, each divergent node's anchor, where a
    downstream node's divergence comes from, the matched nodes and values."""

    a: Graph
    b: Graph
    by_scope: bool
    anchors_a: dict[int, int]
    anchors_b: dict[int, int]
    origin_a: dict[int, int]
    origin_b: dict[int, int]
    matched: dict[int, int]
    matched_values: dict[int, int]

    def pair(self, ids_a: list[int], ids_b: list[int], kind: str) -> list[tuple[float, Divergence]]:
        """The divergent nodes of both graphs that share an anchor, paired in order (roots) or op with op
        (downstream), each with its reason, keyed by its place in the trace graph."""
        a, b = self.a, self.b
        groups_a: dict[int, list[int]] = {}
        for nid in ids_a:
            groups_a.setdefault(self.anchors_a[nid], []).append(nid)
        groups_b: dict[int, list[int]] = {}
        for nid in ids_b:
            groups_b.setdefault(self.anchors_b[nid], []).append(nid)
        inverse = {y: x for x, y in self.matched.items()}
        out: list[tuple[float, Divergence]] = []
        for anchor in sorted(set(groups_a) | set(groups_b)):
            ga, gb = groups_a.get(anchor, []), groups_b.get(anchor, [])
            # where the anchor sits in the trace graph, for ordering check-only nodes
            base = inverse.get(anchor, -1) if anchor >= 0 else -1
            if kind == DOWNSTREAM:
                pairs = _pair_by_op(a, b, ga, gb, self.by_scope)
            else:
                pairs = _pair_in_scope(a, b, ga, gb) if self.by_scope else _pair_in_order(ga, gb)
            for x, y in pairs:
                order = float(x) if x is not None else base + 0.5
                out.append((order, Divergence(x, y, kind, self.reason(x, y, kind))))
        return out

    def reason(self, x: int | None, y: int | None, kind: str) -> str:
        a, b = self.a, self.b
        if kind == ROOT:
            xn = a.nodes[x] if x is not None else None
            yn = b.nodes[y] if y is not None else None
            return _reason(a, b, xn, yn, self.matched_values)
        if x is not None and x in self.origin_a:
            return _follows(a, self.origin_a[x], "trace")
        return _follows(b, self.origin_b[y], "check trace") if y is not None and y in self.origin_b else ""


def _constant_differences(
    a: Graph, b: Graph, matched: dict[int, int], compare_tensors: TensorCompare | None
) -> tuple[list[ConstantDiff], list[tuple[float, Divergence]]]:
    """Matched tensor constants whose values differ, and their consumers as roots (so the stepper reaches them).
    Only constants that play the same role matter: some consumer reads them in both graphs (constants feeding
    diverged ops are paired by accident and already covered by the roots)."""
    constant_diffs: list[ConstantDiff] = []
    roots: list[tuple[float, Divergence]] = []
    for x, y in matched.items():
        an = a.nodes[x]
        constant = an.attributes.get("value") if an.role == "constant" else None
        if not (isinstance(constant, dict) and "tensor" in constant):
            continue
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
        shown_a, shown_b = _preview(a, x), _preview(b, y)
        for consumer in consumers:
            cn = a.nodes[consumer]
            reason = f"input {cn.inputs.index(value_a)} of {cn.kind} differs: tensor constant {shown_a} vs {shown_b}"
            roots.append((float(consumer), Divergence(consumer, matched[consumer], ROOT, reason)))
    constant_diffs.sort(key=lambda c: c.trace_node)
    return constant_diffs, roots


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
    matched = _match(_keys(a, intern, by_scope), _keys(b, intern, by_scope))
    matched_b = set(matched.values())
    roots_a, down_a, fold_a, origin_a = _tainted_unmatched(a, set(matched))
    roots_b, down_b, fold_b, origin_b = _tainted_unmatched(b, matched_b)
    if not (roots_a or down_a or roots_b or down_b):
        # only constants or plumbing differ (e.g. a constant returned directly): report them
        roots_a, roots_b = fold_a, fold_b
    matched_values = _matched_values(a, b, matched)
    # anchor every divergent node at the last matched node before it (in check-graph numbering), then pair the
    # divergent nodes of both graphs that share an anchor, in order
    divergent = _Divergent(
        a,
        b,
        by_scope,
        _anchors(a, set(roots_a) | set(down_a), matched),
        _anchors(b, set(roots_b) | set(down_b), {y: y for y in matched_b}),
        origin_a,
        origin_b,
        matched,
        matched_values,
    )
    ordered_roots = sorted(divergent.pair(roots_a, roots_b, ROOT), key=lambda t: t[0])
    ordered_down = sorted(divergent.pair(down_a, down_b, DOWNSTREAM), key=lambda t: t[0])
    if by_scope:
        ordered_roots, ordered_down = _rejoin_lone_roots(a, b, ordered_roots, ordered_down, matched_values)
    own = _causes_of_their_own(
        (a, b), [d for _, d in ordered_roots], [d for _, d in ordered_down], matched_values, by_scope
    )
    if own:
        ordered_roots += [(order, own[id(d)]) for order, d in ordered_down if id(d) in own]
        ordered_down = [(order, d) for order, d in ordered_down if id(d) not in own]
    constant_diffs, constant_roots = _constant_differences(a, b, matched, compare_tensors)
    ordered_roots = sorted(ordered_roots + constant_roots, key=lambda t: t[0])
    return GraphDiff(
        divergences=[d for _, d in ordered_roots] + [d for _, d in ordered_down],
        constant_diffs=constant_diffs,
        matched=matched,
    )


__all__ = ["DOWNSTREAM", "ROOT", "ConstantDiff", "Divergence", "GraphDiff", "TensorCompare", "structural_diff"]
