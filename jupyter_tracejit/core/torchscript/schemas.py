"""What the inspector shows beside a node's inputs, as Netron does, worked out where torch is at hand:

- argument names of the ops, read from torch's registered schemas (``dropout_p=0.0``, ``is_causal=False``);
- the shapes of the module's parameters and buffers, which the graph's ``prim::GetAttr`` values do not carry.

A traced node passes every argument of its overload, so the overload is the schema whose arguments are as many as
the node's inputs and whose types take them (``aten::add.Tensor`` and ``aten::add.Scalar`` differ by the type of
``other``). The names are kept per signature (kind and input types), so a run stores each once, however many nodes
share it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import torch

from ..graph import Graph


def _takes(schema_type: str, ours: str) -> bool:
    """Whether an argument of ``schema_type`` (torch's spelling) takes a value of our type."""
    if schema_type == ours or schema_type in ("Any", "t"):
        return True
    if schema_type.startswith("Optional[") and schema_type.endswith("]"):
        return ours == "NoneType" or _takes(schema_type[9:-1], ours)
    if schema_type == "number":
        return ours in ("int", "float", "bool", "complex")
    # List[Optional[Tensor]] takes List[Tensor]; the kind already picked the family
    return schema_type.startswith("List[") and ours.startswith("List[")


@functools.lru_cache(maxsize=4096)
def _names(kind: str, types: tuple[str, ...]) -> tuple[str, ...] | None:
    try:
        schemas = torch._C._jit_get_schemas_for_operator(kind)
    except RuntimeError:
        return None
    same_count = [s for s in schemas if len(s.arguments) == len(types)]
    for schema in same_count:
        if all(_takes(str(a.type), t) for a, t in zip(schema.arguments, types, strict=True)):
            return tuple(a.name for a in schema.arguments)
    # no overload takes these types exactly: name them only if every overload of this arity agrees
    candidates = {tuple(a.name for a in s.arguments) for s in same_count}
    return candidates.pop() if len(candidates) == 1 else None


def argument_names(graphs: Iterable[Graph]) -> dict[str, list[str]]:
    """``signature -> argument names`` for every ``aten::`` op of ``graphs`` whose overload is known."""
    table: dict[str, list[str]] = {}
    seen: set[tuple[str, tuple[str, ...]]] = set()
    for graph in graphs:
        value_type = [v.type for v in graph.values]
        for node in graph.nodes:
            kind = node.kind
            if not kind.startswith("aten::"):
                continue
            types = tuple(map(value_type.__getitem__, node.inputs))
            if (kind, types) in seen:  # most nodes repeat a signature: skip building its key
                continue
            seen.add((kind, types))
            names = _names(kind, types)
            if names is not None:
                table[f"{kind}({','.join(types)})"] = list(names)
    return table
