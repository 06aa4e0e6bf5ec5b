"""A :class:`~.graph.Graph` as text: TorchScript's IR syntax (:meth:`.Graph.text`, :meth:`.Graph.node_text`),
attribute values and numbers as the browser prints them, and an op's signature (its kind and input types).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from .graph_parts import Node

if TYPE_CHECKING:
    from .graph import Graph

#: JSON numbers are doubles in the browser: integers beyond this read back rounded
MAX_SAFE_INT = 2**53 - 1


def node_text(graph: Graph, node: Node) -> str:
    """One line in TorchScript's IR syntax (``%3 : Float(3) = aten::add(%1, %2, %2)``)."""
    outs = ", ".join(f"%{graph.values[v].name} : {graph.values[v].shape_str()}" for v in node.outputs)
    attrs = ""
    if node.attributes:
        attrs = "[" + ", ".join(f"{k}={format_attribute(a)}" for k, a in node.attributes.items()) + "]"
    ins = ", ".join(f"%{graph.values[v].name}" for v in node.inputs)
    lhs = f"{outs} = " if outs else ""
    scope = f", scope: {node.scope}" if node.scope else ""
    src = f"  # {node.source.file}:{node.source.line}" if node.source else ""
    return f"{lhs}{node.kind}{attrs}({ins}){scope}{src}"


def graph_text(graph: Graph) -> str:
    """The whole graph in TorchScript's IR syntax, with user source lines (like ``inlined_graph``)."""
    ins = ", ".join(f"%{graph.values[v].name} : {graph.values[v].shape_str()}" for v in graph.inputs)
    lines = [f"graph({ins}):"]

    def emit(ids: Iterable[int], indent: str) -> None:
        for nid in ids:
            n = graph.nodes[nid]
            lines.append(indent + node_text(graph, n))
            for bi, blk in enumerate(n.blocks):
                bins = ", ".join(f"%{graph.values[v].name}" for v in blk.inputs)
                lines.append(f"{indent}  block{bi}({bins}):")
                emit(blk.nodes, indent + "    ")
                bouts = ", ".join(f"%{graph.values[v].name}" for v in blk.outputs)
                lines.append(f"{indent}    -> ({bouts})")

    emit((n.id for n in graph.nodes if n.parent is None), "  ")
    lines.append("  return (" + ", ".join(f"%{graph.values[v].name}" for v in graph.outputs) + ")")
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
    """``aten::linear(Tensor,Tensor,Tensor)``: the key of :func:`.fx_arguments.argument_names`' table
    (``model/run.ts`` builds it the same way)."""
    return f"{node.kind}({','.join(graph.values[v].type for v in node.inputs)})"
