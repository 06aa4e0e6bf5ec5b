"""Dynamo's graphs as the run's :class:`~..graph.Graph` s and :class:`~.records.Region` s, one per compiled graph.

Graph names. A graph is named after the function dynamo compiled: the model's own function by its name
(``forward``, or the function's name), any other by its qualified name (``Layer.forward``, ``helper``; a function
defined inside another by its own name); dynamo's
resume functions (the code after a break, ``torch_dynamo_resume_in_forward_at_13``) by the function they resume.
The second and later graphs of one function take ``#1``, ``#2``... in the order they were compiled, so
``forward``, ``forward#1``, ``forward#2`` read in the order the model runs them (a recompiled graph counts too:
its region's ``call`` says which call compiled it).
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx

from ..fx_graph import FxGraphBuilder
from ..fx_location import module_path
from ..graph import Graph, SourceLoc
from .breaks import plain_name, resumed_function
from .guards import inputs_terms, spread_name
from .recorder import Compiled, Recorder
from .records import Region

_PREFIX = "compile"


# -- graphs ---------------------------------------------------------------------------------------------------------
class DynamoGraphBuilder(FxGraphBuilder):
    """:class:`~..fx_graph.FxGraphBuilder` for dynamo's graphs: module paths are relative to the compiled function's
    ``self`` (``L['self'].fc``, ``L['s'].fc`` for any name of it), so they are prefixed with that module's path in
    the model (``layers.0.fc`` for a layer's ``forward`` compiled on its own); resume functions in stacks are named
    after the functions they resume."""

    def __init__(self, graph_module: torch.fx.GraphModule, *, base: str, lifted: dict[str, tuple[str, str]]) -> None:
        super().__init__(graph_module, prefix=_PREFIX, lifted=lifted)
        self.base = base

    def scope_of(self, fx_node: torch.fx.Node, fallback: str) -> str:
        stack = fx_node.meta.get("nn_module_stack")
        if not stack:
            return fallback or self.base
        innermost: str | None = None
        for entry in stack.values():
            if not isinstance(entry, tuple) or len(entry) != 2:
                continue
            raw, qualified = entry
            path = self.paths.get(raw)
            if path is None:
                relative = module_path(_rooted_at_self(str(raw)))
                path = self.paths[raw] = ".".join(p for p in (self.base, relative) if p)
            self.scope_types.setdefault(path, str(qualified).rsplit(".", 1)[-1].rstrip("'>"))
            innermost = path
        return (fallback or self.base) if innermost is None else innermost

    def parse_stack(self, text: str) -> SourceLoc | None:
        found = super().parse_stack(text)
        if found is None:
            return None
        stack = tuple(
            dataclasses.replace(f, func=plain_name(f.func)) if "resume_in_" in f.func else f for f in found.stack
        )
        return SourceLoc(stack=stack, user_index=found.user_index)


def _rooted_at_self(path: str) -> str:
    """``L['s'].fc`` -> ``L['self'].fc``: :func:`~..fx_location.module_path` strips a root named ``self``."""
    if path.startswith("L[") and "]" in path:
        return "L['self']" + path[path.index("]") + 1 :]
    return path


def _lifted(c: Compiled, names: Mapping[int, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """Placeholders standing for the model's parameters and buffers: name -> (kind, qualified name)."""
    return {name: names[tensor] for name, tensor in c.examples.items() if tensor in names}


def tensor_names(model: Any) -> dict[int, tuple[str, str]]:
    """``id(tensor) -> (kind, qualified name)`` for the model's parameters and buffers."""
    names: dict[int, tuple[str, str]] = {}
    if not isinstance(model, torch.nn.Module):
        return names
    try:
        for name, p in model.named_parameters(remove_duplicate=False):
            names.setdefault(id(p), (f"{_PREFIX}::parameter", name))
        for name, b in model.named_buffers(remove_duplicate=False):
            names.setdefault(id(b), (f"{_PREFIX}::buffer", name))
    except Exception:  # a module whose tensors cannot be listed: its inputs stay inputs
        pass
    return names


def module_paths(model: Any) -> dict[int, str]:
    """``id(module) -> its path in the model`` (``""`` for the model)."""
    if not isinstance(model, torch.nn.Module):
        return {}
    try:
        return {id(m): name for name, m in model.named_modules(remove_duplicate=False)}
    except Exception:
        return {}


def _input_names(graph: Graph, c: Compiled, spread: str) -> dict[str, int]:
    """The graph's inputs named as the user names them (``x``, not dynamo's ``l_x_``; ``input_ids`` for what a
    ``**kwargs`` collected) where that name is free; returns each input's value id by that name (``stack0`` for a
    value carried over a break)."""
    taken = {v.name for v in graph.values}
    by_name: dict[str, int] = {}
    for vid in graph.inputs:
        value = graph.values[vid]
        source = c.sources.get(value.name, "")
        if not source.startswith("L["):
            continue
        name = inputs_terms(source.replace("L['___stack", "L['stack"), spread)
        if not name.isidentifier():
            continue
        by_name[name] = vid
        if name not in taken:
            taken.discard(value.name)
            value.name = name
            taken.add(name)
    return by_name


def function_name(
    code: types.CodeType | None, top: types.CodeType | None, gm: torch.fx.GraphModule | None = None
) -> str:
    """The name a compiled function's graphs take (see the module's docstring)."""
    if code is None:
        return _name_from_stacks(gm) if gm is not None else "graph"
    if code is top:
        return code.co_name
    resumed = resumed_function(code.co_name)
    if resumed is not None and top is not None and resumed[0] == top.co_name and code.co_filename == top.co_filename:
        return top.co_name
    qualified = plain_name(getattr(code, "co_qualname", code.co_name))
    # a function defined inside another (a decorator's wrapper: transformers' forward_with_checkpointing) by its own
    # name, not "GradientCheckpointingLayer.__init_subclass__.<locals>.forward_with_checkpointing"
    return qualified.rsplit("<locals>.", 1)[-1]


def _name_from_stacks(gm: torch.fx.GraphModule) -> str:
    for node in gm.graph.nodes:
        text = node.meta.get("stack_trace")
        if text:
            first = next((line for line in text.splitlines() if line.strip().startswith("File ")), "")
            if " in " in first:
                return plain_name(first.rsplit(" in ", 1)[1].strip())
    return "graph"


def _ops(gm: torch.fx.GraphModule) -> int:
    return sum(1 for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module"))


def op_ids(graph: Graph) -> list[int]:
    return [n.id for n in graph.nodes if n.role == "op" and n.parent is None]


def _first_line(graph: Graph) -> tuple[str, int]:
    for n in graph.nodes:
        if n.role == "op" and n.source is not None and not n.source.user_frame.internal:
            return n.source.file, n.source.line
    return "", 0


@dataclass
class Regions:
    """Each compiled graph as the run's graph and region, in the order dynamo compiled them."""

    graphs: dict[str, Graph] = field(default_factory=dict)
    regions: list[Region] = field(default_factory=list)
    #: each compiled graph's name, in the recorder's order
    names: list[str] = field(default_factory=list)
    #: per graph, its inputs' value ids by the names the user gives them (``x``, ``input_ids``)
    inputs_of: dict[str, dict[str, int]] = field(default_factory=dict)


def regions_of(recorder: Recorder, *, model: Any, top: types.CodeType | None, calls: int) -> Regions:
    """The graphs and regions of what the recorder saw dynamo compile (names: the module's docstring)."""
    names = tensor_names(model)
    paths = module_paths(model)
    out = Regions()
    counts: dict[str, int] = {}
    last_self: dict[str, torch.nn.Module] = {}
    for c in recorder.compiled:
        func = function_name(c.code, top, c.gm)
        n = counts.get(func, 0)
        counts[func] = n + 1
        name = func if n == 0 else f"{func}#{n}"
        out.names.append(name)
        module = c.self_module or last_self.get(func)
        if c.self_module is not None:
            last_self[func] = c.self_module
        base = paths.get(id(module), "") if module is not None else ""
        graph = DynamoGraphBuilder(c.gm, base=base, lifted=_lifted(c, names)).build(name).graph
        out.inputs_of[name] = _input_names(graph, c, spread_name(c.code) if c.code is top else "")
        out.graphs[name] = graph
        file, line = _first_line(graph)
        if not file and c.code is not None:
            file, line = c.code.co_filename, c.code.co_firstlineno
        out.regions.append(
            Region(
                graph=name,
                func=func,
                file=file,
                line=line,
                call=c.call,
                compile_id=c.compile_id,
                ops=_ops(c.gm),
                runs=[c.runs.get(i, 0) for i in range(calls)],
                compile_time=c.compile_time,
            )
        )
    return out


__all__ = ["DynamoGraphBuilder", "Regions", "function_name", "module_paths", "op_ids", "regions_of", "tensor_names"]
