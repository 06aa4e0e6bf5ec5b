"""A :class:`~.graph.Graph`'s invariants (:meth:`.Graph.lint`): ids are positions, values are defined once and
before they are read (SSA, nodes in pre-order), producers, parents and scopes name what exists."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .graph import Graph


def lint_problems(graph: Graph) -> list[str]:
    """Every broken invariant of the graph, in words; empty when it holds them all."""
    problems: list[str] = []
    nv = len(graph.values)
    for i, value in enumerate(graph.values):
        if value.id != i:
            problems.append(f"value at index {i} has id {value.id}: ids must equal list positions")
        if value.producer is not None:
            if not 0 <= value.producer < len(graph.nodes):
                problems.append(f"value {i} ({value.name}) names producer {value.producer}, which does not exist")
            elif i not in graph.nodes[value.producer].outputs:
                problems.append(
                    f"value {i} ({value.name}) names producer {value.producer}, but that node does not list it "
                    "as an output: keep Value.producer and Node.outputs in sync"
                )
    defined = [False] * nv
    for v in graph.inputs:
        if 0 <= v < nv:
            defined[v] = True
        else:
            problems.append(f"graph input {v} is not a value id")
    for n in graph.nodes:
        if n.id >= len(graph.nodes) or graph.nodes[n.id] is not n:
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
                    f"node {n.id} ({n.kind}) reads value {v} ({graph.values[v].name}) before it is "
                    "defined: nodes must be listed in topological (pre-)order"
                )
        for v in n.outputs:
            if not 0 <= v < nv:
                problems.append(f"node {n.id} ({n.kind}) writes value {v}, which does not exist")
                continue
            if defined[v]:
                problems.append(f"value {v} ({graph.values[v].name}) is defined twice (SSA violation)")
            defined[v] = True
            if graph.values[v].producer != n.id:
                problems.append(
                    f"node {n.id} ({n.kind}) lists output {v}, whose producer is {graph.values[v].producer}"
                )
        if n.parent is not None and not any(n.id in b.nodes for b in graph.nodes[n.parent].blocks):
            problems.append(f"node {n.id} ({n.kind}) names parent {n.parent}, whose blocks do not hold it")
        if n.scope not in graph.scopes:
            problems.append(f"node {n.id} ({n.kind}) is in unknown scope {n.scope!r}")
        if n.source is not None and not 0 <= n.source.user_index < len(n.source.stack):
            problems.append(f"node {n.id} ({n.kind}) has a source user_index outside its stack")
    for v in graph.outputs:
        if not 0 <= v < nv or not defined[v]:
            problems.append(f"graph output {v} is not a defined value")
    typed = any(scope.type for path, scope in graph.scopes.items() if path)
    for path, scope in graph.scopes.items():
        if scope.parent is not None and scope.parent not in graph.scopes:
            problems.append(f"scope {path!r} names missing parent {scope.parent!r}")
        if path and not scope.node_ids and not scope.children:
            problems.append(
                f"scope {path!r} ({scope.type or 'no type'}) holds no nodes and no modules: a phantom, e.g. a "
                "module type filed under a path without its container's name"
            )
        if path and typed and scope.node_ids and not scope.type:
            problems.append(f"scope {path!r} holds nodes but has no module type")
    return problems
