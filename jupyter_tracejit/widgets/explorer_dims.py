"""The explorer's dims editor, kernel side: its ``dims`` trait (what the run on screen was captured with, as
``--dynamic`` specs, its inputs' sizes, the fixes suggested for it) and the ``{"type": "dims", "specs": [...]}``
message, which captures again with those specs through the re-capture path (:mod:`.recapture`), so each try lands
in the history. Both come from the run's back end (its registry row's ``dims`` and ``with_dims`` actions: an
export's :mod:`~jupyter_tracejit.core.export.dim_specs`); a back end without them has no dims to edit.

A bad spec is said in the widget (``status_message`` names the spec and the form) before anything runs; the
front end keeps what was typed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.registry import backend as backend_row
from ..core.run import TraceRun

if TYPE_CHECKING:
    from .explorer import TraceExplorer

#: the key of a Retracer payload that carries the request's changes for new dims (beside the options bar's values)
DIMS = "__dims__"


def dims_of(run: TraceRun | None) -> dict[str, Any]:
    """The ``dims`` trait for ``run``: its back end's editor state, ``{}`` when it has none (a trace, a saved run)."""
    state = backend_row(run.backend).action("dims") if run is not None else None
    found: dict[str, Any] = state(run) if state is not None else {}
    return found


def request_dims(ex: TraceExplorer, specs: Any) -> None:
    """Capture again now with ``specs`` (and the options bar's values); ``ValueError`` naming what is wrong."""
    run = ex._current
    change = backend_row(run.backend).action("with_dims") if run is not None else None
    if run is None or change is None:
        raise ValueError("this explorer's run has no dims to edit: the dims editor re-exports torch.export runs")
    if not ex.live or ex._request is None:
        raise ValueError(ex._not_live_message())
    changes = change(run, specs)
    ex._retracer.request({**ex.options, DIMS: changes}, debounce=0.0)


__all__ = ["DIMS", "dims_of", "request_dims"]
