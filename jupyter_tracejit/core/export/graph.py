"""``torch.export.ExportedProgram`` -> :class:`~jupyter_tracejit.core.graph.Graph`, by the neutral FX mapping
(:mod:`..fx_graph`, whose docstring says it decision by decision).

What is the export's own: the placeholders its ``graph_signature`` lifts (parameters, buffers, constant tensors and
script objects) become ``export::parameter`` / ``export::buffer`` / ``export::constant_tensor`` /
``export::custom_obj`` getattr nodes named by their qualified name; the others (``USER_INPUT``, effect ``TOKEN`` s)
are the graph's inputs; the nodes the mapping makes itself are ``export::`` kinds.
"""

from __future__ import annotations

import torch

from ..fx_arguments import argument_names
from ..fx_graph import BuiltGraph, FxGraphBuilder
from ..fx_location import module_path
from ..graph import Graph

#: ``graph_signature`` input kinds that become getattr nodes, with their node kinds
_LIFTED_KINDS = {
    "PARAMETER": "export::parameter",
    "BUFFER": "export::buffer",
    "CONSTANT_TENSOR": "export::constant_tensor",
    "CUSTOM_OBJ": "export::custom_obj",
}


def lifted_placeholders(ep: torch.export.ExportedProgram) -> dict[str, tuple[str, str]]:
    """``placeholder name -> (node kind, qualified name)`` of the inputs the program lifted."""
    lifted: dict[str, tuple[str, str]] = {}
    for spec in ep.graph_signature.input_specs:
        kind = _LIFTED_KINDS.get(spec.kind.name)
        if kind is not None and hasattr(spec.arg, "name"):
            lifted[spec.arg.name] = (kind, str(spec.target))
    return lifted


def build(ep: torch.export.ExportedProgram, *, method: str = "forward") -> BuiltGraph:
    """The graph plus what the tests check it against (each op's argument names as built)."""
    return FxGraphBuilder(ep.graph_module, prefix="export", lifted=lifted_placeholders(ep)).build(method)


def graph_from_exported_program(ep: torch.export.ExportedProgram, *, method: str = "forward") -> Graph:
    """The :class:`Graph` of an exported program."""
    return build(ep, method=method).graph


__all__ = ["argument_names", "build", "graph_from_exported_program", "lifted_placeholders", "module_path"]
