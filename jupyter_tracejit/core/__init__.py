"""The trace core: torch.jit.trace turned into data. Imports torch; never ipywidgets, traitlets or IPython."""

from .check import CheckCase, CheckReport, OutputComparison
from .diff import ConstantDiff, Divergence, GraphDiff, structural_diff
from .errors import TraceError
from .graph import Block, Frame, Graph, GraphLintError, ModuleScope, Node, SourceLoc, Value
from .hazards import Finding
from .options import TraceOptions
from .request import TraceRequest, trace, trace_module
from .run import SCHEMA_VERSION, Target, TraceRun
from .tracer_warnings import CATEGORIES, TraceWarning

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
