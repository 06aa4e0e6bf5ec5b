"""``torch._C.Graph`` -> :class:`~jupyter_tracejit.core.graph.Graph`.

The walk uses the cheap pybind accessors (``inputsSize``/``inputsAt`` rather than the ``inputs()``
iterator, ``blocks()`` only on nodes that can have blocks) and parses each distinct source stack
and module hierarchy once: a 12k-node graph repeats a handful of them.
"""

from __future__ import annotations

import hashlib
import linecache
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from .graph import Block, Frame, Graph, Node, SourceLoc, Value
from .jsonio import float_to_json

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_SITE_TORCH = re.compile(r"[/\\]site-packages[/\\]torch[/\\]")
_FRAME_RE = re.compile(r"^(.*)\((\d+)\): (.*)$")
_HIERARCHY_RE = re.compile(r"([^.()]+)\(([^()]*)\)")
_MANGLE_RE = re.compile(r"___torch_mangle_\d+\.")
_BLOCK_KINDS = frozenset({"prim::If", "prim::Loop", "prim::With", "prim::Closure"})
TENSOR_PREVIEW = 8


def is_torch_file(path: str) -> bool:
    """True for files inside the installed torch package (library frames, not the user's)."""
    return path.startswith(_TORCH_DIR) or _SITE_TORCH.search(path) is not None


def is_trace_entry_file(path: str) -> bool:
    """Frames from ``torch/jit/_trace.py`` outward are the caller of trace, not traced code."""
    return path.replace("\\", "/").endswith("torch/jit/_trace.py")


def demangle(text: str) -> str:
    return _MANGLE_RE.sub("", text)


def source_line(file: str, line: int) -> str:
    return linecache.getline(file, line).strip()


def user_frame_index(stack: tuple[Frame, ...]) -> int:
    """The innermost frame outside torch; the outermost frame when every frame is torch's own."""
    for i, fr in enumerate(stack):
        if not fr.internal:
            return i
    return len(stack) - 1


def parse_stack(text: str) -> SourceLoc | None:
    """Parse ``Node.sourceRange()`` (``file(line): func`` per line, innermost first)."""
    frames: list[Frame] = []
    for raw in text.splitlines():
        m = _FRAME_RE.match(raw)
        if not m:
            continue
        file, line = m.group(1), int(m.group(2))
        if is_trace_entry_file(file):
            break
        frames.append(
            Frame(file=file, line=line, func=m.group(3), code=source_line(file, line), internal=is_torch_file(file))
        )
    if not frames:
        return None
    stack = tuple(frames)
    return SourceLoc(stack=stack, user_index=user_frame_index(stack))


def scope_path(scope_name: str) -> str:
    """``__module.layer1/__module.layer1.0`` -> ``layer1.0``; ``__module`` -> ``""``."""
    if not scope_name:
        return ""
    last = scope_name.rsplit("/", 1)[-1]
    if last == "__module":
        return ""
    if last.startswith("__module."):
        return last[len("__module.") :]
    return last


def parse_hierarchy(text: str) -> dict[str, str]:
    """``layer1(Sequential).0(Block)`` -> ``{"layer1": "Sequential", "layer1.0": "Block"}``."""
    out: dict[str, str] = {}
    path = ""
    for m in _HIERARCHY_RE.finditer(text):
        path = m.group(1) if not path else f"{path}.{m.group(1)}"
        out[path] = demangle(m.group(2))
    return out


def tensor_summary(t: torch.Tensor) -> dict[str, Any]:
    """A JSON-ready description of a tensor constant: dtype, shape, a preview and a content digest."""
    summary: dict[str, Any] = {
        "dtype": str(t.dtype).replace("torch.", ""),
        "shape": list(t.shape),
        "device": str(t.device),
    }
    try:
        flat = t.detach().to("cpu").contiguous()
        summary["preview"] = [encode_scalar(x) for x in flat.reshape(-1)[:TENSOR_PREVIEW].tolist()]
        summary["digest"] = hashlib.sha1(
            flat.numpy().tobytes() if flat.dtype != torch.bfloat16 else flat.float().numpy().tobytes()
        ).hexdigest()[:16]
    except (RuntimeError, TypeError, ValueError):  # quantized, sparse, meta: no host view
        summary["preview"] = []
        summary["digest"] = ""
    return summary


def encode_scalar(x: Any) -> Any:
    if isinstance(x, complex):
        return {"repr": repr(x)}
    return float_to_json(x)


def encode_ivalue(value: Any) -> Any:
    """Constant and attribute values as JSON-ready data, tagged where JSON has no type for them."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, (float, complex)):
        return encode_scalar(value)
    if isinstance(value, torch.Tensor):
        return {"tensor": tensor_summary(value)}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    if isinstance(value, torch.dtype):
        return {"repr": str(value)}
    if isinstance(value, (list, tuple)):
        return [encode_ivalue(v) for v in value]
    return {"repr": demangle(repr(value))}


@dataclass
class Extraction:
    """What :func:`extract_graph` returns: the graph, plus the live tensors of tensor constants."""

    graph: Graph
    #: node id -> tensor value of ``prim::Constant`` nodes holding a tensor (for the check's comparison)
    tensor_constants: dict[int, torch.Tensor] = field(default_factory=dict)


def _node_attributes(n: torch._C.Node) -> dict[str, Any]:
    attrs: dict[str, Any] = {}
    for name in n.attributeNames():
        kind = n.kindOf(name)
        try:
            raw = getattr(n, kind)(name)
        except (RuntimeError, AttributeError, TypeError):
            attrs[name] = {"repr": f"<{kind}>"}
            continue
        if kind == "g":
            attrs[name] = {"repr": "<graph>"}
        elif kind == "ty":
            attrs[name] = {"repr": demangle(str(raw))}
        else:
            attrs[name] = encode_ivalue(raw)
    return attrs


def extract_graph(
    ts_graph: torch._C.Graph,
    *,
    method: str = "forward",
    code: str = "",
    root_type: str = "",
) -> Extraction:
    """Turn an (inlined) TorchScript graph into a :class:`Graph`.

    ``root_type`` names the class of the traced module (the root scope); the types of
    submodules come from the nodes' module hierarchy.
    """
    values: list[Value] = []
    value_ids: dict[int, int] = {}
    nodes: list[Node | None] = []
    tensor_constants: dict[int, torch.Tensor] = {}
    stacks: dict[str, SourceLoc | None] = {}
    scopes: dict[str, str] = {}
    hierarchy_seen: set[str] = set()
    if root_type:
        scopes[""] = root_type

    def add_value(v: torch._C.Value, producer: int | None) -> int:
        vid = len(values)
        value_ids[v.unique()] = vid
        ty: Any = v.type()  # a TensorType in the branch below; torch's stubs only know JitType
        if ty.kind() == "TensorType":
            sizes = ty.varyingSizes()
            dtype = ty.scalarType()
            device = ty.device()
            rg = ty.requires_grad()
            values.append(
                Value(
                    id=vid,
                    name=v.debugName(),
                    type="Tensor",
                    shape=None if sizes is None else tuple(sizes),
                    dtype=dtype,
                    device=None if device is None else str(device),
                    requires_grad=rg,
                    producer=producer,
                )
            )
        else:
            values.append(Value(id=vid, name=v.debugName(), type=demangle(str(ty)), producer=producer))
        return vid

    def walk(block_nodes: Any, parent: int | None) -> list[int]:
        ids: list[int] = []
        for n in block_nodes:
            nid = len(nodes)
            ids.append(nid)
            kind = n.kind()
            ins = tuple(value_ids[n.inputsAt(i).unique()] for i in range(n.inputsSize()))
            outs = tuple(add_value(n.outputsAt(i), nid) for i in range(n.outputsSize()))
            scope_name = n.scopeName()
            path = scope_path(scope_name)
            if scope_name and scope_name not in hierarchy_seen:
                hierarchy_seen.add(scope_name)
                for p, t in parse_hierarchy(n.getModuleHierarchy()).items():
                    scopes.setdefault(p, t)
            raw_stack = n.sourceRange()
            if raw_stack in stacks:
                source = stacks[raw_stack]
            else:
                source = stacks[raw_stack] = parse_stack(raw_stack)
            attrs: dict[str, Any] = {}
            if kind == "prim::Constant":
                if n.hasAttribute("value") and n.kindOf("value") == "t":
                    tensor = n.t("value")
                    tensor_constants[nid] = tensor
                    attrs = {"value": {"tensor": tensor_summary(tensor)}}
                elif n.outputsSize() == 1:
                    attrs = {"value": encode_ivalue(n.outputsAt(0).toIValue())}
            elif n.hasAttributes():
                attrs = _node_attributes(n)
            nodes.append(None)  # reserve the id before the blocks' nodes
            blocks: tuple[Block, ...] = ()
            if kind in _BLOCK_KINDS:
                built = []
                for b in n.blocks():
                    b_ins = tuple(add_value(v, None) for v in b.inputs())
                    b_nodes = tuple(walk(b.nodes(), nid))
                    b_outs = tuple(value_ids[v.unique()] for v in b.outputs())
                    built.append(Block(inputs=b_ins, outputs=b_outs, nodes=b_nodes))
                blocks = tuple(built)
            nodes[nid] = Node(
                id=nid,
                kind=kind,
                inputs=ins,
                outputs=outs,
                scope=path,
                source=source,
                attributes=attrs,
                blocks=blocks,
                parent=parent,
                nondeterministic=n.isNondeterministic(),
            )
        return ids

    inputs = tuple(add_value(v, None) for v in ts_graph.inputs())
    walk(ts_graph.nodes(), None)
    outputs = tuple(value_ids[v.unique()] for v in ts_graph.outputs())
    graph = Graph(
        method=method,
        nodes=[n for n in nodes if n is not None],
        values=values,
        inputs=inputs,
        outputs=outputs,
        scope_types=scopes,
        code=code,
    )
    return Extraction(graph=graph, tensor_constants=tensor_constants)


def preorder(ts_graph: torch._C.Graph) -> Iterator[torch._C.Node]:
    """Nodes in the order :func:`extract_graph` numbers them: a node, then the nodes of its blocks."""

    def walk(nodes: Any) -> Iterator[torch._C.Node]:
        for n in nodes:
            yield n
            if n.kind() in _BLOCK_KINDS:
                for b in n.blocks():
                    yield from walk(b.nodes())

    return walk(ts_graph.nodes())


def canonical_inlined(ts_graph: torch._C.Graph) -> torch._C.Graph:
    """A canonicalized, inlined copy, as ``torch.jit._trace._check_trace`` compares them."""
    g = torch._C._jit_pass_canonicalize(ts_graph)
    torch._C._jit_pass_inline(g)
    return g


def canonical_text(canonical: torch._C.Graph) -> str:
    """torch's comparison string: shapes erased (on a copy), ``___torch_mangle_N.`` removed."""
    g = canonical.copy()
    torch._C._jit_pass_erase_shape_information(g)
    return demangle(str(g))
