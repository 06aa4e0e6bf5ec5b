""":class:`~jupyter_tracejit.core.graph.Graph` -> Graphviz DOT source.

The DOT is built with the ``graphviz`` package (``Digraph``) and is deterministic: the same graph
and options give byte-identical text, so views can be golden-tested and diffed. Everything the
frontend needs to find things again is a stable id or a CSS class:

- op nodes are DOT nodes ``n<node id>`` with ``id="n<node id>"``; graph inputs are ``in<value id>``,
  graph outputs ``out<i>``, collapsed modules ``s<k>`` (``k``: position of the module path in
  ``sorted(graph.scopes)``) with ``id="scope-<path>"``;
- module clusters are ``subgraph cluster_<k>`` with ``id="scope-<path>"`` and ``class="scope"``;
- edges carry ``id="e<src>-<dst>"`` where ``src``/``dst`` are the DOT node names;
- op nodes carry ``class="node op-<role> kind-<kind>"`` plus the (sorted) highlight classes.

Every text that reaches a label, tooltip or id (module names, debug names, string constants,
source lines) comes from user code. It is escaped so that nothing in it can end a quoted string,
start an HTML-like label or form a Graphviz escape sequence (``\\N``, ``\\G``, ``\\l``, ...), and
control characters are replaced by spaces. No link attributes (``URL``, ``href``, ...) are emitted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import graphviz

from ..core.graph import Graph, Node, format_attribute

__all__ = ["to_dot"]

RANKDIRS = ("TB", "LR", "BT", "RL")
#: folded constants shown in a label before ``…``
MAX_FOLDED_ITEMS = 3
#: characters of one folded item (``[-1, 2]``, ``weight``)
MAX_ITEM_CHARS = 24
#: characters of one label line
MAX_LABEL_CHARS = 48
#: characters of one tooltip line
MAX_TOOLTIP_CHARS = 160
#: how a backslash of user text reads in tooltips (see :func:`tooltip_lines`)
TOOLTIP_BACKSLASH = "\u29f5"
#: characters of the graph title
MAX_TITLE_CHARS = 120
#: outputs listed in a tooltip before ``… N more``
MAX_TOOLTIP_OUTPUTS = 4

FONT = "Helvetica"
GRAPH_ATTR = {"fontname": FONT, "fontsize": "10", "nodesep": "0.25", "ranksep": "0.35"}
NODE_ATTR = {
    "shape": "box",
    "style": "rounded,filled",
    "fillcolor": "#f7f7f7",
    "fontname": FONT,
    "fontsize": "9",
    "height": "0.3",
    "margin": "0.08,0.04",
}
EDGE_ATTR = {"arrowsize": "0.6", "fontname": FONT, "fontsize": "8"}
CLUSTER_ATTR = {"style": "rounded", "fontname": FONT, "fontsize": "9", "labeljust": "l"}

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_CLASS_BAD = re.compile(r"[^A-Za-z0-9_-]+")
_ID_BAD = re.compile(r"[^A-Za-z0-9_.-]")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PATH_SEP = re.compile(r"[\\/]")
#: the int64 bounds torch uses as "to the end" in slices, spelled short
_INT_SENTINELS = {2**63 - 1: "INT64_MAX", -(2**63): "INT64_MIN"}
_LIST_KINDS = {"prim::ListConstruct": ("[", "]"), "prim::TupleConstruct": ("(", ")")}


# -- escaping -----------------------------------------------------------------------------------
def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def escape_text(text: str, limit: int = MAX_LABEL_CHARS, *, backslash: str = "\\\\") -> str:
    """One line of untrusted text as a literal Graphviz escString fragment.

    Control characters (newlines included) become spaces, the text is cut to ``limit``
    characters, ``&`` becomes ``&amp;`` (Graphviz turns entities in labels into characters) and
    each backslash becomes ``backslash``: doubled by default, so ``\\N``, ``\\G``, ``\\l`` and a
    trailing backslash stay literal in labels. Double quotes are escaped by ``graphviz``'s
    quoting, which keeps ``\\"`` as an escaped quote: with every backslash replaced first, a
    user's ``\\"`` comes out as a backslash and a quote.
    """
    text = truncate(_CONTROL.sub(" ", text), limit)
    return text.replace("&", "&amp;").replace("\\", backslash)


def text_lines(lines: Iterable[str], limit: int = MAX_LABEL_CHARS) -> Any:
    """Label lines joined by Graphviz's centered line break, each escaped; never an HTML label."""
    return graphviz.nohtml("\\n".join(escape_text(line, limit) for line in lines))


def tooltip_lines(lines: Iterable[str], limit: int = MAX_TOOLTIP_CHARS) -> Any:
    """Tooltip lines: like :func:`text_lines`, but a backslash shows as U+29F5 (reverse solidus operator).

    Graphviz's handling of backslashes in tooltips differs by object and version (2.43 expands
    escape sequences in node tooltips twice, after decoding entities), so neither a doubled
    backslash nor ``&#92;`` reliably reads back as one; a look-alike character always does.
    """
    return graphviz.nohtml("\\n".join(escape_text(line, limit, backslash=TOOLTIP_BACKSLASH) for line in lines))


def css_token(text: str) -> str:
    """A class token: runs of characters outside ``[A-Za-z0-9_-]`` become one ``-``."""
    return _CLASS_BAD.sub("-", text).strip("-")


def scope_dom_id(path: str) -> str:
    """``scope-<path>`` with characters outside ``[A-Za-z0-9_.-]`` spelled ``-u<hex>-``."""
    return "scope-" + _ID_BAD.sub(lambda m: f"-u{ord(m.group(0)):x}-", path)


def basename(file: str) -> str:
    """The file name of a path written with ``/`` or ``\\`` (labels never show full paths)."""
    return _PATH_SEP.split(file)[-1]


# -- value formatting -----------------------------------------------------------------------------
def format_constant(node: Node) -> str:
    """The value of a ``prim::Constant`` as a short Python-like text (``1``, ``False``, ``[-1, 2]``)."""
    if "value" not in node.attributes:
        return "None"
    return _format_value(node.attributes["value"])


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int) and value in _INT_SENTINELS:
        return _INT_SENTINELS[value]
    if isinstance(value, list):
        return "[" + ", ".join(_format_value(v) for v in value) + "]"
    if isinstance(value, dict) and isinstance(value.get("tensor"), dict):
        t = value["tensor"]
        preview = t.get("preview") or []
        if t.get("shape") == [] and len(preview) == 1:
            return f"tensor({_format_value(preview[0])})"
    return format_attribute(value)


def scope_title(graph: Graph, path: str) -> str:
    scope = graph.scopes[path]
    return f"{scope.name} ({scope.type})" if scope.type else scope.name


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


# -- the builder --------------------------------------------------------------------------------
class _DotBuilder:
    def __init__(
        self,
        graph: Graph,
        highlights: Mapping[int, Iterable[str]],
        fold: bool,
        collapsed: Iterable[str],
        show_shapes: bool,
    ) -> None:
        self.graph = graph
        self.show_shapes = show_shapes
        self.fold = fold
        self.scope_index = {path: k for k, path in enumerate(sorted(graph.scopes))}
        requested = {p for p in collapsed if p and p in graph.scopes}
        #: scope path -> the outermost collapsed scope containing it (itself included), or None
        self.collapse_of: dict[str, str | None] = {}
        for path in graph.scopes:
            root: str | None = None
            up: str | None = path
            while up:
                if up in requested:
                    root = up
                up = graph.scopes[up].parent
            self.collapse_of[path] = root
        #: node id -> the op it is drawn inside, None when drawn itself
        self.folded_into: list[int | None] = [
            graph.fold_target(n) if fold and n.foldable else None for n in graph.nodes
        ]
        outputs = set(graph.outputs)
        #: dead plumbing (e.g. the GetAttr of a parameter-free submodule): consumed by nothing, not an output
        self.dead = {
            n.id
            for n in graph.nodes
            if fold and n.foldable and not graph.consumers(n) and not any(v in outputs for v in n.outputs)
        }
        self.drawn = [n for n in graph.nodes if self.folded_into[n.id] is None and n.id not in self.dead]
        self.input_ids = set(graph.inputs)
        #: scope path -> smallest id of a drawn node in it or its descendants (absent: nothing to draw)
        self.first_drawn: dict[str, int] = {}
        #: collapsed scope path -> number of drawn nodes its box stands for
        self.box_counts: dict[str, int] = {}
        for node in self.drawn:
            p: str | None = node.scope
            while p:
                self.first_drawn.setdefault(p, node.id)
                p = graph.scopes[p].parent
            box = self.collapse_of[node.scope]
            if box:
                self.box_counts[box] = self.box_counts.get(box, 0) + 1
        self.classes: dict[str, set[str]] = {}
        for nid, names in sorted(highlights.items()):
            if 0 <= nid < len(graph.nodes):
                tokens = {css_token(c) for c in names}
                self.classes.setdefault(self.rep(nid), set()).update(t for t in tokens if t)

    # -- representation ------------------------------------------------------------------------
    def rep(self, node_id: int) -> str:
        """The DOT node a graph node is drawn as (itself, its fold target or a collapsed box)."""
        target = self.folded_into[node_id]
        base = node_id if target is None else target
        box = self.collapse_of[self.graph.nodes[base].scope]
        return f"s{self.scope_index[box]}" if box else f"n{base}"

    def sources(self, value_id: int, seen: set[int]) -> list[tuple[str, int]]:
        """``(DOT node, value id)`` pairs that feed a value, looking through folded plumbing."""
        value = self.graph.values[value_id]
        if value.producer is None:
            return [(f"in{value_id}", value_id)] if value_id in self.input_ids else []
        producer = self.graph.nodes[value.producer]
        if self.folded_into[producer.id] is None:
            return [(self.rep(producer.id), value_id)]
        if producer.role != "plumbing" or producer.id in seen:
            return []  # folded constants and attributes show in their consumer's label
        seen.add(producer.id)
        out: list[tuple[str, int]] = []
        for v in producer.inputs:
            out.extend(self.sources(v, seen))
        return out

    def describe(self, value_id: int, depth: int = 0) -> str | None:
        """Label text of a folded input (``1``, ``weight``, ``[-1, 2]``); None for data inputs."""
        value = self.graph.values[value_id]
        if value.producer is None or self.folded_into[value.producer] is None:
            return None
        producer = self.graph.nodes[value.producer]
        if producer.role == "constant":
            text = format_constant(producer)
            name = value.name.split(".", 1)[0]
            return f"{name}={text}" if depth == 0 and _IDENTIFIER.fullmatch(name) else text
        if producer.role == "getattr":
            return str(producer.attributes.get("name", "?"))
        brackets = _LIST_KINDS.get(producer.kind)
        if brackets is None or depth >= 3:
            return None
        parts = [self.describe(v, depth + 1) for v in producer.inputs]
        if parts and all(p is None for p in parts):
            return None
        shown = [p if p is not None else "·" for p in parts[:MAX_FOLDED_ITEMS]]
        if len(parts) > MAX_FOLDED_ITEMS:
            shown.append("…")
        return brackets[0] + ", ".join(shown) + brackets[1]

    def folded_items(self, node: Node) -> list[str]:
        items = (self.describe(v) for v in node.inputs)
        return [item for item in items if item is not None]

    # -- edges ---------------------------------------------------------------------------------
    def edges(self) -> dict[tuple[str, str], int]:
        """``(src, dst) -> value id`` in graph order, de-duplicated, without self loops."""
        edges: dict[tuple[str, str], int] = {}
        for node in self.drawn:
            dst = self.rep(node.id)
            for v in node.inputs:
                for src, via in self.sources(v, set()):
                    if src != dst:
                        edges.setdefault((src, dst), via)
        for i, v in enumerate(self.graph.outputs):
            for src, via in self.sources(v, set()):
                edges.setdefault((src, f"out{i}"), via)
        return edges

    # -- labels --------------------------------------------------------------------------------
    def value_text(self, value_id: int) -> str:
        value = self.graph.values[value_id]
        return f"%{value.name} : {value.shape_str()}"

    def node_label(self, node: Node) -> list[str]:
        lines = [node.op_name]
        if node.role == "constant":
            lines.append(format_constant(node))
        elif node.role == "getattr":
            lines.append(str(node.attributes.get("name", "?")))
        if self.show_shapes and node.outputs:
            lines.append(self.graph.values[node.outputs[0]].shape_str())
        items = self.folded_items(node)
        if items:
            shown = [truncate(item, MAX_ITEM_CHARS) for item in items[:MAX_FOLDED_ITEMS]]
            if len(items) > MAX_FOLDED_ITEMS:
                shown.append("…")
            lines.append(", ".join(shown))
        return lines

    def node_tooltip(self, node: Node) -> list[str]:
        lines = [node.kind]
        outs = node.outputs
        lines.extend(self.value_text(v) for v in outs[:MAX_TOOLTIP_OUTPUTS])
        if len(outs) > MAX_TOOLTIP_OUTPUTS:
            lines.append(f"… {len(outs) - MAX_TOOLTIP_OUTPUTS} more")
        items = self.folded_items(node)
        if items:
            lines.append("args: " + ", ".join(items))
        if node.scope:
            lines.append("scope: " + node.scope + self._type_suffix(node.scope))
        if node.source is not None:
            lines.append(f"{basename(node.source.file)}:{node.source.line}")
            if node.source.code:
                lines.append(node.source.code)
        return lines

    def _type_suffix(self, path: str) -> str:
        scope = self.graph.scopes.get(path)
        return f" ({scope.type})" if scope is not None and scope.type else ""

    def node_classes(self, name: str, base: list[str]) -> str:
        return " ".join([*base, *sorted(self.classes.get(name, set()) - set(base))])

    # -- emission ------------------------------------------------------------------------------
    def build(self, title: str | None, rankdir: str) -> str:
        graph_attr = {"rankdir": rankdir, **GRAPH_ATTR}
        if title is not None:
            graph_attr["label"] = text_lines([title], MAX_TITLE_CHARS)
            graph_attr["labelloc"] = "t"
        dot = graphviz.Digraph(name="trace", graph_attr=graph_attr, node_attr=NODE_ATTR, edge_attr=EDGE_ATTR)
        edges = self.edges()
        used_sources = {src for src, _ in edges}
        for v in self.graph.inputs:
            name = f"in{v}"
            # with folding, ``self`` (read only by folded GetAttr nodes) has nothing to show
            if self.fold and self.graph.users(v) and name not in used_sources:
                continue
            self.emit_value_node(dot, name, v, "input", "input")
        self.emit_scope(dot, "")
        for i, v in enumerate(self.graph.outputs):
            label = "output" if len(self.graph.outputs) == 1 else f"output {i}"
            self.emit_value_node(dot, f"out{i}", v, "output", label)
        for (src, dst), via in edges.items():
            dot.edge(
                src,
                dst,
                _attributes={"id": f"e{src}-{dst}", "tooltip": tooltip_lines([self.value_text(via)])},
            )
        return str(dot.source)

    def emit_value_node(self, container: Any, name: str, value_id: int, css: str, heading: str) -> None:
        value = self.graph.values[value_id]
        label = [value.name if css == "input" else heading]
        if self.show_shapes:
            label.append(value.shape_str())
        attrs = {
            "id": name,
            "class": css,
            "tooltip": tooltip_lines([f"{heading} {self.value_text(value_id)}"]),
        }
        container.node(name, label=text_lines(label), _attributes=attrs)

    def emit_scope(self, container: Any, path: str) -> None:
        """Emit the drawn nodes of one scope and its children's clusters / boxes, in graph order."""
        items: list[tuple[int, str, str]] = []
        for nid in self.graph.scopes[path].node_ids:
            if self.folded_into[nid] is None and nid not in self.dead:
                items.append((nid, "node", ""))
        for child in self.graph.scopes[path].children:
            first = self.first_drawn.get(child)
            if first is not None:
                items.append((first, "box" if self.collapse_of[child] == child else "cluster", child))
        for key, what, child in sorted(items):
            if what == "node":
                self.emit_op(container, self.graph.nodes[key])
            elif what == "box":
                self.emit_box(container, child)
            else:
                k = self.scope_index[child]
                attrs = {
                    **CLUSTER_ATTR,
                    "id": scope_dom_id(child),
                    "class": "scope",
                    "label": text_lines([scope_title(self.graph, child)]),
                    "tooltip": tooltip_lines([child + self._type_suffix(child)]),
                }
                with container.subgraph(name=f"cluster_{k}", graph_attr=attrs) as sub:
                    self.emit_scope(sub, child)

    def emit_op(self, container: Any, node: Node) -> None:
        name = f"n{node.id}"
        base = ["node", css_token(f"op-{node.role}"), css_token(f"kind-{node.kind}")]
        attrs = {
            "id": name,
            "class": self.node_classes(name, base),
            "tooltip": tooltip_lines(self.node_tooltip(node)),
        }
        container.node(name, label=text_lines(self.node_label(node)), _attributes=attrs)

    def emit_box(self, container: Any, path: str) -> None:
        name = f"s{self.scope_index[path]}"
        count = self.box_counts[path]
        attrs = {
            "id": scope_dom_id(path),
            "class": self.node_classes(name, ["scope-collapsed"]),
            "peripheries": "2",
            "tooltip": tooltip_lines(
                [path + self._type_suffix(path), _plural(count, "op") + " (collapsed)"], MAX_TOOLTIP_CHARS
            ),
        }
        label = text_lines([scope_title(self.graph, path), _plural(count, "op")])
        container.node(name, label=label, _attributes=attrs)


def to_dot(
    graph: Graph,
    *,
    highlights: Mapping[int, Iterable[str]] | None = None,
    fold: bool = True,
    collapsed: Iterable[str] = (),
    show_shapes: bool = True,
    title: str | None = None,
    rankdir: str = "TB",
) -> str:
    """The DOT source of ``graph``.

    ``highlights`` maps node ids to extra CSS classes (``root``, ``warning``, ``selected``, ...);
    a folded node's classes go to the op it is folded into, a hidden node's to its collapsed
    module box. ``fold`` hides constants, attribute reads and list/tuple plumbing inside their
    consumers. ``collapsed`` names module paths drawn as one box (unknown paths and the root
    ``""`` are ignored). ``rankdir`` is one of ``TB``, ``LR``, ``BT``, ``RL``.
    """
    if rankdir not in RANKDIRS:
        raise ValueError(f"rankdir must be one of {', '.join(RANKDIRS)}, not {rankdir!r}")
    builder = _DotBuilder(graph, highlights or {}, fold, collapsed, show_shapes)
    return builder.build(title, rankdir)
