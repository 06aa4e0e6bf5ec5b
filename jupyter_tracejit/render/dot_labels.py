"""What a node's box says (its label: the op's title, folded constants and attribute reads, shapes) and its tooltip
(the op, its inputs and outputs, its source line), as model/graph.ts ``nodeLabel`` / ``nodeTooltip`` say it."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..core.graph import Graph, Node
from .dot_text import MAX_FOLDED_ITEMS, MAX_ITEM_CHARS, MAX_TOOLTIP_OUTPUTS, format_value, truncate
from .location import location_label

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACKETS = {"list": ("[", "]"), "tuple": ("(", ")")}


def _folded_text(graph: Graph, value_id: int, depth: int = 0) -> str | None:
    """What a folded input shows inside its consumer's label (``dim=1``, ``[-1, 2]``); None for data."""
    value = graph.values[value_id]
    p = graph.producer(value_id)
    if p is None or depth > 3:
        return None
    if p.role == "constant":
        text = format_value(p.attributes.get("value"))
        name = value.name.split(".", 1)[0]
        return f"{name}={text}" if depth == 0 and _IDENTIFIER.fullmatch(name) else text
    brackets = _BRACKETS.get(p.role)
    if brackets is None:
        return None
    items = [_folded_text(graph, v, depth + 1) for v in p.inputs]
    if any(i is None for i in items):
        return None
    return brackets[0] + ", ".join(i for i in items if i is not None) + brackets[1]


def _folded_items(graph: Graph, node: Node) -> list[str]:
    items = []
    for v in node.inputs:
        p = graph.producer(v)
        if p is not None and p.foldable and p.role != "getattr":
            text = _folded_text(graph, v)
            if text is not None:
                items.append(text)
    return items


def op_title(node: Node) -> str:
    """A node's first label line: the title its back end gave it, without its namespace (``aten::linear`` ->
    ``linear``)."""
    return (node.title or node.kind).split("::")[-1]


def node_label(graph: Graph, node: Node, fold: bool, show_shapes: bool) -> list[str]:
    lines = [op_title(node)]
    if node.role == "constant":
        lines.append(format_value(node.attributes.get("value")))
    elif node.role == "getattr":
        lines.append(str(node.attributes.get("name", "?")))
    if show_shapes and node.outputs:
        lines.append(graph.values[node.outputs[0]].shape_str())
    if fold:
        items = [truncate(i, MAX_ITEM_CHARS) for i in _folded_items(graph, node)]
        if items:
            more = ", …" if len(items) > MAX_FOLDED_ITEMS else ""
            lines.append(", ".join(items[:MAX_FOLDED_ITEMS]) + more)
    return lines


def node_tooltip(graph: Graph, node: Node, file_names: Mapping[str, str] | None = None) -> list[str]:
    """Kind, outputs with shapes, folded arguments, scope, and the source line as every view names it
    (``cell [9], line 7`` for a file ``file_names`` names, :func:`.location.location_label`)."""
    lines = [node.kind]
    for v in node.outputs[:MAX_TOOLTIP_OUTPUTS]:
        lines.append(f"%{graph.values[v].name} : {graph.values[v].shape_str()}")
    if len(node.outputs) > MAX_TOOLTIP_OUTPUTS:
        lines.append(f"… {len(node.outputs) - MAX_TOOLTIP_OUTPUTS} more")
    items = _folded_items(graph, node)
    if items:
        lines.append("args: " + ", ".join(items))
    if node.scope:
        scope_type = graph.scopes[node.scope].type
        lines.append(f"scope: {node.scope}" + (f" ({scope_type})" if scope_type else ""))
    if node.source is not None:
        frame = node.source.user_frame
        lines.append(location_label(frame.file, frame.line, file_names or {}))
        if frame.code:
            lines.append(frame.code)
    return lines


__all__ = ["node_label", "node_tooltip", "op_title"]
