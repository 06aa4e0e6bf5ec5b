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
  :func:`argument_names` can tell arguments apart by type. A node whose result is ``None`` and unused
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
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx

from .graph import Block, Frame, Graph, Node, SourceLoc, Value
from .graph_text import signature
from .source import is_torch_file, source_line, user_frame_index
from .values import encode_ivalue  # one JSON spelling of torch values for every back end

_FRAME_RE = re.compile(r'^\s*File "(?P<file>.*)", line (?P<line>\d+), in (?P<func>.*)$')
#: strict mode's (Dynamo's) spellings of a module path: ``L['self'].layers[0]._modules['a b']``
_DYNAMO_ITEM = re.compile(r"""(?:\._modules)?\[(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(-?\d+))\]""")
#: the marker torch puts in ``nn_module_stack`` of nodes it adds itself (``sym_size``): no module
_NO_MODULE_KEY = "_empty_nn_module_stack_from_metadata_hook"
#: the attribute strict mode wraps the model under (``torch.export._trace``'s wrapper module)
_STRICT_ROOT = "_export_root"
#: literal Python types -> the schema's spelling of their type
_LITERAL_TYPES: dict[type, str] = {
    bool: "bool",
    int: "int",
    float: "float",
    complex: "complex",
    str: "str",
    type(None): "NoneType",
    torch.dtype: "ScalarType",
    torch.device: "Device",
    torch.layout: "Layout",
    torch.memory_format: "MemoryFormat",
}
_MISSING: Any = object()
_SITE_PACKAGES = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))


def _is_literal(x: Any) -> bool:
    if type(x) in _LITERAL_TYPES:
        return True
    return isinstance(x, (list, tuple)) and all(_is_literal(i) for i in x)


def _literal_type(x: Any) -> str:
    found = _LITERAL_TYPES.get(type(x))
    if found is not None:
        return found
    if isinstance(x, tuple):
        return "(" + ", ".join(_literal_type(i) for i in x) + ")"
    if isinstance(x, list):
        return _list_type([_literal_type(i) for i in x])
    return type(x).__name__


def _list_type(items: Sequence[str]) -> str:
    """``int[]``, ``Tensor[]``; ``Tensor?[]`` for tensors and ``None`` s mixed (``index``'s indices)."""
    kinds = set(items)
    if len(kinds) == 1:
        return f"{items[0]}[]"
    if len(kinds) == 2 and "NoneType" in kinds:
        (other,) = kinds - {"NoneType"}
        return f"{other}?[]"
    if kinds <= {"int", "float"} and kinds:
        return "float[]"
    return "Any[]"


_DTYPE_NAMES: dict[torch.dtype, str] = {}


def dtype_name(dtype: torch.dtype) -> str:
    """TorchScript's name of a dtype (``Float``, ``Long``), asked of torch once per dtype."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        try:
            name = torch._C.TensorType.create_from_tensor(torch.empty(0, dtype=dtype)).scalarType()
        except (RuntimeError, TypeError):
            name = None
        name = _DTYPE_NAMES[dtype] = name or str(dtype).replace("torch.", "")
    return name


def _dim(d: Any) -> int | str | None:
    if isinstance(d, int):
        return d
    if isinstance(d, torch.SymInt):
        known = d.node.maybe_as_int()
        return int(known) if known is not None else str(d)
    return None


#: (type, shape, dtype, device, requires_grad)
_Fields = tuple[str, tuple[int | str | None, ...] | None, str | None, str | None, bool | None]


def value_fields(val: Any) -> _Fields:
    """A Value's fields from ``node.meta["val"]`` (``_MISSING`` when torch recorded none: type ``Any``)."""
    if isinstance(val, torch.Tensor):
        return (
            "Tensor",
            tuple(_dim(d) for d in val.shape),
            dtype_name(val.dtype),
            str(val.device),
            bool(val.requires_grad),
        )
    if isinstance(val, (torch.SymBool, bool)):
        return ("bool", None, None, None, None)
    if isinstance(val, (torch.SymInt, int)):
        return ("int", None, None, None, None)
    if isinstance(val, (torch.SymFloat, float)):
        return ("float", None, None, None, None)
    if val is _MISSING:
        return ("Any", None, None, None, None)
    if isinstance(val, tuple):
        return ("(" + ", ".join(value_fields(v)[0] for v in val) + ")", None, None, None, None)
    if isinstance(val, list):
        return (_list_type([value_fields(v)[0] for v in val]), None, None, None, None)
    return (_literal_type(val), None, None, None, None)


def module_path(path: str) -> str:
    """An ``nn_module_stack`` path as ``named_modules()`` names the module.

    Export writes ``layers.0`` already, except inside a subgraph of strict mode, where paths start at the wrapper
    strict mode puts around the model (``_export_root.fc``: the prefix is dropped). Dynamo's own spelling
    (``L['self'].layers[0]``, ``L['self']._modules['a b']``), which torch rewrites before it hands the program
    back, is read too in case a version does not.
    """
    if path.startswith("L["):
        path = re.sub(r"^L\[['\"]self['\"]\]", "", path)
        path = _DYNAMO_ITEM.sub(lambda m: "." + next(g for g in m.groups() if g is not None), path).lstrip(".")
    if path == _STRICT_ROOT:
        return ""
    if path.startswith(_STRICT_ROOT + "."):
        return path[len(_STRICT_ROOT) + 1 :]
    return path


def _type_name(qualified: Any) -> str:
    """``torch.nn.modules.linear.Linear`` (or the class itself) -> ``Linear``."""
    if isinstance(qualified, type):
        return qualified.__name__
    return str(qualified).rsplit(".", 1)[-1]


def _target_kind(target: Any) -> str:
    """``operator::mul``, ``torch::sym_max``: the kind of a call to a plain Python callable."""
    module = (getattr(target, "__module__", None) or "python").lstrip("_").split(".")[0]
    name = getattr(target, "__name__", None) or type(target).__name__
    return f"{module}::{name}"


@dataclass
class BuiltGraph:
    graph: Graph
    #: node id -> the schema argument name of each input, for OpOverload nodes (what :func:`argument_names` must
    #: find again from the graph alone; kept for the tests)
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

    def add_value(self, name: str, fields: _Fields, producer: int | None, own: bool = False) -> int:
        vid = len(self.values)
        typ, shape, dtype, device, requires_grad = fields
        self.values.append(Value(vid, self.unique(name, own), typ, shape, dtype, device, requires_grad, producer))
        return vid

    def emit(
        self,
        kind: str,
        role: str,
        inputs: tuple[int, ...],
        out: tuple[str, _Fields] | None,
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
            if key == _NO_MODULE_KEY or not isinstance(entry, tuple) or len(entry) != 2:
                continue
            raw, qualified = entry
            path = self.paths.get(raw)
            if path is None:
                path = self.paths[raw] = module_path(str(raw))
            self.scope_types.setdefault(path, _type_name(qualified))
            innermost = path
        return fallback if innermost is None else innermost

    def source_of(self, fx_node: torch.fx.Node, fallback: SourceLoc | None, in_block: bool) -> SourceLoc | None:
        text = fx_node.meta.get("stack_trace")
        if not text:
            return fallback
        found = self.stacks.get(text, _MISSING)
        if found is _MISSING:
            found = self.stacks[text] = self.parse_stack(text)
        if in_block and (found is None or found.user_frame.internal):
            return fallback  # a subgraph's node: the parent's line is the user's
        return found

    def parse_stack(self, text: str) -> SourceLoc | None:
        """A traceback's frames (outermost first; each ``File "f", line n, in func`` and its code line) as a
        SourceLoc, innermost first."""
        frames: list[Frame] = []
        lines = text.splitlines()
        for i, raw in enumerate(lines):
            m = _FRAME_RE.match(raw)
            if m is None:
                continue
            file, line, func = m.group("file"), int(m.group("line")), m.group("func")
            frame = self.frames.get((file, line, func))
            if frame is None:
                following = lines[i + 1].strip() if i + 1 < len(lines) and not _FRAME_RE.match(lines[i + 1]) else ""
                if not os.path.isabs(file) and not file.startswith("<"):
                    # torch writes its own frames relative to site-packages (``torch/fx/passes/...``)
                    candidate = os.path.join(_SITE_PACKAGES, file)
                    if os.path.exists(candidate):
                        file = candidate
                frame = self.frames[(m.group("file"), line, func)] = Frame(
                    file=file,
                    line=line,
                    func=func,
                    code=source_line(file, line) or following,
                    internal=is_torch_file(file) or file.startswith("<eval_with_key>"),
                )
            frames.append(frame)
        if not frames:
            return None
        stack = tuple(reversed(frames))
        return SourceLoc(stack=stack, user_index=user_frame_index(stack))

    # -- arguments -----------------------------------------------------------------------------------------------
    def argument(self, arg: Any, name: str | None, where: tuple[str, SourceLoc | None, int | None]) -> int:
        """The value id of one argument: a node's value, or a constant / list node emitted for it now."""
        scope, source, parent = where
        if isinstance(arg, torch.fx.Node):
            return self.value_of[arg]
        if _is_literal(arg) or not isinstance(arg, (list, tuple)):
            known = type(arg) in _LITERAL_TYPES or isinstance(arg, (list, tuple))
            value = encode_ivalue(arg) if known else {"repr": repr(arg)}
            vname = name if name is not None else str(len(self.values))
            node = self.emit(
                f"{self.prefix}::constant",
                "constant",
                (),
                (vname, (_literal_type(arg), None, None, None, None)),
                scope,
                source,
                parent,
                {"value": value},
            )
            return node.outputs[0]
        items = tuple(self.argument(a, name, where) for a in arg)
        item_types = [self.values[v].type for v in items]
        is_tuple = isinstance(arg, tuple)
        typ = "(" + ", ".join(item_types) + ")" if is_tuple else _list_type(item_types)
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
                val = fx_node.meta.get("val", _MISSING)
                if val is _MISSING and in_block:
                    i = placeholders.index(fx_node) + offset
                    if 0 <= i < len(block_inputs) and offset >= 0:
                        v = self.values[block_inputs[i]]
                        fields: _Fields = (v.type, v.shape, v.dtype, v.device, v.requires_grad)
                    else:
                        fields = value_fields(_MISSING)
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
                fields = value_fields(fx_node.meta.get("val", attr if isinstance(attr, torch.Tensor) else _MISSING))
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
            (fx_node.name, value_fields(fx_node.meta.get("val", _MISSING))),
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
        val = fx_node.meta.get("val", _MISSING)
        out: tuple[str, _Fields] | None = (fx_node.name, value_fields(val))
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
            given = _given_arguments(schema, args, kwargs)
            for a, arg in zip(schema.arguments, given, strict=False):
                names.append(a.name)
                ins.append(self.argument(arg, a.name, where))
            random = torch.Tag.nondeterministic_seeded in target.tags and _train_arg(schema, args, kwargs)
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
        out: tuple[str, _Fields] | None,
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
            if isinstance(a, (list, tuple)) and not _is_literal(a):
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


def _given_arguments(schema: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
    """The node's arguments in schema order, up to the last one the program passes: torch leaves out arguments
    equal to their defaults, and those before a passed one are filled in with their defaults, so a node's inputs are
    always the first N of its schema's arguments (``scaled_dot_product_attention(q, k, v, mask, scale=s)`` gets
    ``dropout_p=0.0`` and ``is_causal=False``), as a trace's are, and the names of its inputs follow from N alone."""
    given: list[Any] = []
    last = -1
    for i, a in enumerate(schema.arguments):
        if not a.kwarg_only and i < len(args):
            given.append(args[i])
            last = i
        elif a.name in kwargs:
            given.append(kwargs[a.name])
            last = i
        elif a.has_default_value():
            given.append(a.default_value)
        else:
            raise ValueError(f"{schema.name}: required argument {a.name!r} is missing")
    unknown = [k for k in kwargs if k not in {a.name for a in schema.arguments}]
    if unknown:
        raise ValueError(f"{schema.name} got keyword arguments its schema does not have: {unknown}")
    return given[: last + 1]


def _train_arg(schema: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> bool:
    """False only for a literal ``train=False`` (dropout in eval mode is deterministic, as torch says of traces)."""
    for i, a in enumerate(schema.arguments):
        if a.name == "train":
            given = args[i] if i < len(args) and not a.kwarg_only else kwargs.get("train")
            return given is not False
    return True


def _fetch(owner: torch.nn.Module, target: str) -> Any:
    obj: Any = owner
    for part in target.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


# -- argument names -----------------------------------------------------------------------------------------------
def _overload(kind: str) -> Any:
    namespace, sep, rest = kind.partition("::")
    if not sep or "." not in rest:
        return None
    name, overload = rest.rsplit(".", 1)
    try:
        return getattr(getattr(getattr(torch.ops, namespace), name), overload)
    except (AttributeError, RuntimeError):
        return None


def argument_names(graph: Graph) -> dict[str, list[str]]:
    """``signature -> argument names`` for every op of an export graph whose overload torch knows, keyed by
    :func:`..schemas.signature` (``aten::sum.dim_IntList(Tensor,int[],bool)``), read from the overload's schema.

    A node's inputs are the first N arguments of its overload's schema (see :func:`_given_arguments`), so the
    names are the first N names: the same for every node of one signature.
    """
    table: dict[str, list[str]] = {}
    seen: set[str] = set()
    for node in graph.nodes:
        if node.role != "op":
            continue
        key = signature(graph, node)
        if key in seen:
            continue
        seen.add(key)
        op = _overload(node.kind)
        if op is None:
            continue
        arguments = op._schema.arguments
        if len(node.inputs) <= len(arguments):
            table[key] = [a.name for a in arguments[: len(node.inputs)]]
    return table


__all__ = ["BuiltGraph", "FxGraphBuilder", "argument_names", "dtype_name", "module_path", "value_fields"]
