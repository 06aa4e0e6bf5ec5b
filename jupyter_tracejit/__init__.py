"""jupyter-tracejit: see what torch.jit.trace recorded.

>>> import jupyter_tracejit as tj
>>> run = tj.trace(model, (x,))
>>> run.ok, run.warnings, run.check.first
"""

from .core import (
    CATEGORIES,
    SCHEMA_VERSION,
    CheckReport,
    Divergence,
    Finding,
    Graph,
    GraphDiff,
    TraceError,
    TraceRun,
    TraceWarning,
    structural_diff,
    trace,
    trace_module,
)

__version__ = "0.1.0"

__all__ = [
    "CATEGORIES",
    "SCHEMA_VERSION",
    "CheckReport",
    "Divergence",
    "Finding",
    "Graph",
    "GraphDiff",
    "TraceError",
    "TraceRun",
    "TraceWarning",
    "__version__",
    "structural_diff",
    "trace",
    "trace_module",
]
