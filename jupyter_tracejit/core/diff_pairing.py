"""Pairing the nodes two graphs could not match by what they compute (:mod:`.diff`): in order, within a module
scope, op with op by kind and line; and the roots a pairing tells apart (a lone root re-joined to its consequence,
a second cause that would hide behind the first)."""

from __future__ import annotations

from collections import Counter, deque

from .diff_reasons import _constant_difference, _place, _reason, _recorded_at
from .diff_records import ROOT, Divergence
from .graph import Graph
from .loops import enclosing_loop, loops_in


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
