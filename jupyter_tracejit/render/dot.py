""":class:`~jupyter_tracejit.core.graph.Graph` -> Graphviz DOT source: the same text the interactive view builds.

There is one set of DOT rules. The interactive view builds the DOT of what is visible in TypeScript
(``labextension/src/model/dot.ts``, which must work with no kernel); this module follows the same rules line for
line so that ``run.to_dot()``, ``tracejit --dot`` and the explorer's "export DOT" give the same text for the
same view. ``tests/frontend_fixtures.py`` writes this module's DOT of the same runs and views into ``dot.cases.json``
and ``labextension/test/model.test.ts`` compares the TypeScript text with it.

Names and classes the views find things by:

- op nodes ``n<node id>`` (``id="n<id>"``), graph inputs ``in<value id>``, outputs ``out<i>``;
- a collapsed group is one box ``g<k>`` (``k``: the group's index in :class:`~.groups.GroupTree`) with
  ``id="scope-<group id>"``; an expanded one is ``subgraph cluster_<k>`` with ``id="cluster-<group id>"``;
- edges ``id="e<src>-<dst>"``; classes ``node op-<role> kind-<kind>`` plus highlight classes (``root``,
  ``warning``, ...; ``has-<class>`` on the box or op that stands for a hidden or folded node).

Every text from user code (module names, debug names, string constants, source lines) is escaped so it can
neither end a quoted string nor form a Graphviz escape (``\\N``, ``\\G``, ``\\l``) or an HTML entity; control
characters become spaces; no link attributes (``URL``, ``href``) are emitted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..core.graph import Graph, Node, fold_class
from .dot_labels import node_label, node_tooltip, op_title
from .dot_text import (
    MAX_ITEM_CHARS,
    MAX_LABEL_CHARS,
    MAX_TITLE_CHARS,
    TOOLTIP_BACKSLASH,
    css_token,
    dom_id,
    escape_text,
    label_lines,
    quoted,
    tooltip_lines,
    truncate,
)
from .groups import Group, GroupTree

__all__ = [
    "MAX_ITEM_CHARS",
    "MAX_LABEL_CHARS",
    "RANKDIRS",
    "TOOLTIP_BACKSLASH",
    "VisibleGraph",
    "css_token",
    "dom_id",
    "escape_text",
    "label_lines",
    "op_title",
    "to_dot",
    "truncate",
    "visible_dot",
]

RANKDIRS = ("TB", "LR", "BT", "RL")


class VisibleGraph:
    """The DOT of a view, and which DOT item stands for each node."""

    def __init__(self, dot: str, representative: dict[int, str], items: list[str], boxes: list[str]) -> None:
        self.dot = dot
        #: node id -> the DOT name drawn for it (itself, the op it is folded into, or its group's box)
        self.representative = representative
        #: DOT names of the drawn nodes and boxes
        self.items = items
        #: group ids drawn as boxes
        self.boxes = boxes


def _group_title(label: str, type_: str) -> str:
    return f"{label} ({type_})" if type_ else label


def _group_tip(g: Group, module: str, method: str) -> str:
    """A group's tooltip: what a synthetic group holds, else ``module`` (its path, or the method for the root)."""
    if g.repeat:
        return f"{g.label}: {g.repeat} modules of the same structure"
    if g.section_of is not None:
        return f"{g.label}: the nodes of {g.section_of or method} in graph order"
    return f"{g.label}: {len(g.children)} modules" if g.is_bucket else module


def visible_dot(
    graph: Graph,
    groups: GroupTree,
    *,
    expanded: set[str],
    fold: bool = True,
    highlights: Mapping[int, Iterable[str]] | None = None,
    show_shapes: bool = True,
    rankdir: str = "TB",
    title: str | None = None,
    file_names: Mapping[str, str] | None = None,
) -> VisibleGraph:
    """The DOT of what is visible: groups in ``expanded`` are clusters, the outermost closed ones boxes.
    ``file_names`` (``run.file_names``) names files in the tooltips as every view does (``cell [9], line 7``).

    In three steps, as ``visibleDot`` in model/dot.ts: which item stands for each node, the edges between the
    items, and the text."""
    if rankdir not in RANKDIRS:
        raise ValueError(f"rankdir must be one of {', '.join(RANKDIRS)}, not {rankdir!r}")
    rep, drawn = _representatives(graph, groups, expanded, fold)
    classes: dict[str, set[str]] = {}
    for nid, names in (highlights or {}).items():
        r = rep.get(nid)
        if r is None:
            continue
        direct = r == f"n{nid}"
        classes.setdefault(r, set()).update(css_token(c if direct else f"has-{c}") for c in names if c)
    edges, used_inputs = _edges(graph, rep, fold)
    items = _VisibleItems(rep, drawn, classes, edges, used_inputs)
    return _emit(graph, groups, expanded, items, fold, show_shapes, rankdir, title, file_names)


@dataclass
class _VisibleItems:
    """What is drawn, before it is written: the items and the edges between them (``VisibleItems`` in dot.ts)."""

    #: node id -> the DOT item that stands for it
    rep: dict[int, str]
    #: the nodes drawn as themselves, in id order
    drawn: list[Node]
    #: DOT item -> its highlight classes
    classes: dict[str, set[str]]
    #: ``(source, target)`` -> the value the edge carries (the first one, in graph order)
    edges: dict[tuple[str, str], int]
    #: graph inputs that feed something drawn
    used_inputs: set[int]


def _representatives(
    graph: Graph, groups: GroupTree, expanded: set[str], fold: bool
) -> tuple[dict[int, str], list[Node]]:
    """Which DOT item stands for each node (its collapsed group's box, itself, or, folded, its consumer's), and the
    nodes drawn as themselves, in id order."""

    def box_of(node_id: int) -> str | None:
        g = groups.collapsed_ancestor(node_id, expanded)
        return None if g is None else f"g{groups.index(g)}"

    rep: dict[int, str] = {}
    drawn: list[Node] = []
    for n in graph.nodes:
        if fold and n.foldable:
            continue
        box = box_of(n.id)
        rep[n.id] = box or f"n{n.id}"
        if box is None:
            drawn.append(n)
    if fold:
        for n in graph.nodes:
            if not n.foldable:
                continue
            target = graph.fold_target(n)
            if target is not None:
                rep[n.id] = rep[target]
            elif graph.reaches_output(n):  # a constant or tuple returned directly: drawn where it lives
                box = box_of(n.id)
                rep[n.id] = box or f"n{n.id}"
                if box is None:
                    drawn.append(n)
            # else: dead plumbing (the GetAttr of a parameter-free submodule): nothing to show
    drawn.sort(key=lambda n: n.id)
    return rep, drawn


def _edges(graph: Graph, rep: dict[int, str], fold: bool) -> tuple[dict[tuple[str, str], int], set[int]]:
    """The edges between the items, ``(source, target) -> the value it carries`` (the first one, in graph order),
    folded plumbing looked through to its sources; and the graph inputs that feed something drawn."""
    edges: dict[tuple[str, str], int] = {}
    used_inputs: set[int] = set()
    graph_inputs = set(graph.inputs)

    def sources(value_id: int, seen: set[int], out: list[tuple[str, int]]) -> None:
        p = graph.producer(value_id)
        if p is None:
            if value_id in graph_inputs:
                out.append((f"in{value_id}", value_id))
                used_inputs.add(value_id)
            return
        if fold and p.role == "getattr":
            return  # a parameter or submodule: shown in its consumer, not as an edge from `self`
        if fold and p.foldable and rep.get(p.id) != f"n{p.id}":
            if p.id in seen:
                return
            seen.add(p.id)
            for v in p.inputs:
                sources(v, seen, out)
            return
        out.append((rep[p.id], value_id))

    for n in graph.nodes:
        if fold and n.foldable and rep.get(n.id) != f"n{n.id}":
            continue
        dst = rep.get(n.id)
        if dst is None:
            continue
        srcs: list[tuple[str, int]] = []
        for v in n.inputs:
            sources(v, set(), srcs)
        for src, via in srcs:
            if src != dst:
                edges.setdefault((src, dst), via)
    for i, v in enumerate(graph.outputs):
        srcs = []
        sources(v, set(), srcs)
        for src, via in srcs:
            edges.setdefault((src, f"out{i}"), via)
    return edges, used_inputs


def _emit(
    graph: Graph,
    groups: GroupTree,
    expanded: set[str],
    items: _VisibleItems,
    fold: bool,
    show_shapes: bool,
    rankdir: str,
    title: str | None,
    file_names: Mapping[str, str] | None,
) -> VisibleGraph:
    """The text: each group's own nodes, boxes and clusters in order of their first node, then inputs, outputs and
    edges (model/dot.ts ``emitDot`` writes the same, function for function)."""
    lines = [
        "digraph trace {",
        f'  graph [rankdir={rankdir} fontname="Courier" fontsize=10 nodesep=0.25 ranksep=0.35 class="trace-graph"'
        + (f" label={label_lines([title], MAX_TITLE_CHARS)} labelloc=t" if title is not None else "")
        + "];",
        '  node [shape=box style="rounded,filled" fillcolor="#f7f7f7" fontname="Courier" fontsize=9 height=0.3 '
        'margin="0.08,0.04"];',
        "  edge [arrowsize=0.6];",
    ]
    # each group's own statements (its nodes, its collapsed children), keyed by the first node they stand for
    content: dict[str, list[tuple[int, str, str]]] = {}
    _node_statements(graph, groups, items, fold, show_shapes, file_names, content)
    boxes = _box_statements(graph, groups, items, content)
    _cluster_lines(graph, groups, expanded, content, lines)
    lines += _io_lines(graph, items.used_inputs, show_shapes) + _edge_lines(graph, items.edges) + ["}"]
    return VisibleGraph(
        "\n".join(lines) + "\n",
        items.rep,
        [f"n{n.id}" for n in items.drawn] + [f"g{groups.index(b)}" for b in boxes],
        boxes,
    )


def _node_statements(
    graph: Graph,
    groups: GroupTree,
    items: _VisibleItems,
    fold: bool,
    show_shapes: bool,
    file_names: Mapping[str, str] | None,
    content: dict[str, list[tuple[int, str, str]]],
) -> None:
    """A statement per node drawn as itself, in its group."""
    for n in items.drawn:
        base = ["node", f"op-{fold_class(n.role)}", f"kind-{css_token(n.kind)}"]
        if n.nondeterministic:
            base.append("nondeterministic")
        cls = base + sorted(items.classes.get(f"n{n.id}", set()) - set(base))
        attrs = (
            f'id="n{n.id}" label={label_lines(node_label(graph, n, fold, show_shapes))} '
            f"tooltip={tooltip_lines(node_tooltip(graph, n, file_names))} class={quoted(' '.join(cls))}"
        )
        content.setdefault(groups.owner(n.id).id, []).append((n.id, "line", f"n{n.id} [{attrs}];"))


def _box_statements(
    graph: Graph, groups: GroupTree, items: _VisibleItems, content: dict[str, list[tuple[int, str, str]]]
) -> list[str]:
    """A box per collapsed group that stands for a node, in its parent group; the ids of the groups drawn as boxes."""
    first_of_box: dict[str, int] = {}
    for nid, r in items.rep.items():
        if r.startswith("g"):
            first_of_box[r] = min(first_of_box.get(r, nid), nid)
    boxes: list[str] = []
    for gid, g in groups.groups.items():
        name = f"g{groups.index(gid)}"
        if name not in first_of_box:
            continue
        boxes.append(gid)
        cls = ["scope-collapsed", *(["scope-repeat"] if g.repeat else []), *sorted(items.classes.get(name, set()))]
        tip = _group_tip(g, gid or graph.method, graph.method)
        label = label_lines([_group_title(g.label, g.type), f"{g.op_count} ops"])
        attrs = (
            f"id={quoted('scope-' + dom_id(gid))} label={label} "
            f"tooltip={tooltip_lines([tip, 'click to expand'])} class={quoted(' '.join(cls))} peripheries=2"
        )
        content.setdefault(g.parent or "", []).append((first_of_box[name], "line", f"{name} [{attrs}];"))
    return boxes


def _cluster_lines(
    graph: Graph,
    groups: GroupTree,
    expanded: set[str],
    content: dict[str, list[tuple[int, str, str]]],
    lines: list[str],
) -> None:
    """Each group's statements and expanded children (a cluster each), in order of the first node they hold."""
    first_memo: dict[str, int | None] = {}

    def first_inside(gid: str) -> int | None:
        """Smallest node id drawn inside an expanded group (None: nothing to draw, the cluster is skipped)."""
        if gid in first_memo:
            return first_memo[gid]
        candidates = [key for key, _, _ in content.get(gid, [])]
        for child in groups.groups[gid].children:
            if child in expanded:
                found = first_inside(child)
                if found is not None:
                    candidates.append(found)
        first_memo[gid] = min(candidates) if candidates else None
        return first_memo[gid]

    def emit(gid: str, indent: str) -> None:
        group_items = list(content.get(gid, []))
        for child in groups.groups[gid].children:
            if child in expanded:
                key = first_inside(child)
                if key is not None:
                    group_items.append((key, "group", child))
        group_items.sort(key=lambda item: item[0])
        for _, what, payload in group_items:
            if what == "line":
                lines.append(indent + payload)
                continue
            g = groups.groups[payload]
            tip = _group_tip(g, payload + (f" ({g.type})" if g.type else ""), graph.method)
            lines.append(f"{indent}subgraph cluster_{groups.index(payload)} {{")
            lines.append(
                f"{indent}  graph [id={quoted('cluster-' + dom_id(payload))} "
                f"label={label_lines([_group_title(g.label, g.type)])} tooltip={tooltip_lines([tip])} "
                f'class="scope{" scope-repeat" if g.repeat else ""}" style="rounded" labeljust=l fontsize=9];'
            )
            emit(payload, indent + "  ")
            lines.append(f"{indent}}}")

    emit("", "  ")


def _value_text(graph: Graph, v: int) -> str:
    """``%x : Float(3)``: a value as the tooltips name it."""
    return f"%{graph.values[v].name} : {graph.values[v].shape_str()}"


def _io_lines(graph: Graph, used_inputs: set[int], show_shapes: bool) -> list[str]:
    """The graph inputs that feed something drawn, then the outputs."""
    lines = []
    for v in graph.inputs:
        if v in used_inputs:
            label = label_lines([graph.values[v].name] + ([graph.values[v].shape_str()] if show_shapes else []))
            tip = tooltip_lines([f"input {_value_text(graph, v)}"])
            lines.append(f'  in{v} [id="in{v}" shape=ellipse class="input" label={label} tooltip={tip}];')
    for i, v in enumerate(graph.outputs):
        heading = "output" if len(graph.outputs) == 1 else f"output {i}"
        label = label_lines([heading] + ([graph.values[v].shape_str()] if show_shapes else []))
        tip = tooltip_lines([f"{heading} {_value_text(graph, v)}"])
        lines.append(f'  out{i} [id="out{i}" shape=ellipse class="output" label={label} tooltip={tip}];')
    return lines


def _edge_lines(graph: Graph, edges: Mapping[tuple[str, str], int]) -> list[str]:
    """The edges, sorted by (source, target)."""
    return [
        f'  {src} -> {dst} [id="e{src}-{dst}" tooltip={tooltip_lines([_value_text(graph, via)])}];'
        for (src, dst), via in sorted(edges.items())
    ]


def to_dot(
    graph: Graph,
    *,
    highlights: Mapping[int, Iterable[str]] | None = None,
    fold: bool = True,
    collapsed: Iterable[str] = (),
    show_shapes: bool = True,
    title: str | None = None,
    rankdir: str = "TB",
    file_names: Mapping[str, str] | None = None,
) -> str:
    """The DOT source of ``graph`` with every group open except those in ``collapsed`` (module paths or bucket
    ids), as the explorer's "export DOT" writes it for the same view.

    ``highlights`` maps node ids to extra CSS classes (``root``, ``warning``, ``selected``, ...). ``fold`` draws
    constants, attribute reads and list/tuple plumbing inside their consumers. ``file_names`` (``run.file_names``)
    names notebook cells in the tooltips (``cell [9], line 7``).
    """
    groups = GroupTree(graph)
    return visible_dot(
        graph,
        groups,
        expanded=groups.expanded_except(collapsed),
        fold=fold,
        highlights=highlights,
        show_shapes=show_shapes,
        rankdir=rankdir,
        title=title,
        file_names=file_names,
    ).dot
