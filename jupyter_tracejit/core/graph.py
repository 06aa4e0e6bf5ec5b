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
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

#: 2: each node carries its role; a size may be a symbol (``s27``). Version-1 graphs are read through
#: :func:`jupyter_tracejit.core.legacy.upgrade_graph`.
GRAPH_SCHEMA_VERSION = 2
#: JSON numbers are doubles in the browser: integers beyond this read back rounded
MAX_SAFE_INT = 2**53 - 1

#: What a node does, as data (torch.fx's ``Node.op`` plays this part): readers decide by role, never by a back
#: end's spelling of a kind (``prim::Constant``). Each back end says which of its kinds has which role.
NODE_ROLES: dict[str, str] = {
    "op": "a computation (an operator call)",
    "constant": "a literal value (its attribute 'value')",
    "getattr": "reads a parameter, buffer or submodule of the module (its attribute 'name'); chains give paths",
    "list": "builds a list of its inputs",
    "tuple": "builds a tuple of its inputs",
    "dict": "builds a dict of its inputs (keys and values alternating)",
    "unpack": "takes a list or tuple apart: its outputs are the items",
    "index": "picks one item of a tuple (its attribute 'index')",
}
#: roles that only carry structure into their consumers; with constants and attribute reads, views fold them
PLUMBING_ROLES = frozenset({"list", "tuple", "dict", "unpack", "index"})


def legacy_title(kind: str) -> str:
    """The title of a node saved without one: its kind without ``.default``, the overload nearly every export op
    has (``aten::linear.default`` -> ``aten::linear``; ``aten::add.Tensor`` keeps ``.Tensor``)."""
    head, sep, name = kind.rpartition("::")
    bare = name.removesuffix(".default")
    return f"{head}{sep}{bare}" if bare else kind


def fold_class(role: str) -> str:
    """The role's family as views draw it: ``constant``, ``getattr``, ``plumbing`` or ``op``."""
    return "plumbing" if role in PLUMBING_ROLES else role


@dataclass(frozen=True)
class Frame:
    """One Python stack frame recorded by the tracer."""

    file: str
    line: int
    func: str
    code: str = ""
    #: True for frames inside torch itself (``site-packages/torch/...``)
    internal: bool = False

    def __str__(self) -> str:
        return f"{self.file}:{self.line} in {self.func}"


@dataclass(frozen=True)
class SourceLoc:
    """Where a node was recorded: the user's frame plus the whole stack (innermost first)."""

    stack: tuple[Frame, ...]
    #: index into ``stack`` of the innermost frame outside torch (the user's line)
    user_index: int

    @property
    def user_frame(self) -> Frame:
        return self.stack[self.user_index]

    @property
    def file(self) -> str:
        return self.user_frame.file

    @property
    def line(self) -> int:
        return self.user_frame.line

    @property
    def code(self) -> str:
        return self.user_frame.code

    @property
    def func(self) -> str:
        return self.user_frame.func

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


# Value, Block and Node are read-only by convention; they are not frozen because a frozen dataclass
# costs 5x more to build, and a 12k-node graph builds 24k of them per extraction.
@dataclass(slots=True)
class Value:
    """An SSA value: a graph or block input, or the output of one node."""

    id: int
    #: TorchScript debug name (``x``, ``input.3``, ``12``); not stable across traces
    name: str
    #: TorchScript type without shape (``Tensor``, ``int``, ``Tensor[]``, ``__torch__.Net``)
    type: str
    #: sizes when the capture recorded them: a number, a symbol an export keeps symbolic (``s27``, ``2*s27``), or
    #: ``None`` for an unknown dimension
    shape: tuple[int | str | None, ...] | None = None
    dtype: str | None = None
    device: str | None = None
    requires_grad: bool | None = None
    #: id of the producing node; ``None`` for graph and block inputs
    producer: int | None = None

    def shape_str(self) -> str:
        """``Float(3, 4)``-style summary used by labels, or the type for non-tensors."""
        if self.shape is None:
            return self.dtype or self.type
        dims = ", ".join("?" if d is None else str(d) for d in self.shape)
        return f"{self.dtype or self.type}({dims})"


@dataclass(slots=True)
class Block:
    """A sub-block of a ``prim::If`` / ``prim::Loop`` node (present when traced code calls script)."""

    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    nodes: tuple[int, ...]


@dataclass(slots=True)
class Node:
    id: int
    kind: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    #: module path of the innermost module that recorded the node (``layer1.0.conv1``; ``""`` is the root)
    scope: str = ""
    source: SourceLoc | None = None
    #: JSON-ready attribute values (``value`` of a constant, ``name`` of a GetAttr, ...)
    attributes: dict[str, Any] = field(default_factory=dict)
    blocks: tuple[Block, ...] = ()
    #: id of the node whose block contains this one, ``None`` at top level
    parent: int | None = None
    #: torch's ``Node.isNondeterministic()`` (dropout in train mode, random ops)
    nondeterministic: bool = False
    #: what the node does (:data:`NODE_ROLES`), set by the back end that built the graph
    role: str = "op"
    #: what the views call the node, set by the back end beside its role (an export titles ``aten::linear.default``
    #: ``aten::linear``); ``""``: its kind. A graph saved before nodes had titles reads with :func:`legacy_title`
    title: str = ""

    @property
    def foldable(self) -> bool:
        """Constants, attribute reads and container plumbing: views fold them into their consumers."""
        return self.role != "op"


@dataclass
class ModuleScope:
    """One ``nn.Module`` in the hierarchy of the traced module."""

    path: str
    #: class name of the module (``Linear``), ``""`` when unknown
    type: str
    parent: str | None
    children: list[str] = field(default_factory=list)
    #: nodes whose innermost scope is this module (not its children)
    node_ids: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.rsplit(".", 1)[-1] if self.path else ""

    @property
    def depth(self) -> int:
        return 0 if not self.path else self.path.count(".") + 1


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


class _Tables:
    """The shared tables of a graph's JSON (:meth:`Graph.to_json`): each string, frame and stack written once, rows
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

    # -- invariants -----------------------------------------------------------------------------
    def lint(self) -> None:
        """Check the graph's invariants; raise :class:`GraphLintError` listing every violation."""
        problems: list[str] = []
        nv = len(self.values)
        for i, value in enumerate(self.values):
            if value.id != i:
                problems.append(f"value at index {i} has id {value.id}: ids must equal list positions")
            if value.producer is not None:
                if not 0 <= value.producer < len(self.nodes):
                    problems.append(f"value {i} ({value.name}) names producer {value.producer}, which does not exist")
                elif i not in self.nodes[value.producer].outputs:
                    problems.append(
                        f"value {i} ({value.name}) names producer {value.producer}, but that node does not list it "
                        "as an output: keep Value.producer and Node.outputs in sync"
                    )
        defined = [False] * nv
        for v in self.inputs:
            if 0 <= v < nv:
                defined[v] = True
            else:
                problems.append(f"graph input {v} is not a value id")
        for n in self.nodes:
            if n.id >= len(self.nodes) or self.nodes[n.id] is not n:
                problems.append(f"node {n.kind} has id {n.id}, which is not its position in Graph.nodes")
            for blk in n.blocks:
                for v in blk.inputs:
                    if 0 <= v < nv:
                        defined[v] = True
            for v in n.inputs:
                if not 0 <= v < nv:
                    problems.append(f"node {n.id} ({n.kind}) reads value {v}, which does not exist")
                elif not defined[v]:
                    problems.append(
                        f"node {n.id} ({n.kind}) reads value {v} ({self.values[v].name}) before it is "
                        "defined: nodes must be listed in topological (pre-)order"
                    )
            for v in n.outputs:
                if not 0 <= v < nv:
                    problems.append(f"node {n.id} ({n.kind}) writes value {v}, which does not exist")
                    continue
                if defined[v]:
                    problems.append(f"value {v} ({self.values[v].name}) is defined twice (SSA violation)")
                defined[v] = True
                if self.values[v].producer != n.id:
                    problems.append(
                        f"node {n.id} ({n.kind}) lists output {v}, whose producer is {self.values[v].producer}"
                    )
            if n.parent is not None and not any(n.id in b.nodes for b in self.nodes[n.parent].blocks):
                problems.append(f"node {n.id} ({n.kind}) names parent {n.parent}, whose blocks do not hold it")
            if n.scope not in self.scopes:
                problems.append(f"node {n.id} ({n.kind}) is in unknown scope {n.scope!r}")
            if n.source is not None and not 0 <= n.source.user_index < len(n.source.stack):
                problems.append(f"node {n.id} ({n.kind}) has a source user_index outside its stack")
        for v in self.outputs:
            if not 0 <= v < nv or not defined[v]:
                problems.append(f"graph output {v} is not a defined value")
        typed = any(scope.type for path, scope in self.scopes.items() if path)
        for path, scope in self.scopes.items():
            if scope.parent is not None and scope.parent not in self.scopes:
                problems.append(f"scope {path!r} names missing parent {scope.parent!r}")
            if path and not scope.node_ids and not scope.children:
                problems.append(
                    f"scope {path!r} ({scope.type or 'no type'}) holds no nodes and no modules: a phantom, e.g. a "
                    "module type filed under a path without its container's name"
                )
            if path and typed and scope.node_ids and not scope.type:
                problems.append(f"scope {path!r} holds nodes but has no module type")
        if problems:
            raise GraphLintError(f"{len(problems)} graph invariant(s) broken:\n- " + "\n- ".join(problems))

    # -- serialization ----------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """A compact, self-contained JSON form (tables of strings, frames and stacks; rows as arrays).

        Layout (``protocol.ts`` mirrors it):

        - ``strings``: every name, type, kind, scope, file, function and code line, once.
        - ``frames``: ``[file, line, func, code, internal]`` with string indices.
        - ``stacks``: ``[user_index, frame, frame, ...]`` (innermost frame first).
        - ``values``: ``[name, type, shape | null, dtype | -1, device | -1, requires_grad (0/1/-1), producer | -1]``.
        - ``nodes``: ``[kind, inputs, outputs, scope, stack | -1, attributes | 0, blocks | 0, parent | -1, flags,
          role, title]`` where blocks are ``[inputs, outputs, node ids]``, flags bit 0 is ``nondeterministic``, role
          is one of :data:`NODE_ROLES`; title indexes ``strings`` (a graph saved before titles has no such column).
        - ``scopes``: ``[path, type]`` for every module, parents before children, siblings in natural order.
        """
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
            for v in self.values
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
            for n in self.nodes
        ]
        # in tree order (parents first, children in natural order), which readers keep as the children's order
        scope_rows = [[s(p), s(self.scopes[p].type)] for p in self.scope_preorder()]
        return {
            "graph_schema": GRAPH_SCHEMA_VERSION,
            "method": self.method,
            "strings": list(tables.strings),
            "frames": tables.frame_rows,
            "stacks": tables.stack_rows,
            "values": value_rows,
            "nodes": node_rows,
            "inputs": list(self.inputs),
            "outputs": list(self.outputs),
            "scopes": scope_rows,
            "code": self.code,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Graph:
        """Read back :meth:`to_json`, or a version-1 graph (saved before nodes carried their roles)."""
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
            for i, (kind, ins, outs, scope, stack, attrs, blocks, parent, flags, role, *title) in enumerate(
                data["nodes"]
            )
        ]
        return cls(
            method=data["method"],
            nodes=nodes,
            values=values,
            inputs=tuple(data["inputs"]),
            outputs=tuple(data["outputs"]),
            scope_types={st[p]: st[t] for p, t in data["scopes"]},
            code=data.get("code", ""),
        )

    # -- text -----------------------------------------------------------------------------------
    def node_text(self, node: Node) -> str:
        """One line in TorchScript's IR syntax (``%3 : Float(3) = aten::add(%1, %2, %2)``)."""
        outs = ", ".join(f"%{self.values[v].name} : {self.values[v].shape_str()}" for v in node.outputs)
        attrs = ""
        if node.attributes:
            attrs = "[" + ", ".join(f"{k}={format_attribute(a)}" for k, a in node.attributes.items()) + "]"
        ins = ", ".join(f"%{self.values[v].name}" for v in node.inputs)
        lhs = f"{outs} = " if outs else ""
        scope = f", scope: {node.scope}" if node.scope else ""
        src = f"  # {node.source.file}:{node.source.line}" if node.source else ""
        return f"{lhs}{node.kind}{attrs}({ins}){scope}{src}"

    def text(self) -> str:
        """The whole graph in TorchScript's IR syntax, with user source lines (like ``inlined_graph``)."""
        ins = ", ".join(f"%{self.values[v].name} : {self.values[v].shape_str()}" for v in self.inputs)
        lines = [f"graph({ins}):"]

        def emit(ids: Iterable[int], indent: str) -> None:
            for nid in ids:
                n = self.nodes[nid]
                lines.append(indent + self.node_text(n))
                for bi, blk in enumerate(n.blocks):
                    bins = ", ".join(f"%{self.values[v].name}" for v in blk.inputs)
                    lines.append(f"{indent}  block{bi}({bins}):")
                    emit(blk.nodes, indent + "    ")
                    bouts = ", ".join(f"%{self.values[v].name}" for v in blk.outputs)
                    lines.append(f"{indent}    -> ({bouts})")

        emit((n.id for n in self.nodes if n.parent is None), "  ")
        lines.append("  return (" + ", ".join(f"%{self.values[v].name}" for v in self.outputs) + ")")
        return "\n".join(lines) + "\n"


def js_number(x: float | int) -> str:
    """A number as JavaScript's ``String(x)`` prints the double the JSON holds (``1.0`` -> ``1``)."""
    if isinstance(x, int) and abs(x) <= MAX_SAFE_INT:
        return str(x)
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    digits_tuple, exponent = Decimal(repr(abs(x))).normalize().as_tuple()[1:]
    digits = "".join(map(str, digits_tuple))
    k = len(digits)
    n = k + int(exponent)  # value = 0.digits x 10^n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def python_number(x: float | int) -> str:
    """A number as Python prints it (``1.0`` stays ``1.0``): for text only Python reads, like divergence reasons."""
    return repr(x)


def format_attribute(value: Any, number: Callable[[float | int], str] = js_number) -> str:
    """Attribute values as TorchScript prints them; tensors show as ``<Tensor>``. Numbers as the browser prints
    the same JSON (``graph.ts`` writes the same text), unless ``number`` says otherwise."""
    if isinstance(value, dict):
        if "tensor" in value:
            t = value["tensor"]
            return f"<Tensor {t.get('dtype', '')}{list(t.get('shape', []))}>"
        if "float" in value:
            return str(value["float"])
        if "device" in value:
            return f'"{value["device"]}"'
        if "repr" in value:
            return str(value["repr"])
        return "{" + ", ".join(f"{k}: {format_attribute(v, number)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(format_attribute(v, number) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # escaped as graph.ts's JSON.stringify does
    if value is None:
        return "None"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, (int, float)):
        return number(value)
    return str(value)


def signature(graph: Graph, node: Node) -> str:
    """``aten::linear(Tensor,Tensor,Tensor)``: the key of :func:`argument_names`' table (``model/run.ts`` builds it
    the same way)."""
    return f"{node.kind}({','.join(graph.values[v].type for v in node.inputs)})"
