"""Notebook widgets: :class:`TraceExplorer` and :func:`explore`.

Imports ipywidgets; the core never imports this package (``jupyter_tracejit.explore`` imports it on first use).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ..core.capture_diff import TraceComparison
from ..core.run import TraceRun
from ..core.run_diff import RunDiff
from ..core.torchscript.request import trace
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
    """An explorer on a run, or on a model / function traced now with ``tj.trace(fn, example_inputs, **options)``,
    or on the new run of a diff (``tj.explore(tj.diff(a, b))``) with its "Diff" view against the old one.

    A run from ``tj.trace`` / ``tj.trace_module`` keeps its request, so its explorer re-traces when the options
    change; a run loaded with ``TraceRun.from_json`` is shown as is. For ``trace_module``, trace first and pass
    the run.
    """
    register_display()
    if isinstance(run_or_callable, RunDiff):
        run_or_callable = run_or_callable.explorer_run()
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


#: overrides the host detection below: ``anywidget`` or ``jupyterlab`` (README, "Where the explorer runs")
WIDGET_ENV = "JUPYTER_TRACEJIT_WIDGET"
WIDGET_CHOICES = ("anywidget", "jupyterlab")


def _in_marimo() -> bool:
    """True inside a running marimo notebook or app (marimo is imported by then; never imported here otherwise)."""
    marimo = sys.modules.get("marimo")
    try:
        return bool(marimo is not None and marimo.running_in_notebook())
    except Exception:  # an old or partial marimo: treat as not marimo
        return False


def _in_colab() -> bool:
    """True in a Google Colab kernel: its startup imports ``google.colab``, and Colab sets ``COLAB_RELEASE_TAG``."""
    return "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ


def _in_vscode() -> bool:
    """True in a kernel that VS Code's notebooks started themselves.

    VS Code passes ``VSCODE_PID`` to every process it starts, kernels included. A kernel a Jupyter server started
    has ``JPY_PARENT_PID`` (set by jupyter_client's launcher), also when that server was started from VS Code's
    terminal, which passes ``VSCODE_PID`` on: that kernel is shown by JupyterLab or Notebook 7, in a browser.
    ``JPY_SESSION_NAME`` tells nothing apart: jupyter_server sets it, and VS Code does too (vscode-jupyter#16307).
    """
    return "VSCODE_PID" in os.environ and "JPY_PARENT_PID" not in os.environ


def uses_anywidget() -> bool:
    """Whether this host shows runs with :class:`AnyTraceExplorer` (anywidget) rather than :class:`TraceExplorer`.

    The one decision for ``tj.explore``, ``%trace`` and displayed runs: anywidget where our JupyterLab extension
    is not on the page (marimo, Colab, VS Code), the ipywidgets explorer our extension renders everywhere else
    (JupyterLab, Notebook 7, nbclient). ``JUPYTER_TRACEJIT_WIDGET`` overrides the detection.
    """
    choice = os.environ.get(WIDGET_ENV, "").strip().lower()
    if choice:
        if choice not in WIDGET_CHOICES:
            raise ValueError(
                f"{WIDGET_ENV}={os.environ[WIDGET_ENV]!r} is not a widget this package has: set it to "
                f"{' or '.join(WIDGET_CHOICES)}, or unset it to let the host decide"
            )
        return choice == "anywidget"
    return _in_marimo() or _in_colab() or _in_vscode()


def _explorer_class() -> type[TraceExplorer]:
    """The explorer for this host (:func:`uses_anywidget`)."""
    if uses_anywidget():
        from .anyexplorer import AnyTraceExplorer

        return AnyTraceExplorer
    return TraceExplorer


def run_mimebundle(run: TraceRun) -> dict[str, Any] | tuple[dict[str, Any], dict[str, Any]]:
    """What a notebook shows for a run: this host's explorer (:func:`uses_anywidget`) and the run's summary; the
    JupyterLab one adds the run's JSON for static renderers. anywidget's bundle comes with its metadata (in Colab
    it names the widget manager that renders it). What a terminal shows: the text report and where the explorer
    would render (no widget made for it)."""
    if in_terminal():
        return {"text/plain": terminal_report(run)}
    return _explorer_class()(run)._repr_mimebundle_() or {}


def diff_mimebundle(diff: RunDiff) -> dict[str, Any] | tuple[dict[str, Any], dict[str, Any]]:
    """What a notebook shows for ``tj.diff(a, b)``: the explorer on the new run with its "Diff" view against the old
    one (:meth:`RunDiff.explorer_run`; its JSON carries the diff, so a saved notebook shows it too), and the
    summary as text. A diff read back from JSON keeps no runs: its HTML page. A terminal: the summary."""
    if in_terminal() or diff.new_run is None or diff.old_run is None:
        text = {"text/plain": diff.summary()}
        return text if in_terminal() else {**text, "text/html": diff.to_html()}
    bundle = run_mimebundle(diff.explorer_run())
    data, metadata = bundle if isinstance(bundle, tuple) else (bundle, None)
    data = {**data, "text/plain": diff.summary()}
    return data if metadata is None else (data, metadata)


def comparison_mimebundle(comparison: TraceComparison) -> dict[str, Any] | tuple[dict[str, Any], dict[str, Any]]:
    """What a notebook shows for ``tj.compare(trace, export)``: the export run's explorer, whose "Trace vs export"
    tab is this comparison (the run keeps it as ``run.compared``), and the comparison's summary as text; one read
    back from JSON (no run) is its summary."""
    text = {"text/plain": f"trace vs export: {comparison.comparison.summary()}"}
    run = comparison.export_run
    if in_terminal() or run is None or run.compared is not comparison:
        return text
    bundle = run_mimebundle(run)
    data, metadata = bundle if isinstance(bundle, tuple) else (bundle, None)
    data = {**data, **text}
    return data if metadata is None else (data, metadata)


def register_display(ipython: Any = None) -> bool:
    """Show TraceRuns as explorers (and RunDiffs as explorers with their "Diff" view) in IPython; returns False
    when IPython is not running (nothing to do).

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
    ipython.display_formatter.mimebundle_formatter.for_type(RunDiff, diff_mimebundle)
    ipython.display_formatter.mimebundle_formatter.for_type(TraceComparison, comparison_mimebundle)
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
    "WIDGET_ENV",
    "AnyTraceExplorer",
    "Retracer",
    "TraceExplorer",
    "comparison_mimebundle",
    "default_options",
    "default_scheduler",
    "diff_mimebundle",
    "explore",
    "in_terminal",
    "register_display",
    "run_from_mime",
    "run_mime_payload",
    "run_mimebundle",
    "terminal_report",
    "uses_anywidget",
    "where_the_explorer_renders",
]
