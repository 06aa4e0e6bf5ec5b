"""Notebook widgets: :class:`TraceExplorer` and :func:`explore`.

Imports ipywidgets; the core never imports this package (``jupyter_tracejit.explore`` imports it on first use).
"""

from __future__ import annotations

import sys
from typing import Any

from ..core.request import trace
from ..core.run import TraceRun
from .explorer import EXPORT_OPTION_KEYS, MODULE_NAME, MODULE_VERSION, OPTION_KEYS, TraceExplorer, default_options
from .mime import PROGRESS_MIME, RUN_MIME, run_from_mime, run_mime_payload
from .retrace import Retracer, Scheduler, default_scheduler
from .terminal import in_terminal, terminal_report, where_the_explorer_renders


def explore(
    run_or_callable: Any,
    example_inputs: Any = None,
    /,
    *,
    history_limit: int = 10,
    debounce: float = 0.3,
    settle: float = 0.1,
    scheduler: Scheduler | None = None,
    **trace_options: Any,
) -> TraceExplorer:
    """An explorer on a run, or on a model / function traced now with ``tj.trace(fn, example_inputs, **options)``.

    A run from ``tj.trace`` / ``tj.trace_module`` keeps its request, so its explorer re-traces when the options
    change; a run loaded with ``TraceRun.from_json`` is shown as is. For ``trace_module``, trace first and pass
    the run.
    """
    register_display()
    if isinstance(run_or_callable, TraceRun):
        if example_inputs is not None or trace_options:
            raise TypeError(
                "explore(run) shows a finished run and takes no example inputs or trace options; "
                "pass the model instead to trace it: explore(model, example_inputs, **options)"
            )
        run = run_or_callable
    elif callable(run_or_callable):
        run = trace(run_or_callable, example_inputs, **trace_options)
    else:
        raise TypeError(
            f"explore needs a TraceRun, an nn.Module or a function, got {type(run_or_callable).__name__}; "
            "e.g. explore(model, (x,)) or explore(tj.trace(model, (x,)))"
        )
    cls = _explorer_class()
    return cls(run, history_limit=history_limit, debounce=debounce, settle=settle, scheduler=scheduler)


def _in_marimo() -> bool:
    """True inside a running marimo notebook or app (marimo is imported by then; never imported here otherwise)."""
    marimo = sys.modules.get("marimo")
    try:
        return bool(marimo is not None and marimo.running_in_notebook())
    except Exception:  # an old or partial marimo: treat as not marimo
        return False


def _explorer_class() -> type[TraceExplorer]:
    """The explorer for this host: the anywidget one in marimo (no JupyterLab extension there), else the
    ipywidgets one our JupyterLab extension renders (unchanged in JupyterLab and Notebook 7)."""
    if _in_marimo():
        from .anyexplorer import AnyTraceExplorer

        return AnyTraceExplorer
    return TraceExplorer


def run_mimebundle(run: TraceRun) -> dict[str, Any]:
    """What a notebook shows for a run: the explorer, the run's JSON for static renderers, and its summary; what a
    terminal shows: the text report and where the explorer would render (no widget made for it)."""
    if in_terminal():
        return {"text/plain": terminal_report(run)}
    return TraceExplorer(run)._repr_mimebundle_() or {}


def register_display(ipython: Any = None) -> bool:
    """Show TraceRuns as explorers in IPython; returns False when IPython is not running (nothing to do).

    Registered on the shell's formatter rather than as ``TraceRun._repr_mimebundle_``, so the core stays
    free of widgets. Calling it again is harmless.
    """
    if ipython is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        ipython = get_ipython()
        if ipython is None:
            return False
    ipython.display_formatter.mimebundle_formatter.for_type(TraceRun, run_mimebundle)
    return True


def __getattr__(name: str) -> Any:
    # AnyTraceExplorer reads its ~1 MB front-end module at import: only when asked for
    if name == "AnyTraceExplorer":
        from .anyexplorer import AnyTraceExplorer

        return AnyTraceExplorer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "EXPORT_OPTION_KEYS",
    "MODULE_NAME",
    "MODULE_VERSION",
    "OPTION_KEYS",
    "PROGRESS_MIME",
    "RUN_MIME",
    "AnyTraceExplorer",
    "Retracer",
    "TraceExplorer",
    "default_options",
    "default_scheduler",
    "explore",
    "in_terminal",
    "register_display",
    "run_from_mime",
    "run_mime_payload",
    "run_mimebundle",
    "terminal_report",
    "where_the_explorer_renders",
]
