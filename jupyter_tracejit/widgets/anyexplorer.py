"""``AnyTraceExplorer``: the trace explorer as an anywidget, for hosts without our JupyterLab extension.

Same Python model as :class:`~.explorer.TraceExplorer` (it subclasses it: the synced traits of
``explorer.schema.json``, validation, re-tracing, history), but its front end is an ES module in this package
(``static/explorer.mjs`` and ``static/explorer.css``, built by ``npm run build:anywidget`` from the same
TypeScript sources) that anywidget sends to the page over the widget's own comm as ``_esm`` / ``_css``. So it
renders wherever anywidget does (marimo, JupyterLab, Notebook 7, VS Code, Colab) with nothing fetched from a CDN.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget

from .explorer import TraceExplorer

STATIC = Path(__file__).resolve().parent.parent / "static"
ESM_FILE = STATIC / "explorer.mjs"
CSS_FILE = STATIC / "explorer.css"


def _missing_module(path: Path) -> str:
    """A module that says what is missing instead of a blank output (a source checkout that was never built)."""
    message = f"jupyter-tracejit: {path.name} is not built; run `npm run build:anywidget` (or `npm run build`)"
    return f"export default {{ render({{ el }}) {{ el.textContent = {message!r}; console.error({message!r}); }} }};"


def _read(path: Path, fallback: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return fallback


class AnyTraceExplorer(anywidget.AnyWidget, TraceExplorer):
    """:class:`TraceExplorer` with anywidget's front end: the same traits, Python API and messages.

    anywidget comes first in the bases so that its ``_model_*`` / ``_view_*`` names (``AnyModel`` of the
    ``anywidget`` front-end package) win over ``TraceExplorerModel`` of our JupyterLab extension. The notebook's
    output carries the widget view only: the kernel-free ``RUN_MIME`` copy belongs to the JupyterLab extension,
    whose renderer would otherwise wait for a ``TraceExplorerModel`` that never comes.
    """

    _esm = _read(ESM_FILE, _missing_module(ESM_FILE))
    _css = _read(CSS_FILE, "")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)

    # anywidget's bundle is (data, metadata), TraceExplorer's data only: IPython takes either
    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:  # type: ignore[override]
        """anywidget's view and metadata, with the run's summary as the text (what a plain IPython terminal
        prints) in place of the widget's repr."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None or self._current is None:
            return bundle
        data, metadata = bundle
        return {**data, "text/plain": self._current.summary()}, metadata


__all__ = ["AnyTraceExplorer"]
