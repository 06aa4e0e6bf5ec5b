"""jupyter-tracejit: see what torch.jit.trace and torch.export recorded.

>>> import jupyter_tracejit as tj
>>> run = tj.trace(model, (x,))
>>> run.ok, run.warnings, run.check.first
>>> exported = tj.export(model, (x,), dynamic_shapes={"x": {0: torch.export.Dim("batch")}})
>>> exported.export.guards, tj.compare(run, exported)
>>> shipped = tj.load("model.pt")  # a saved TorchScript archive (.pt) or exported program (.pt2), nothing run
>>> tj.diff("model-v1.pt", "model-v2.pt").summary()
"""

from typing import TYPE_CHECKING, Any

from . import cells, render  # noqa: F401  (render registers run.to_dot / to_html / save_html with the core)
from ._version import __version__
from .core import run_diff  # noqa: F401  (registers how a run's diff_against is read back)
from .core.run import TraceRun, register_file_namer

if TYPE_CHECKING:
    from .core import (
        CATEGORIES,
        SCHEMA_VERSION,
        CheckReport,
        Divergence,
        Finding,
        Graph,
        GraphDiff,
        TraceError,
        TraceWarning,
        structural_diff,
    )
    from .core import trace as trace
    from .core import trace_module as trace_module
    from .core.archive.saved import load

    # the back ends' API, found through the registry at run time (core/registry.py): named here for type checkers
    from .core.export.request import compare as compare
    from .core.export.request import export as export
    from .core.run_diff import diff

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
    "diff",
    "explore",
    "load",
    "structural_diff",
    # and each back end's functions (tj.trace, tj.trace_module, tj.export, tj.compare), from the registry below
]

#: imported from the core on first use: ``import jupyter_tracejit`` does not import torch (a saved run opens
#: without it, the CLI answers ``--help`` and Ctrl-C at once); ``tj.trace`` does
_FROM_CORE = frozenset(__all__) - {"TraceRun", "__version__", "explore", "load", "diff"}
#: saved models: ``tj.load`` (core/archive, imports torch) and ``tj.diff`` (core/run_diff, torch-free)
_SAVED = {"load": ("core.archive.saved", "load"), "diff": ("core.run_diff", "diff")}


def _backend_api() -> dict[str, tuple[str, str]]:
    """Each back end's public functions (``tj.trace``, ``tj.export``, ``tj.compare``), as its registry row names
    them: ``name -> (module relative to jupyter_tracejit.core, attribute)``."""
    from .core.registry import api_functions

    return api_functions()


__all__ += sorted(_backend_api())


def __getattr__(name: str) -> Any:
    api = _backend_api() if not name.startswith("__") else {}
    if name in api:
        import importlib

        module, attribute = api[name]
        value = getattr(importlib.import_module(module, f"{__name__}.core"), attribute)
    elif name in _SAVED:
        import importlib

        module, attribute = _SAVED[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attribute)
    elif name in _FROM_CORE:
        from . import core

        value = getattr(core, name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_FROM_CORE, *_backend_api(), *_SAVED})


# locations in notebook code read "cell [9], line 7" (a no-op outside IPython)
register_file_namer(cells.cell_name)


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


def _run_bundle(run: TraceRun) -> dict[str, Any] | tuple[dict[str, Any], dict[str, Any]]:
    from .widgets import run_mimebundle

    return run_mimebundle(run)


def _diff_bundle(diff: Any) -> dict[str, Any] | tuple[dict[str, Any], dict[str, Any]]:
    from .widgets import diff_mimebundle

    return diff_mimebundle(diff)


def _comparison_bundle(comparison: Any) -> dict[str, Any] | tuple[dict[str, Any], dict[str, Any]]:
    from .widgets import comparison_mimebundle

    return comparison_mimebundle(comparison)


def _register_display_if_in_ipython() -> None:
    """In a notebook, make a displayed TraceRun (or ``tj.diff``'s RunDiff, ``tj.compare``'s TraceComparison) show the
    explorer without ``%load_ext``.

    Only when IPython is already running (never imports it); the formatter imports the widgets on first
    display, so ``import jupyter_tracejit`` stays free of ipywidgets everywhere.
    """
    import sys

    ipython_module = sys.modules.get("IPython")
    shell = ipython_module.get_ipython() if ipython_module is not None else None
    if shell is None or not hasattr(shell, "display_formatter"):
        return
    try:
        formatter = shell.display_formatter.mimebundle_formatter
        formatter.for_type(TraceRun, _run_bundle)
        # by name: core.run_diff is imported when tj.diff is first used, not here
        formatter.for_type_by_name("jupyter_tracejit.core.run_diff", "RunDiff", _diff_bundle)
        # tj.compare(trace, export): the export's explorer on its "Trace vs export" tab
        formatter.for_type_by_name("jupyter_tracejit.core.capture_diff", "TraceComparison", _comparison_bundle)
    except Exception:  # an unusual shell: displaying falls back to repr, nothing else changes
        pass


_register_display_if_in_ipython()


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where JupyterLab finds the prebuilt frontend (``jupyter labextension develop`` reads this too)."""
    return [{"src": "labextension", "dest": "jupyter-tracejit"}]
