"""The core: captures turned into data. Never imports ipywidgets, traitlets or IPython.

Its names are imported on first use (PEP 562): the records of a saved run (:mod:`.run`, :mod:`.graph`,
:mod:`.check`...) load without torch, and torch is imported when a capture runs (:func:`trace`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: public name -> the module (relative to this package) that defines it
_EXPORTS: dict[str, str] = {
    "CATEGORIES": ".tracer_warnings",
    "SCHEMA_VERSION": ".run",
    "Block": ".graph",
    "CheckCase": ".check",
    "CheckReport": ".check",
    "ConstantDiff": ".diff",
    "Divergence": ".diff",
    "Finding": ".hazards",
    "Frame": ".graph",
    "Graph": ".graph",
    "GraphDiff": ".diff",
    "GraphLintError": ".graph",
    "ModuleScope": ".graph",
    "Node": ".graph",
    "OutputComparison": ".check",
    "SourceLoc": ".graph",
    "Target": ".run",
    "TraceError": ".errors",
    "TraceOptions": ".torchscript.options",
    "TraceRequest": ".torchscript.request",
    "TraceRun": ".run",
    "TraceWarning": ".tracer_warnings",
    "Value": ".graph",
    "structural_diff": ".diff",
    "trace": ".torchscript.request",
    "trace_module": ".torchscript.request",
}

if TYPE_CHECKING:
    from .check import CheckCase, CheckReport, OutputComparison
    from .diff import ConstantDiff, Divergence, GraphDiff, structural_diff
    from .errors import TraceError
    from .graph import Block, Frame, Graph, GraphLintError, ModuleScope, Node, SourceLoc, Value
    from .hazards import Finding
    from .run import SCHEMA_VERSION, Target, TraceRun
    from .torchscript.options import TraceOptions
    from .torchscript.request import TraceRequest, trace, trace_module
    from .tracer_warnings import CATEGORIES, TraceWarning


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


__all__ = [
    "CATEGORIES",
    "SCHEMA_VERSION",
    "Block",
    "CheckCase",
    "CheckReport",
    "ConstantDiff",
    "Divergence",
    "Finding",
    "Frame",
    "Graph",
    "GraphDiff",
    "GraphLintError",
    "ModuleScope",
    "Node",
    "OutputComparison",
    "SourceLoc",
    "Target",
    "TraceError",
    "TraceOptions",
    "TraceRequest",
    "TraceRun",
    "TraceWarning",
    "Value",
    "structural_diff",
    "trace",
    "trace_module",
]
