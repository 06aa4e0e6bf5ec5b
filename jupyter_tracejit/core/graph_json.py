"""A :class:`~.graph.Graph` as compact, self-contained JSON and back (:meth:`.Graph.to_json`,
:meth:`.Graph.from_json`): tables of strings, frames and stacks written once, rows as arrays.

Layout (``protocol.ts`` mirrors it):

- ``strings``: every name, type, kind, scope, file, function and code line, once.
- ``frames``: ``[file, line, func, code, internal]`` with string indices.
- ``stacks``: ``[user_index, frame, frame, ...]`` (innermost frame first).
- ``values``: ``[name, type, shape | null, dtype | -1, device | -1, requires_grad (0/1/-1), producer | -1]``.
- ``nodes``: ``[kind, inputs, outputs, scope, stack | -1, attributes | 0, blocks | 0, parent | -1, flags,
  role, title]`` where blocks are ``[inputs, outputs, node ids]``, flags bit 0 is ``nondeterministic``, role
  is one of :data:`~.graph_parts.NODE_ROLES`; title indexes ``strings`` (a graph saved before titles has no such
  column).
- ``scopes``: ``[path, type]`` for every module, parents before children, siblings in natural order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from .graph_parts import Block, Frame, Node, SourceLoc, Value, legacy_title

if TYPE_CHECKING:
    from .graph import Graph

#: 2: each node carries its role; a size may be a symbol (``s27``). Version-1 graphs are read through
#: :func:`jupyter_tracejit.core.legacy.upgrade_graph`.
GRAPH_SCHEMA_VERSION = 2


class _Tables:
    """The shared tables of a graph's JSON (:func:`graph_to_json`): each string, frame and stack written once, rows
    naming them by index."""

    def __init__(self) -> None:
        self.strings: dict[str, int] = {}
        self.frames: dict[Frame, int] = {}
        self.frame_rows: list[list[Any]] = []
        self.stacks: dict[tuple[int, tuple[Frame, ...]], int] = {}
        self.stack_rows: list[list[int]] = []

    def string(self, text: str) -> int:
        idx = self.strings.get(text)
        if idx is None:
            idx = self.strings[text] = len(self.strings)
        return idx

    def stack(self, src: SourceLoc | None) -> int:
        if src is None:
            return -1
        key = (src.user_index, src.stack)
        idx = self.stacks.get(key)
        if idx is not None:
            return idx
        row = [src.user_index]
        for fr in src.stack:
            fi = self.frames.get(fr)
            if fi is None:
                fi = self.frames[fr] = len(self.frame_rows)
                s = self.string
                self.frame_rows.append([s(fr.file), fr.line, s(fr.func), s(fr.code), int(fr.internal)])
            row.append(fi)
        idx = self.stacks[key] = len(self.stack_rows)
        self.stack_rows.append(row)
        return idx


def graph_to_json(graph: Graph) -> dict[str, Any]:
    """The graph's JSON form (the layout above)."""
    tables = _Tables()
    s, stack_index = tables.string, tables.stack
    value_rows = [
        [
            s(v.name),
            s(v.type),
            None if v.shape is None else list(v.shape),
            -1 if v.dtype is None else s(v.dtype),
            -1 if v.device is None else s(v.device),
            -1 if v.requires_grad is None else int(v.requires_grad),
            -1 if v.producer is None else v.producer,
        ]
        for v in graph.values
    ]
    node_rows = [
        [
            s(n.kind),
            list(n.inputs),
            list(n.outputs),
            s(n.scope),
            stack_index(n.source),
            n.attributes or 0,
            [[list(b.inputs), list(b.outputs), list(b.nodes)] for b in n.blocks] or 0,
            -1 if n.parent is None else n.parent,
            int(n.nondeterministic),
            n.role,
            s(n.title or n.kind),
        ]
        for n in graph.nodes
    ]
    # in tree order (parents first, children in natural order), which readers keep as the children's order
    scope_rows = [[s(p), s(graph.scopes[p].type)] for p in graph.scope_preorder()]
    return {
        "graph_schema": GRAPH_SCHEMA_VERSION,
        "method": graph.method,
        "strings": list(tables.strings),
        "frames": tables.frame_rows,
        "stacks": tables.stack_rows,
        "values": value_rows,
        "nodes": node_rows,
        "inputs": list(graph.inputs),
        "outputs": list(graph.outputs),
        "scopes": scope_rows,
        "code": graph.code,
    }


class GraphArguments(TypedDict):
    """What :class:`~.graph.Graph` is built from (its constructor's keyword arguments)."""

    method: str
    nodes: list[Node]
    values: list[Value]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    scope_types: dict[str, str]
    code: str


def graph_arguments(data: dict[str, Any]) -> GraphArguments:
    """Read back :func:`graph_to_json`, or a version-1 graph (saved before nodes carried their roles), as the
    arguments of the graph it was."""
    from .legacy import upgrade_graph

    data = upgrade_graph(data)
    version = data.get("graph_schema")
    if version != GRAPH_SCHEMA_VERSION:
        raise ValueError(
            f"graph JSON has graph_schema {version!r}; this version of jupyter-tracejit reads "
            f"{GRAPH_SCHEMA_VERSION} (and 1). Re-create the trace with this version."
        )
    st: list[str] = data["strings"]
    frames = [
        Frame(file=st[f], line=ln, func=st[fn], code=st[c], internal=bool(i)) for f, ln, fn, c, i in data["frames"]
    ]
    stacks = [SourceLoc(stack=tuple(frames[i] for i in row[1:]), user_index=row[0]) for row in data["stacks"]]
    values = [
        Value(
            id=i,
            name=st[name],
            type=st[typ],
            shape=None if shape is None else tuple(shape),
            dtype=None if dtype < 0 else st[dtype],
            device=None if device < 0 else st[device],
            requires_grad=None if rg < 0 else bool(rg),
            producer=None if prod < 0 else prod,
        )
        for i, (name, typ, shape, dtype, device, rg, prod) in enumerate(data["values"])
    ]
    nodes = [
        Node(
            id=i,
            kind=st[kind],
            inputs=tuple(ins),
            outputs=tuple(outs),
            scope=st[scope],
            source=None if stack < 0 else stacks[stack],
            attributes=attrs or {},
            blocks=tuple(Block(tuple(b[0]), tuple(b[1]), tuple(b[2])) for b in (blocks or [])),
            parent=None if parent < 0 else parent,
            nondeterministic=bool(flags & 1),
            role=role,
            title=st[title[0]] if title else legacy_title(st[kind]),
        )
        for i, (kind, ins, outs, scope, stack, attrs, blocks, parent, flags, role, *title) in enumerate(data["nodes"])
    ]
    return GraphArguments(
        method=data["method"],
        nodes=nodes,
        values=values,
        inputs=tuple(data["inputs"]),
        outputs=tuple(data["outputs"]),
        scope_types={st[p]: st[t] for p, t in data["scopes"]},
        code=data.get("code", ""),
    )
