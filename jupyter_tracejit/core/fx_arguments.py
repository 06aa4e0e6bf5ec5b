"""An op's arguments by its schema, for :mod:`.fx_graph`: those a node passes, filled in to the last one passed
(:func:`given_arguments`), whether it runs in training (:func:`train_arg`), and the argument names of a graph's
ops read back from their overloads (:func:`argument_names`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .graph import Graph
from .graph_text import signature


def given_arguments(schema: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
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


def train_arg(schema: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> bool:
    """False only for a literal ``train=False`` (dropout in eval mode is deterministic, as torch says of traces)."""
    for i, a in enumerate(schema.arguments):
        if a.name == "train":
            given = args[i] if i < len(args) and not a.kwarg_only else kwargs.get("train")
            return given is not False
    return True


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
    :func:`.graph_text.signature` (``aten::sum.dim_IntList(Tensor,int[],bool)``), read from the overload's schema.

    A node's inputs are the first N arguments of its overload's schema (see :func:`given_arguments`), so the
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
