"""The SSA graph of a trace as plain, torch-free data.

A :class:`Graph` is what the views draw and what the diff compares. It is built from a
``torch._C.Graph`` by :mod:`jupyter_tracejit.core.torchscript.extract`, but nothing here imports
torch, so a graph loaded from JSON (a saved notebook, a report) behaves exactly like a live one.

For ``def f(x): return torch.relu(x) + 1`` the inlined TorchScript graph reads::

    graph(%x : Float(3, strides=[1], requires_grad=0, device=cpu)):
      %1 : Float(3) = aten::relu(%x)        # f.py:2:0
      %2 : int = prim::Constant[value=1]()
      %3 : Float(3) = aten::add(%1, %2, %2)  # f.py:2:0
      return (%3)

and becomes three :class:`Node` s (ids 0, 1, 2 in that order), four :class:`Value` s (``x`` is
value 0, a graph input with no producer) and ``outputs == (3,)``.

Ids are positions: ``graph.nodes[i].id == i`` and ``graph.values[i].id == i``. Nodes are listed
in pre-order (a node, then the nodes of its blocks), which is a topological order.

The parts (:class:`Node`, :class:`Value`, ...) live in :mod:`.graph_parts` and are re-exported here; the graph's JSON
form is :mod:`.graph_json`, its text :mod:`.graph_text`, its invariants :mod:`.graph_lint`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from .graph_json import GRAPH_SCHEMA_VERSION, graph_arguments, graph_to_json
from .graph_lint import lint_problems
from .graph_parts import (
    NODE_ROLES,
    PLUMBING_ROLES,
    Block,
    Frame,
    ModuleScope,
    Node,
    SourceLoc,
    Value,
    fold_class,
    legacy_title,
)
from .graph_text import graph_text, node_text

__all__ = [
    "GRAPH_SCHEMA_VERSION",
    "NODE_ROLES",
    "PLUMBING_ROLES",
    "Block",
    "Frame",
    "Graph",
    "GraphLintError",
    "ModuleScope",
    "Node",
    "SourceLoc",
    "Value",
    "fold_class",
    "legacy_title",
    "natural_key",
    "scope_parent",
]


class GraphLintError(ValueError):
    """Raised by :meth:`Graph.lint` with every broken invariant listed."""


_DIGITS = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple[tuple[tuple[str, int], ...], str]:
    """Sort key that puts ``layer2`` before ``layer10`` (runs of digits compare as numbers)."""
    parts = _DIGITS.split(name)
    runs = tuple((parts[i], int(parts[i + 1]) if i + 1 < len(parts) else -1) for i in range(0, len(parts), 2))
    return runs, name


def scope_parent(path: str) -> str | None:
    if path == "":
        return None
    return path.rsplit(".", 1)[0] if "." in path else ""


class Graph:
    """The inlined SSA graph of one traced method."""

    def __init__(
        self,
        *,
        method: str,
        nodes: list[Node],
        values: list[Value],
        inputs: tuple[int, ...],
        outputs: tuple[int, ...],
        scope_types: dict[str, str] | None = None,
        code: str | Callable[[], str] = "",
    ) -> None:
        self.method = method
        self.nodes = nodes
        self.values = values
        self.inputs = inputs
        self.outputs = outputs
        # the Python-like TorchScript code of the method (``traced.code``), not inlined: printed on first use
        # (torch's printer costs ~3 µs per node, and a trace made from Python may never show it)
        self._code = code
        self.scopes = self._build_scopes(scope_types or {})
        self._users: list[list[int]] | None = None

    @property
    def code(self) -> str:
        """The Python-like TorchScript code of the method (``traced.code``), not inlined."""
        if callable(self._code):
            self._code = self._code()
        return self._code

    # -- navigation ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def __repr__(self) -> str:
        return f"<Graph {self.method}: {len(self.nodes)} nodes, {len(self.scopes) - 1} modules>"

    def node(self, node_id: int) -> Node:
        return self.nodes[node_id]

    def value(self, value_id: int) -> Value:
        return self.values[value_id]

    def producer(self, value_id: int) -> Node | None:
        p = self.values[value_id].producer
        return None if p is None else self.nodes[p]

    def users(self, value_id: int) -> list[int]:
        """Ids of the nodes that read a value, in graph order."""
        if self._users is None:
            users: list[list[int]] = [[] for _ in self.values]
            for n in self.nodes:
                for v in n.inputs:
                    if not users[v] or users[v][-1] != n.id:
                        users[v].append(n.id)
            self._users = users
        return self._users[value_id]

    def consumers(self, node: Node) -> list[int]:
        seen: dict[int, None] = {}
        for v in node.outputs:
            for u in self.users(v):
                seen.setdefault(u, None)
        return list(seen)

    def fold_target(self, node: Node) -> int | None:
        """The op a foldable node is drawn inside: the first op (in graph order) its value reaches through
        foldable consumers (a ``GetAttr`` chain ``self.encoder.layer.0.weight`` ends in the op using the weight).

        ``None`` when the node is not foldable or reaches no op (it feeds only graph outputs, or nothing).
        """
        if not node.foldable:
            return None
        seen = {node.id}
        frontier = [node.id]
        while frontier:
            reached: list[int] = []
            for nid in frontier:
                for c in self.consumers(self.nodes[nid]):
                    if c not in seen:
                        seen.add(c)
                        reached.append(c)
            ops = [c for c in reached if not self.nodes[c].foldable]
            if ops:
                return min(ops)
            frontier = reached
        return None

    def reaches_output(self, node: Node) -> bool:
        """Whether a node's values reach a graph output, directly or through foldable consumers."""
        outputs = set(self.outputs)
        seen = {node.id}
        stack = [node.id]
        while stack:
            n = self.nodes[stack.pop()]
            if any(v in outputs for v in n.outputs):
                return True
            for c in self.consumers(n):
                if c not in seen and self.nodes[c].foldable:
                    seen.add(c)
                    stack.append(c)
        return False

    def nodes_at(self, file: str, line: int) -> list[int]:
        """Nodes whose user source line is ``file:line``."""
        return [n.id for n in self.nodes if n.source is not None and n.source.line == line and n.source.file == file]

    def nodes_in_scope(self, path: str, *, recursive: bool = True) -> list[int]:
        if not recursive:
            return list(self.scopes[path].node_ids)
        prefix = path + "."
        return [n.id for n in self.nodes if n.scope == path or not path or n.scope.startswith(prefix)]

    def kinds(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for n in self.nodes:
            counts[n.kind] = counts.get(n.kind, 0) + 1
        return counts

    def source_lines(self) -> dict[tuple[str, int], list[int]]:
        """``(file, line) -> node ids``: the other direction of ``Node.source``."""
        out: dict[tuple[str, int], list[int]] = {}
        for n in self.nodes:
            if n.source is not None:
                out.setdefault((n.source.file, n.source.line), []).append(n.id)
        return out

    def _build_scopes(self, scope_types: dict[str, str]) -> dict[str, ModuleScope]:
        scopes: dict[str, ModuleScope] = {}

        def ensure(path: str) -> ModuleScope:
            found = scopes.get(path)
            if found is not None:
                return found
            parent = scope_parent(path)
            if parent is not None:
                ensure(parent)
            scope = ModuleScope(path=path, type=scope_types.get(path, ""), parent=parent)
            scopes[path] = scope
            if parent is not None:
                scopes[parent].children.append(path)
            return scope

        ensure("")
        for path in sorted(scope_types):
            ensure(path)
        last_path: str | None = None
        node_ids: list[int] = []
        for n in self.nodes:  # nodes come in runs of one scope: look each run's scope up once
            if n.scope != last_path:
                last_path = n.scope
                node_ids = ensure(last_path).node_ids
            node_ids.append(n.id)
        for scope in scopes.values():
            scope.children.sort(key=lambda p: natural_key(scopes[p].name))
        return scopes

    def with_scope_types(self, types: dict[str, str]) -> Graph:
        """The same graph with module types taken from ``types`` (module path -> class name), keeping only the
        scopes that hold nodes and their ancestors."""
        used: set[str] = set()
        for n in self.nodes:
            path: str | None = n.scope
            while path is not None and path not in used:
                used.add(path)
                path = scope_parent(path)
        scope_types = {p: types.get(p, self.scopes[p].type if p in self.scopes else "") for p in used}
        return Graph(
            method=self.method,
            nodes=self.nodes,
            values=self.values,
            inputs=self.inputs,
            outputs=self.outputs,
            scope_types=scope_types,
            code=self._code,
        )

    def scope_preorder(self) -> list[str]:
        """Every scope path, parents before children, children in natural order (``2`` before ``10``)."""
        out: list[str] = []
        stack = [""]
        while stack:
            path = stack.pop()
            out.append(path)
            stack.extend(reversed(self.scopes[path].children))
        return out

    # -- invariants, JSON, text (graph_lint.py, graph_json.py, graph_text.py) ---------------------------------------
    def lint(self) -> None:
        """Check the graph's invariants; raise :class:`GraphLintError` listing every violation."""
        problems = lint_problems(self)
        if problems:
            raise GraphLintError(f"{len(problems)} graph invariant(s) broken:\n- " + "\n- ".join(problems))

    def to_json(self) -> dict[str, Any]:
        """A compact, self-contained JSON form (tables of strings, frames and stacks; rows as arrays): the layout
        :mod:`.graph_json` describes, which ``protocol.ts`` mirrors."""
        return graph_to_json(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Graph:
        """Read back :meth:`to_json`, or a version-1 graph (saved before nodes carried their roles)."""
        return cls(**graph_arguments(data))

    def node_text(self, node: Node) -> str:
        """One line in TorchScript's IR syntax (``%3 : Float(3) = aten::add(%1, %2, %2)``)."""
        return node_text(self, node)

    def text(self) -> str:
        """The whole graph in TorchScript's IR syntax, with user source lines (like ``inlined_graph``)."""
        return graph_text(self)
