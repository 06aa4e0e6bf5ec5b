"""``torch._C.Graph`` -> :class:`~jupyter_tracejit.core.graph.Graph`.

The walk uses the cheap pybind accessors (``inputsSize``/``inputsAt`` rather than the ``inputs()``
iterator, ``blocks()`` only on nodes that can have blocks) and works out each distinct type, source stack
and module hierarchy once: a 12k-node graph repeats a handful of them (see :func:`extract_graph`).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import torch

from ..graph import Block, Frame, Graph, Node, SourceLoc, Value
from ..values import demangle, encode_ivalue, tensor_summary
from .node_facts import BLOCK_KINDS, may_be_nondeterministic, node_attributes
from .roles import role_of
from .scope_and_stack import parse_hierarchy, parse_stack, scope_path

#: marks a module hierarchy among the scope names of :func:`extract_graph`'s cache (no scope name starts with it)
_HIERARCHY_KEY = "\0"
#: "not looked up yet" in caches whose values may be None
_MISSING: Any = object()


@dataclass
class Extraction:
    """What :func:`extract_graph` returns: the graph, plus the live tensors of tensor constants."""

    graph: Graph
    #: node id -> tensor value of ``prim::Constant`` nodes holding a tensor (for the check's comparison)
    tensor_constants: dict[int, torch.Tensor] = field(default_factory=dict)


def extract_graph(
    ts_graph: torch._C.Graph,
    *,
    method: str = "forward",
    code: str | Callable[[], str] = "",
    root_type: str = "",
    number_unnamed: bool = False,
    parse_source: Callable[[str, dict[str, Frame | None]], SourceLoc | None] | None = None,
    hierarchy_scopes: bool = False,
) -> Extraction:
    """Turn an (inlined) TorchScript graph into a :class:`Graph`.

    ``root_type`` names the class of the traced module (the root scope); the types of
    submodules come from the nodes' module hierarchy.

    Every fact comes from a pybind accessor (0.2-1 µs a call, a dozen calls a node), so a 12k-node graph is
    about the calls and the Python objects, not the logic. What is done once instead of per node:

    - the garbage collector waits until the graph is built: the graph is acyclic, so a collection in the
      middle of building it frees nothing, yet with torch imported each full collection walks the whole heap
      (0.1 s and more: most of the 40 µs per node a 12k-node extraction used to take);
    - a tensor type is read through its accessors once per distinct printout
      (``Float(2, strides=[1], requires_grad=0, device=cpu)`` names every field a Value keeps); a source stack is
      parsed once per distinct text and a frame once per distinct line; a scope name gives its module path once;
    - values are found by their pybind wrapper: pybind hands back the same Python object for a value while one
      is alive, and the table keeps them alive, so no ``unique()`` call per input;
    - ``isNondeterministic()`` is asked only of nodes whose kind may be random (:func:`may_be_nondeterministic`).

    ``number_unnamed``: unnamed values (torch prints their unique number) are numbered by their position, which is
    the number ``_jit_pass_canonicalize`` gives them; so a graph without calls (:func:`.canonical.has_calls`)
    extracts as its canonical copy would, without the copy.

    ``parse_source`` reads a node's ``sourceRange()`` text (default :func:`parse_stack`, the tracer's stacks); a
    graph loaded from an archive has other texts (:mod:`..archive.source`). ``hierarchy_scopes``: a node without a
    scope name (a loaded, inlined graph keeps no tracer scopes) takes its module path from its inlined call stack
    (``getModuleHierarchy()``, ``layer1(Sequential).0(Block)`` -> ``layer1.0``).

    Reading the graph's printout (``str(graph)``) instead would save a few more calls per node but needs a
    parser for text that prints module and value names unescaped; the accessors are exact by construction.
    """
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _Extractor(root_type, number_unnamed, parse_source or parse_stack, hierarchy_scopes).build(
            ts_graph, method, code
        )
    finally:
        if gc_was_enabled:
            gc.enable()


#: with PYTORCH_JIT_TYPE_VERBOSITY below Full (3) a tensor type's printout leaves out requires_grad and device:
#: then it does not name the fields we keep, and every tensor type is read through its accessors
_TYPE_PRINTOUT_COMPLETE = os.environ.get("PYTORCH_JIT_TYPE_VERBOSITY", "3").strip() in ("3", "4")

_TensorFields = tuple[tuple[int | None, ...] | None, str | None, str | None, bool | None]


def _tensor_fields(ty: Any) -> _TensorFields:
    """(shape, dtype, device, requires_grad) of a ``TensorType``, through its accessors."""
    sizes = ty.varyingSizes()
    device = ty.device()
    return (
        None if sizes is None else tuple(sizes),
        ty.scalarType(),
        None if device is None else str(device),
        ty.requires_grad(),
    )


# A graph's (or block's) inputs are the outputs of its param node, its outputs the inputs of its return node. Read
# through the indexed accessors: pybind's ``inputs()`` / ``outputs()`` iterators cost ~7 µs each to create.
def _outputs_of(node: torch._C.Node) -> list[torch._C.Value]:
    return [node.outputsAt(i) for i in range(node.outputsSize())]


def _inputs_of(node: torch._C.Node) -> list[torch._C.Value]:
    return [node.inputsAt(i) for i in range(node.inputsSize())]


class _Extractor:
    """One extraction (see :func:`extract_graph`): the tables a graph is built into, filled node by node. The per-node
    work reads its tables through locals (an attribute lookup per use would cost more than the lookups do)."""

    def __init__(
        self,
        root_type: str,
        number_unnamed: bool,
        parse_source: Callable[[str, dict[str, Frame | None]], SourceLoc | None],
        hierarchy_scopes: bool,
    ) -> None:
        self.number_unnamed = number_unnamed
        self.parse_source = parse_source
        self.hierarchy_scopes = hierarchy_scopes
        self.values: list[Value] = []
        # pybind wrapper of a torch._C.Value -> value id; the dict keeps the wrappers alive, so pybind hands the
        # same objects back for the same values
        self.value_ids: dict[Any, int] = {}
        self.by_unique: dict[int, int] = {}  # filled only if a wrapper ever comes back as a new object
        self.nodes: list[Node | None] = []
        self.tensor_constants: dict[int, torch.Tensor] = {}
        self.stacks: dict[str, SourceLoc | None] = {}
        self.frames_seen: dict[str, Frame | None] = {}
        self.paths: dict[str, str] = {}  # scope name -> module path
        self.scopes: dict[str, str] = {"": root_type} if root_type else {}
        self.tensor_types: dict[str, _TensorFields] = {}  # tensor type printout -> its fields
        self.other_types: dict[str, str] = {}  # str(type) -> our type name
        # kind -> (constant, can have blocks, may be random, may have attributes: the tracer and the script
        # compiler give aten:: ops inputs only, never attributes)
        self.kind_facts: dict[str, tuple[bool, bool, bool, bool]] = {}
        self.last_stack = ""
        self.last_source: SourceLoc | None = None
        self.add_value = self._value_adder()

    def _value_adder(self) -> Callable[[torch._C.Value, int | None], int]:
        """``add_value(v, producer) -> value id``: a value made a :class:`Value` and numbered. A closure over the
        tables (it runs once per value: reading them as attributes cost a tenth of the extraction)."""
        values, value_ids, by_unique = self.values, self.value_ids, self.by_unique
        tensor_types, other_types, number_unnamed = self.tensor_types, self.other_types, self.number_unnamed
        tensor_type: Any = torch._C.TensorType  # Any: torch's stubs lack TensorType.str(), which it has

        def add_value(v: torch._C.Value, producer: int | None) -> int:
            vid = len(values)
            value_ids[v] = vid
            if by_unique:
                by_unique[v.unique()] = vid
            debug_name = v.debugName()
            if number_unnamed and debug_name.isdigit():  # unnamed: numbered in definition order, as canonicalize
                debug_name = str(vid)
            ty = v.type()
            if isinstance(ty, tensor_type):
                if _TYPE_PRINTOUT_COMPLETE:
                    key = ty.str()
                    fields = tensor_types.get(key)
                    if fields is None:
                        fields = tensor_types[key] = _tensor_fields(ty)
                else:
                    fields = _tensor_fields(ty)
                values.append(Value(vid, debug_name, "Tensor", *fields, producer))
            else:
                annotation = str(ty)
                name = other_types.get(annotation)
                if name is None:
                    name = other_types[annotation] = demangle(annotation)
                values.append(Value(vid, debug_name, name, None, None, None, None, producer))
            return vid

        return add_value

    def value_id(self, v: torch._C.Value) -> int:
        found = self.value_ids.get(v)
        if found is not None:
            return found
        # pybind made a new wrapper for a value seen before: find it by its unique number instead
        if not self.by_unique:
            self.by_unique.update((w.unique(), i) for w, i in self.value_ids.items())
        return self.by_unique[v.unique()]

    def scope_of(self, n: torch._C.Node, scope_name: str) -> str:
        scopes = self.scopes
        if scope_name.startswith(_HIERARCHY_KEY):  # a module hierarchy (hierarchy_scopes), not a tracer scope
            # a call of a function rather than a module's method reads UNKNOWN_INSTANCE(UNKNOWN_TYPE): its nodes
            # belong to the module that called it
            hierarchy = scope_name[len(_HIERARCHY_KEY) :].split(".UNKNOWN_INSTANCE(", 1)[0].lstrip(".")
            if hierarchy.startswith("UNKNOWN_INSTANCE("):
                hierarchy = ""
            levels = parse_hierarchy(hierarchy)
            for p, t in levels.items():
                scopes.setdefault(p, t)
            path = self.paths[scope_name] = next(reversed(levels), "")
            return path
        path = self.paths[scope_name] = scope_path(scope_name)
        if scope_name:
            for p, t in parse_hierarchy(n.getModuleHierarchy()).items():
                scopes.setdefault(p, t)
        return path

    def facts_of(self, kind: str) -> tuple[bool, bool, bool, bool]:
        facts = self.kind_facts.get(kind)
        if facts is None:
            facts = self.kind_facts[kind] = (
                kind == "prim::Constant",
                kind in BLOCK_KINDS,
                may_be_nondeterministic(kind),
                not kind.startswith("aten::"),
            )
        return facts

    def inputs_of(self, n: torch._C.Node) -> tuple[int, ...]:
        value_ids = self.value_ids
        n_in = n.inputsSize()
        if n_in == 1:
            try:
                return (value_ids[n.inputsAt(0)],)
            except KeyError:
                return (self.value_id(n.inputsAt(0)),)
        if n_in:
            try:
                return tuple(map(value_ids.__getitem__, map(n.inputsAt, range(n_in))))
            except KeyError:
                return tuple(self.value_id(n.inputsAt(i)) for i in range(n_in))
        return ()

    def path_of(self, n: torch._C.Node) -> str:
        scope_name = n.scopeName()
        if self.hierarchy_scopes and not scope_name:
            scope_name = _HIERARCHY_KEY + n.getModuleHierarchy()
        path = self.paths.get(scope_name)
        return path if path is not None else self.scope_of(n, scope_name)

    def source_of(self, raw_stack: str) -> SourceLoc | None:
        """The source of a node whose stack text differs from the node before's (a run of nodes from one line
        shares its stack: :meth:`walk` reuses it with no hashing)."""
        self.last_stack = raw_stack
        found = self.stacks.get(raw_stack, _MISSING)
        if found is _MISSING:
            found = self.stacks[raw_stack] = self.parse_source(raw_stack, self.frames_seen)
        self.last_source = found
        return found

    def attributes_of(self, n: torch._C.Node, nid: int, constant: bool, may_have: bool, out0: Any) -> dict[str, Any]:
        """A node's attributes: a constant's value (``out0``: its one output, or None), or what else it holds."""
        if constant:
            if n.hasAttribute("value") and n.kindOf("value") == "t":
                tensor = n.t("value")
                self.tensor_constants[nid] = tensor
                return {"value": {"tensor": tensor_summary(tensor)}}
            if out0 is not None:
                return {"value": encode_ivalue(out0.toIValue())}
            return {}
        return node_attributes(n) if may_have and n.hasAttributes() else {}

    def blocks_of(self, n: torch._C.Node, nid: int) -> tuple[Block, ...]:
        built = []
        for b in n.blocks():
            b_ins = tuple(self.add_value(v, None) for v in _outputs_of(b.paramNode()))
            b_nodes = tuple(self.walk(b.nodes(), nid))
            b_outs = tuple(self.value_id(v) for v in _inputs_of(b.returnNode()))
            built.append(Block(inputs=b_ins, outputs=b_outs, nodes=b_nodes))
        return tuple(built)

    def walk(self, block_nodes: Any, parent: int | None) -> list[int]:
        # the common case of each step is written out here, its rare case left to a method: a method call per
        # step and node cost about a tenth of the extraction (tables and bound methods read into locals once)
        nodes, add_value, value_ids, kind_facts = self.nodes, self.add_value, self.value_ids, self.kind_facts
        paths, hierarchy_scopes = self.paths, self.hierarchy_scopes
        ids: list[int] = []
        for n in block_nodes:
            nid = len(nodes)
            ids.append(nid)
            kind = n.kind()
            facts = kind_facts.get(kind) or self.facts_of(kind)
            constant, has_blocks, may_be_random, may_have_attributes = facts
            n_in = n.inputsSize()
            ins: tuple[int, ...] = ()
            try:  # values are found by their wrapper, which pybind hands back while the table keeps it alive
                if n_in == 1:
                    ins = (value_ids[n.inputsAt(0)],)
                elif n_in:
                    ins = tuple(map(value_ids.__getitem__, map(n.inputsAt, range(n_in))))
            except KeyError:
                ins = self.inputs_of(n)
            if has_blocks:
                nodes.append(None)  # reserve the id before the nodes of its blocks
            n_out = n.outputsSize()
            out0 = n.outputsAt(0) if n_out == 1 else None
            if out0 is not None:
                outs: tuple[int, ...] = (add_value(out0, nid),)
            else:
                outs = tuple(add_value(n.outputsAt(i), nid) for i in range(n_out))
            path = None if hierarchy_scopes else paths.get(n.scopeName())
            if path is None:
                path = self.path_of(n)
            raw_stack = n.sourceRange()
            source = self.last_source if raw_stack == self.last_stack else self.source_of(raw_stack)
            attrs = (
                self.attributes_of(n, nid, constant, may_have_attributes, out0)
                if constant or may_have_attributes
                else {}
            )
            blocks = self.blocks_of(n, nid) if has_blocks else ()
            nondeterministic = may_be_random and n.isNondeterministic()
            # a TorchScript kind names no overload: the views call a node by its kind
            node = Node(
                nid, kind, ins, outs, path, source, attrs, blocks, parent, nondeterministic, role_of(kind), kind
            )
            if has_blocks:
                nodes[nid] = node
            else:
                nodes.append(node)
        return ids

    def build(self, ts_graph: torch._C.Graph, method: str, code: str | Callable[[], str]) -> Extraction:
        inputs = tuple(self.add_value(v, None) for v in _outputs_of(ts_graph.param_node()))
        self.walk(ts_graph.nodes(), None)
        outputs = tuple(self.value_id(v) for v in _inputs_of(ts_graph.return_node()))
        graph = Graph(
            method=method,
            nodes=cast(list[Node], self.nodes),  # every reserved id was filled
            values=self.values,
            inputs=inputs,
            outputs=outputs,
            scope_types=self.scopes,
            code=code,
        )
        return Extraction(graph=graph, tensor_constants=self.tensor_constants)
