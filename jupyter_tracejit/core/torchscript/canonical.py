"""Whole TorchScript graphs, around :func:`.extract.extract_graph`: the canonical inlined copy torch's check compares
and its comparison text (:func:`canonical_inlined`, :func:`canonical_text`), whether inlining would change a graph
(:func:`has_calls`), and the order the extraction numbers nodes in (:func:`preorder`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from ..values import demangle
from .node_facts import BLOCK_KINDS


def preorder(ts_graph: torch._C.Graph) -> Iterator[torch._C.Node]:
    """Nodes in the order :func:`extract_graph` numbers them: a node, then the nodes of its blocks."""

    def walk(nodes: Any) -> Iterator[torch._C.Node]:
        for n in nodes:
            yield n
            if n.kind() in BLOCK_KINDS:
                for b in n.blocks():
                    yield from walk(b.nodes())

    return walk(ts_graph.nodes())


def has_calls(ts_graph: torch._C.Graph) -> bool:
    """Whether inlining would change the graph: it holds a call to a method or a function."""
    graph: Any = ts_graph  # torch's stubs lack Graph.findNode (a C++ search, one call)
    return graph.findNode("prim::CallMethod") is not None or graph.findNode("prim::CallFunction") is not None


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
