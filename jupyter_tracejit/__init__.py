"""jupyter-tracejit: see what torch.jit.trace recorded.

>>> import jupyter_tracejit as tj
>>> run = tj.trace(model, (x,))
>>> run.ok, run.warnings, run.check.first
"""

from typing import Any

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


def explore(*args: Any, **kwargs: Any) -> Any:
    """Explore a run (or trace a model and explore it) in a notebook widget; see :func:`.widgets.explore`.

    Imports ipywidgets on first use only, so ``import jupyter_tracejit`` stays free of it.
    """
    from .widgets import explore as _explore

    return _explore(*args, **kwargs)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jupyter_tracejit``: display TraceRuns as explorers, and register ``%trace`` / ``%%trace``
    (see ``%trace?``). IPython is imported here and in :mod:`.magic` only."""
    from .magic import register_magics
    from .widgets import register_display

    register_display(ipython)
    register_magics(ipython)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where JupyterLab finds the prebuilt frontend (``jupyter labextension develop`` reads this too)."""
    return [{"src": "labextension", "dest": "jupyter-tracejit"}]


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
    "explore",
    "structural_diff",
    "trace",
    "trace_module",
]
