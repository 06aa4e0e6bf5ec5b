"""Why two graphs differ where they do, in words: the reason a root divergence gives (a constant changed, an op of
another kind, a value read from elsewhere...), with the constants and the lines behind it (:mod:`.diff`)."""

from __future__ import annotations

from .graph import Graph, Node
from .graph_text import format_attribute, python_number


def describe_constant(graph: Graph, value_id: int, depth: int = 0, *, detailed: bool = False) -> str | None:
    """A constant input as text (``3``, ``[0, 1]``), looking through list/tuple plumbing; None otherwise.

    ``detailed``: tensor constants also name their dtype, shape and content digest, for two constants whose
    previews read the same."""
    producer = graph.producer(value_id)
    if producer is None or depth > 4:
        return None
    if producer.role == "constant":
        if not producer.attributes:
            return "None"
        if isinstance(producer.attributes.get("value"), dict) and "tensor" in producer.attributes["value"]:
            text = "tensor constant " + _preview(graph, producer.id)
            if detailed:
                t = producer.attributes["value"]["tensor"]
                shape = ", ".join(str(d) for d in t.get("shape", []))
                text += f" ({t.get('dtype', '?')}[{shape}], digest {t.get('digest', '?')})"
            return text
        return format_attribute(producer.attributes.get("value"), python_number)
    if producer.role in ("list", "tuple"):
        items = [describe_constant(graph, v, depth + 1, detailed=detailed) for v in producer.inputs]
        if all(i is not None for i in items):
            inner = ", ".join(i for i in items if i is not None)
            return f"[{inner}]" if producer.role == "list" else f"({inner})"
    return None


def _preview(graph: Graph, node_id: int) -> str:
    value = graph.nodes[node_id].attributes.get("value")
    if isinstance(value, dict) and "tensor" in value:
        t = value["tensor"]
        items = [format_attribute(x, python_number) for x in t.get("preview", [])]
        if not t.get("shape"):
            return items[0] if items else "?"
        more = ", ..." if len(items) < _numel(t.get("shape", [])) else ""
        return "[" + ", ".join(items) + more + "]"
    return format_attribute(value, python_number)


def _numel(shape: list[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _reason(a: Graph, b: Graph, an: Node | None, bn: Node | None, matched_values: dict[int, int]) -> str:
    if an is None and bn is not None:
        return f"only in the check trace: {bn.kind}"
    if bn is None and an is not None:
        return f"only in the trace: {an.kind}"
    assert an is not None and bn is not None
    if an.kind != bn.kind:
        return f"{an.kind} in the trace, {bn.kind} in the check trace"
    if len(an.inputs) != len(bn.inputs):
        return f"{an.kind} takes {len(an.inputs)} inputs in the trace, {len(bn.inputs)} in the check trace"
    for i, (va, vb) in enumerate(zip(an.inputs, bn.inputs, strict=True)):
        if matched_values.get(va) == vb:
            continue
        ca, cb = describe_constant(a, va), describe_constant(b, vb)
        if ca is not None and ca == cb:  # same text: say what differs beneath it (dtype, digest)
            ca, cb = describe_constant(a, va, detailed=True), describe_constant(b, vb, detailed=True)
        if (ca is not None or cb is not None) and ca != cb:
            return f"input {i} of {an.kind} differs: {ca or '%' + a.values[va].name} vs {cb or '%' + b.values[vb].name}"
        oa, ob = _origin(a, va), _origin(b, vb)
        if oa == ob:  # never name two identical texts as different
            return f"input {i} of {an.kind} comes from another computation: {oa}, whose own inputs differ"
        return f"input {i} of {an.kind} comes from another computation: {oa} vs {ob}"
    if an.attributes != bn.attributes:
        return f"attributes of {an.kind} differ"
    if len(an.outputs) != len(bn.outputs):
        if an.role == "unpack":
            source = a.producer(an.inputs[0]) if an.inputs else None
            what = f"the result of {source.kind}" if source is not None else "its input"
            because = (
                ": a loop over a tensor (for row in x) was unrolled for its length"
                if source is not None and source.kind == "aten::unbind"
                else ""
            )
            line = _line(a, an)
            at = f" (line {line})" if line is not None else ""
            return (
                f"{an.kind} unpacks {len(an.outputs)} values of {what}{at} in the trace, {len(bn.outputs)} in the "
                f"check trace{because}"
            )
        return f"{an.kind} has {len(an.outputs)} outputs in the trace, {len(bn.outputs)} in the check trace"
    return f"blocks of {an.kind} differ"


def _origin(graph: Graph, value_id: int) -> str:
    """Where a value comes from, in words that differ for different values: ``%x (input 0)``,
    ``%row.1 (output 2 of prim::ListUnpack, line 12)``."""
    value = graph.values[value_id]
    producer = graph.producer(value_id)
    if producer is None:
        where = f"input {graph.inputs.index(value_id)}" if value_id in graph.inputs else "a block input"
        return f"%{value.name} ({where})"
    line = f", line {producer.source.line}" if producer.source is not None else ""
    index = producer.outputs.index(value_id)
    return f"%{value.name} (output {index} of {producer.kind}{line})"


def _line(graph: Graph, node: Node) -> int | None:
    """A node's user line (plumbing without one takes its input's, see :func:`_recorded_at`)."""
    place = _recorded_at(graph, node)
    return place[1] if place is not None else None


def _follows(graph: Graph, root_id: int, side: str) -> str:
    root = graph.nodes[root_id]
    line = _line(graph, root)
    where = f" at line {line}" if line is not None else ""
    return f"follows from the divergence{where} ({root.kind} in the {side})"


def _recorded_at(graph: Graph, node: Node) -> tuple[str, int] | None:
    """A node's user line; plumbing the tracer records without one takes its input's (``for row in x``)."""
    for _ in range(4):
        if node.source is not None:
            return _place(node)
        producer = graph.producer(node.inputs[0]) if node.inputs else None
        if producer is None:
            return None
        node = producer
    return None


def _constant_difference(a: Graph, b: Graph, an: Node, bn: Node, matched_values: dict[int, int]) -> str | None:
    """``input 1 of aten::view differs: [3, -1] vs [5, -1]`` when paired ops read constants that differ."""
    if an.kind != bn.kind or len(an.inputs) != len(bn.inputs):
        return None
    for i, (va, vb) in enumerate(zip(an.inputs, bn.inputs, strict=True)):
        if matched_values.get(va) == vb:
            continue
        ca, cb = describe_constant(a, va), describe_constant(b, vb)
        if ca is not None and cb is not None and ca != cb:
            return f"input {i} of {an.kind} differs: {ca} vs {cb} (a cause of its own)"
    return None


def _place(node: Node) -> tuple[str, int] | None:
    return (node.source.file, node.source.line) if node.source is not None else None
