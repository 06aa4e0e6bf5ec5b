"""An FX graph (``torch.fx.GraphModule``: what ``torch.export`` and ``torch.compile`` capture) -> a :class:`Graph`.

The mapping, decision by decision (a back end names the kinds of the nodes the mapping makes itself with its
``prefix``: ``export::constant``):

- **Inputs** (the placeholders the back end does not lift; for an export, ``graph_signature`` kind ``USER_INPUT``
  and effect ``TOKEN`` s, which the caller passes too) become :attr:`Graph.inputs`, named as torch names their
  placeholders: after the user's argument names (``x``, ``input_ids``; ``x_0`` for an item of a nested argument).
- **Lifted placeholders** (parameters, buffers, constant tensors and script objects: the back end's ``lifted`` map)
  become one node each, role ``getattr``, kind ``<prefix>::parameter`` / ``<prefix>::buffer`` / ..., attribute
  ``name`` = the qualified name (``encoder.layer.0.attention.self.query.weight``), no inputs and one output value
  named like the placeholder (``p_encoder_layer_0_..._weight``, the name the graph code uses). The views fold them
  into their consumers showing the qualified name, as they do for a trace's ``prim::GetAttr`` chains. A trace reads
  an attribute where the module uses it, so such a node takes the scope and source of its first user (root scope
  and no source when nothing uses it: export lifts every parameter, used or not).
- **call_function** nodes:

  - an ``OpOverload`` is role ``op`` and kind ``<schema name>.<overload>`` (``aten::linear.default``,
    ``aten::add.Tensor``), titled by its schema name alone when it is the default overload (``aten::linear``); its
    inputs are its schema's arguments in schema order, keyword arguments included, up to the last one the program
    passes (torch leaves out arguments equal to their defaults; one left out before a passed one is filled in with
    its default), so they are always the first N of the schema's: the names follow;
  - ``operator.getitem`` with an int index is role ``index`` (kind ``operator::getitem``, attribute ``index``): a
    multi-result op (``aten::max.dim``, ``cond``) has one output, a tuple (``(Tensor, Tensor)``) or list
    (``Tensor[]``) value, and ``getitem`` nodes pick its items, like TorchScript's ``prim::TupleIndex``;
  - a ``HigherOrderOperator`` (``torch.cond``, ``while_loop``, ...) is role ``op``, kind ``higher_order::<name>``; each
    subgraph argument becomes a :class:`Block` (its placeholders are the block inputs, its output's values the block
    outputs, its nodes listed in pre-order right after the parent node, with ``parent`` set) and the other
    arguments are its inputs, tuples and lists of values flattened (``cond(pred, operands...)``);
  - any other Python callable (``operator.mul`` on sizes, ``torch.sym_max``) is role ``op`` with kind
    ``<module>::<name>`` (``operator::mul``) and its positional, then keyword arguments as inputs.

- **Literal arguments** (``None``, bools, ints, floats, strings, dtypes, devices, layouts, memory formats and lists
  or tuples of them) become role ``constant`` nodes, kind ``<prefix>::constant``, attribute ``value`` encoded as the
  TorchScript back end encodes constants, emitted right before their consumer; the output value is named by the
  schema's argument name (``dim``, then ``dim.1``, ... as TorchScript numbers repeated names), so the graph view
  shows ``dim=1``. Arguments of Python callables have no names: their constants are named by their value id,
  which the views show as a bare value. A list holding values (``view(x, [s0, 2, 4])``) is a role ``list`` node
  (kind ``<prefix>::list``; ``tuple`` for tuples) over one value or constant per item.
- **Values** come from ``node.meta["val"]``: a tensor is type ``Tensor`` with dtype as TorchScript spells it
  (``Float``), shape (ints; ``str(SymInt)`` like ``s27`` or ``2*s27`` for a symbolic size), device and
  requires_grad; a ``SymInt`` / ``SymFloat`` / ``SymBool`` is ``int`` / ``float`` / ``bool``; literals are typed by
  the schema's spelling of their kind (``ScalarType``, ``Device``, ``Layout``, ``MemoryFormat``, ``NoneType``), so
  :func:`.fx_arguments.argument_names` can tell arguments apart by type. A node whose result is ``None`` and unused
  (``_assert_scalar``) has no output.
- **Graph outputs** are the values of the program's output node, in its order: the user outputs, after any buffer
  or input mutations the program returns (the training IR keeps in-place ops such as BatchNorm's updates as
  ``aten::add_`` nodes instead, so usually there are none).
- **Scope**: the innermost entry of ``node.meta["nn_module_stack"]`` (``{key: (path, qualified type)}``); paths are
  turned into the dotted names of ``dict(model.named_modules())`` (non-strict export writes them that way already;
  strict mode's ``L['self'].layer[0]._modules['a b']`` is rewritten), types into class names (``BertLayer``) for
  :class:`Graph`'s module tree. Nodes without one (size reads, asserts) are in the root scope; nodes of a
  subgraph, which torch gives an empty stack, are in their parent's scope.
- **Source**: ``node.meta["stack_trace"]`` (a traceback, outermost first) becomes frames innermost first; torch's
  files and FX's generated ``<eval_with_key>`` code are ``internal``; the user frame is the innermost other one
  (:func:`..source.user_frame_index`). A stack with no user frame is kept as the TorchScript back end keeps it (the
  session later attributes such nodes to the caller), except inside a subgraph, where the parent's source (the
  user's ``torch.cond`` line) is used.
- **nondeterministic**: the overload carries ``torch.Tag.nondeterministic_seeded`` (and, as torch says of traced
  nodes, not with a literal ``train=False``).
- **code**: the graph module's ``code``, the Python the graph runs (a stored string; read once).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx

from .fx_arguments import given_arguments, train_arg
from .fx_location import NO_MODULE_KEY, module_path, read_stack_trace, type_name
from .fx_values import LITERAL_TYPES, MISSING, Fields, is_literal, list_type, literal_type, value_fields
from .graph import Block, Frame, Graph, Node, SourceLoc, Value
from .values import encode_ivalue  # one JSON spelling of torch values for every back end


def _target_kind(target: Any) -> str:
    """``operator::mul``, ``torch::sym_max``: the kind of a call to a plain Python callable."""
    module = (getattr(target, "__module__", None) or "python").lstrip("_").split(".")[0]
    name = getattr(target, "__name__", None) or type(target).__name__
    return f"{module}::{name}"


@dataclass
class BuiltGraph:
    graph: Graph
    #: node id -> the schema argument name of each input, for OpOverload nodes (what
    #: :func:`.fx_arguments.argument_names` must find again from the graph alone; kept for the tests)
    input_names: dict[int, list[str]] = field(default_factory=dict)


class FxGraphBuilder:
    """One FX graph module -> :class:`Graph`. ``prefix`` names the back end in the kinds of the nodes it makes
    itself (``export::constant``); ``lifted`` names the placeholders that stand for a parameter, buffer or constant
    (placeholder name -> (kind, qualified name): ``("export::parameter", "fc.weight")``), which become getattr
    nodes where their first user is."""

    def __init__(
        self, graph_module: torch.fx.GraphModule, *, prefix: str, lifted: dict[str, tuple[str, str]] | None = None
    ) -> None:
        self.graph_module = graph_module
        self.prefix = prefix
        self.lifted_placeholders = lifted or {}
        self.nodes: list[Node | None] = []
        self.values: list[Value] = []
        self.value_of: dict[torch.fx.Node, int] = {}
        self.names: set[str] = set()
        #: the top-level graph's node names: the graph code uses them, so their values keep them exactly and
        #: constants and subgraph values that would take one are numbered instead
        self.reserved = {n.name for n in graph_module.graph.nodes}
        self.scope_types: dict[str, str] = {}
        self.stacks: dict[str, SourceLoc | None] = {}
        self.frames: dict[tuple[str, int, str], Frame] = {}
        self.paths: dict[str, str] = {}
        self.input_names: dict[int, list[str]] = {}
        #: the block being filled: its node ids, or the top level's
        self.current: list[int] = []

    # -- names, values, nodes ------------------------------------------------------------------------------------
    def unique(self, name: str, own: bool = False) -> str:
        """``name``, or ``name.1``, ``name.2``... when taken (TorchScript's numbering of repeated debug names);
        ``own``: the name of a top-level node, which it has reserved."""
        if name not in self.names and (own or name not in self.reserved):
            self.names.add(name)
            return name
        i = 1
        while f"{name}.{i}" in self.names:
            i += 1
        self.names.add(f"{name}.{i}")
        return f"{name}.{i}"

    def add_value(self, name: str, fields: Fields, producer: int | None, own: bool = False) -> int:
        vid = len(self.values)
        typ, shape, dtype, device, requires_grad = fields
        self.values.append(Value(vid, self.unique(name, own), typ, shape, dtype, device, requires_grad, producer))
        return vid

    def emit(
        self,
        kind: str,
        role: str,
        inputs: tuple[int, ...],
        out: tuple[str, Fields] | None,
        scope: str,
        source: SourceLoc | None,
        parent: int | None,
        attributes: dict[str, Any] | None = None,
        nondeterministic: bool = False,
        title: str = "",
    ) -> Node:
        nid = len(self.nodes)
        # top-level nodes of the FX graph keep their names; the constants and lists made for arguments do not
        own = parent is None and role not in ("constant", "list", "tuple")
        outputs = () if out is None else (self.add_value(out[0], out[1], nid, own),)
        title = title or kind
        node = Node(
            nid, kind, inputs, outputs, scope, source, attributes or {}, (), parent, nondeterministic, role, title
        )
        self.nodes.append(node)
        self.current.append(nid)
        return node

    # -- scope and source ----------------------------------------------------------------------------------------
    def scope_of(self, fx_node: torch.fx.Node, fallback: str) -> str:
        stack = fx_node.meta.get("nn_module_stack")
        if not stack:
            return fallback
        innermost: str | None = None
        for key, entry in stack.items():
            if key == NO_MODULE_KEY or not isinstance(entry, tuple) or len(entry) != 2:
                continue
            raw, qualified = entry
            path = self.paths.get(raw)
            if path is None:
                path = self.paths[raw] = module_path(str(raw))
            self.scope_types.setdefault(path, type_name(qualified))
            innermost = path
        return fallback if innermost is None else innermost

    def source_of(self, fx_node: torch.fx.Node, fallback: SourceLoc | None, in_block: bool) -> SourceLoc | None:
        text = fx_node.meta.get("stack_trace")
        if not text:
            return fallback
        found = self.stacks.get(text, MISSING)
        if found is MISSING:
            found = self.stacks[text] = self.parse_stack(text)
        if in_block and (found is None or found.user_frame.internal):
            return fallback  # a subgraph's node: the parent's line is the user's
        return found

    def parse_stack(self, text: str) -> SourceLoc | None:
        """A ``stack_trace`` as a SourceLoc, innermost frame first (:func:`~.fx_location.read_stack_trace`)."""
        return read_stack_trace(text, self.frames)

    # -- arguments -----------------------------------------------------------------------------------------------
    def argument(self, arg: Any, name: str | None, where: tuple[str, SourceLoc | None, int | None]) -> int:
        """The value id of one argument: a node's value, or a constant / list node emitted for it now."""
        scope, source, parent = where
        if isinstance(arg, torch.fx.Node):
            return self.value_of[arg]
        if is_literal(arg) or not isinstance(arg, (list, tuple)):
            known = type(arg) in LITERAL_TYPES or isinstance(arg, (list, tuple))
            value = encode_ivalue(arg) if known else {"repr": repr(arg)}
            vname = name if name is not None else str(len(self.values))
            node = self.emit(
                f"{self.prefix}::constant",
                "constant",
                (),
                (vname, (literal_type(arg), None, None, None, None)),
                scope,
                source,
                parent,
                {"value": value},
            )
            return node.outputs[0]
        items = tuple(self.argument(a, name, where) for a in arg)
        item_types = [self.values[v].type for v in items]
        is_tuple = isinstance(arg, tuple)
        typ = "(" + ", ".join(item_types) + ")" if is_tuple else list_type(item_types)
        role = "tuple" if is_tuple else "list"
        vname = name if name is not None else str(len(self.values))
        node = self.emit(
            f"{self.prefix}::{role}", role, items, (vname, (typ, None, None, None, None)), scope, source, parent
        )
        return node.outputs[0]

    # -- the walk ------------------------------------------------------------------------------------------------
    def walk(
        self,
        fx_graph: torch.fx.Graph,
        owner: torch.nn.Module,
        parent: Node | None,
        block_inputs: Sequence[int] = (),
    ) -> tuple[tuple[int, ...], tuple[int, ...], list[int]]:
        """Map one FX graph: the top level (``parent`` None) or a subgraph of ``parent``. Returns (input value ids,
        output value ids, node ids in pre-order). ``block_inputs`` are the values a subgraph's placeholders stand
        for, whose metadata they take when torch recorded none."""
        saved, self.current = self.current, []
        inputs: list[int] = []
        outputs: tuple[int, ...] = ()
        in_block = parent is not None
        base_scope = parent.scope if parent is not None else ""
        base_source = parent.source if parent is not None else None
        pid = parent.id if parent is not None else None
        placeholders = [n for n in fx_graph.nodes if n.op == "placeholder"]
        offset = len(block_inputs) - len(placeholders)
        for fx_node in fx_graph.nodes:
            op = fx_node.op
            if op == "placeholder":
                lifted = None if in_block else self.lifted_placeholders.get(fx_node.name)
                if lifted is not None:
                    self.lifted(fx_node, *lifted)
                    continue
                val = fx_node.meta.get("val", MISSING)
                if val is MISSING and in_block:
                    i = placeholders.index(fx_node) + offset
                    if 0 <= i < len(block_inputs) and offset >= 0:
                        v = self.values[block_inputs[i]]
                        fields: Fields = (v.type, v.shape, v.dtype, v.device, v.requires_grad)
                    else:
                        fields = value_fields(MISSING)
                else:
                    fields = value_fields(val)
                vid = self.add_value(fx_node.name, fields, None, own=not in_block)
                self.value_of[fx_node] = vid
                inputs.append(vid)
            elif op == "get_attr":
                attr = _fetch(owner, str(fx_node.target))
                if isinstance(attr, torch.nn.Module):
                    continue  # a subgraph: it becomes a Block of the node that calls it
                scope = self.scope_of(fx_node, base_scope)
                source = self.source_of(fx_node, base_source, in_block)
                fields = value_fields(fx_node.meta.get("val", attr if isinstance(attr, torch.Tensor) else MISSING))
                node = self.emit(
                    f"{self.prefix}::get_attr",
                    "getattr",
                    (),
                    (fx_node.name, fields),
                    scope,
                    source,
                    pid,
                    {"name": str(fx_node.target)},
                )
                self.value_of[fx_node] = node.outputs[0]
            elif op == "output":
                scope = self.scope_of(fx_node, base_scope)
                results = fx_node.args[0] if fx_node.args else ()
                if not isinstance(results, (list, tuple)):
                    results = (results,)
                where = (scope, base_source, pid)
                outputs = tuple(self.argument(r, None, where) for r in results)
            else:
                self.call(fx_node, owner, parent, in_block)
        ids, self.current = self.current, saved
        return tuple(inputs), outputs, ids

    def lifted(self, fx_node: torch.fx.Node, kind: str, name: str) -> None:
        """A parameter, buffer or constant: a getattr node placed where its first user is."""
        users = list(fx_node.users)
        first = users[0] if users else None
        scope = "" if first is None else self.scope_of(first, "")
        source = None if first is None else self.source_of(first, None, False)
        node = self.emit(
            kind,
            "getattr",
            (),
            (fx_node.name, value_fields(fx_node.meta.get("val", MISSING))),
            scope,
            source,
            None,
            {"name": name},
        )
        self.value_of[fx_node] = node.outputs[0]

    def call(self, fx_node: torch.fx.Node, owner: torch.nn.Module, parent: Node | None, in_block: bool) -> None:
        target = fx_node.target
        base_scope = parent.scope if parent is not None else ""
        base_source = parent.source if parent is not None else None
        pid = parent.id if parent is not None else None
        scope = self.scope_of(fx_node, base_scope)
        source = self.source_of(fx_node, base_source, in_block)
        where = (scope, source, pid)
        val = fx_node.meta.get("val", MISSING)
        out: tuple[str, Fields] | None = (fx_node.name, value_fields(val))
        if val is None and not fx_node.users:
            out = None
        args, kwargs = fx_node.args, fx_node.kwargs

        # an item of a tuple or list result; other indexing is an op
        if target is operator.getitem and isinstance(args[0], torch.fx.Node) and type(args[1]) is int:
            container = (self.value_of[args[0]],)
            node = self.emit("operator::getitem", "index", container, out, scope, source, pid, {"index": args[1]})
            self.value_of[fx_node] = node.outputs[0]
            return

        if isinstance(target, torch._ops.OpOverload):
            schema = target._schema
            names: list[str] = []
            ins: list[int] = []
            given = given_arguments(schema, args, kwargs)
            for a, arg in zip(schema.arguments, given, strict=False):
                names.append(a.name)
                ins.append(self.argument(arg, a.name, where))
            random = torch.Tag.nondeterministic_seeded in target.tags and train_arg(schema, args, kwargs)
            overload = target._overloadname
            node = self.emit(
                f"{schema.name}.{overload}",
                "op",
                tuple(ins),
                out,
                scope,
                source,
                pid,
                nondeterministic=bool(random),
                # nearly every op is its default overload: the views call it by its name alone
                title=schema.name if overload == "default" else "",
            )
            self.input_names[node.id] = names
        elif isinstance(target, torch._ops.HigherOrderOperator):
            node = self.higher_order(fx_node, target, owner, out, where)
        else:
            flat = list(args) + list(kwargs.values())
            arg_names: list[str | None] = [None] * len(args) + list(kwargs)
            ins = [self.argument(a, n, where) for a, n in zip(flat, arg_names, strict=True)]
            kind = _target_kind(target) if op_is_call(fx_node) else f"{fx_node.op}::{target}"
            node = self.emit(kind, "op", tuple(ins), out, scope, source, pid)
        if node.outputs:
            self.value_of[fx_node] = node.outputs[0]

    def higher_order(
        self,
        fx_node: torch.fx.Node,
        target: Any,
        owner: torch.nn.Module,
        out: tuple[str, Fields] | None,
        where: tuple[str, SourceLoc | None, int | None],
    ) -> Node:
        """``cond(pred, true_graph, false_graph, operands)``: subgraphs become blocks, the rest inputs (flat)."""
        scope, source, pid = where
        subgraphs: list[torch.fx.GraphModule] = []
        ins: list[int] = []

        def gather(a: Any) -> None:
            if isinstance(a, torch.fx.Node) and a.op == "get_attr":
                sub = _fetch(owner, str(a.target))
                if isinstance(sub, torch.fx.GraphModule):
                    subgraphs.append(sub)
                    return
            if isinstance(a, (list, tuple)) and not is_literal(a):
                for item in a:
                    gather(item)
                return
            ins.append(self.argument(a, None, where))

        for a in (*fx_node.args, *fx_node.kwargs.values()):
            gather(a)
        name = target.name() if callable(getattr(target, "name", None)) else type(target).__name__
        node = self.emit(f"higher_order::{name}", "op", tuple(ins), out, scope, source, pid)
        blocks = []
        for sub in subgraphs:
            b_ins, b_outs, b_nodes = self.walk(sub.graph, sub, node, ins)
            blocks.append(Block(inputs=b_ins, outputs=b_outs, nodes=tuple(b_nodes)))
        node.blocks = tuple(blocks)
        return node

    def build(self, method: str) -> BuiltGraph:
        gm = self.graph_module
        top_inputs, outputs, _ = self.walk(gm.graph, gm, None)
        graph = Graph(
            method=method,
            nodes=[n for n in self.nodes if n is not None],
            values=self.values,
            inputs=top_inputs,
            outputs=outputs,
            scope_types=self.scope_types,
            code=gm.code,
        )
        return BuiltGraph(graph, self.input_names)


def op_is_call(fx_node: torch.fx.Node) -> bool:
    return fx_node.op == "call_function"


def _fetch(owner: torch.nn.Module, target: str) -> Any:
    obj: Any = owner
    for part in target.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


__all__ = ["BuiltGraph", "FxGraphBuilder"]
