"""The explorer's wire contract: its synced traits (``explorer.schema.json`` writes them down) and the validation of
what the front end sets, said in the widget rather than raised into the kernel's log."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import ipywidgets
from traitlets import Bool, Dict, Enum, Float, Int, List, TraitError, Unicode, validate

from .._version import __version__
from ..core.run import TraceRun
from .explorer_options import Bar, divergence_count, normalized, option_problem

MODULE_NAME = "jupyter-tracejit"
#: the front end's npm version range this model speaks to (same release as the Python package)
MODULE_VERSION = "^" + __version__

STATUSES = ("idle", "tracing", "error")


class ExplorerState(ipywidgets.DOMWidget):
    """The traits of :class:`~.explorer.TraceExplorer` and their validation; the explorer sets the state read here
    (the run on screen, the options bar) before its traits."""

    _ready: bool
    _current: TraceRun | None
    _history: OrderedDict[str, TraceRun]
    _bar: Bar
    _n_check_inputs: int
    _applied_options: dict[str, Any]

    _model_name = Unicode("TraceExplorerModel").tag(sync=True)
    _view_name = Unicode("TraceExplorerView").tag(sync=True)
    _model_module = Unicode(MODULE_NAME).tag(sync=True)
    _view_module = Unicode(MODULE_NAME).tag(sync=True)
    _model_module_version = Unicode(MODULE_VERSION).tag(sync=True)
    _view_module_version = Unicode(MODULE_VERSION).tag(sync=True)

    #: ``TraceRun.to_json()`` of the run on screen (:attr:`run`); ``{}`` when there is none
    run_json = Dict().tag(sync=True)
    #: ``to_html()`` of the run on screen: the front end keeps the notebook's saved ``text/html`` fallback current
    html = Unicode("").tag(sync=True)
    #: the history, oldest first: ``{"run_id", "summary", "ok", "verdict", "created", "options",
    #: "explorer_options"}`` per run (``explorer_options``: the options bar's values that traced it)
    runs = List(Dict()).tag(sync=True)
    #: how many runs the history keeps (the one on screen is never dropped)
    history_limit = Int(10).tag(sync=True)
    #: the options of the next trace; a partial dict is merged onto the current options
    options = Dict().tag(sync=True)
    #: one label per check input set of the request, in the order of ``options["check_inputs"]``
    check_input_labels = List(Unicode()).tag(sync=True)
    #: whether the explorer can re-trace (it holds the callable and its inputs); fixed at construction
    live = Bool(False).tag(sync=True)
    status = Enum(STATUSES, default_value="idle").tag(sync=True)
    #: ``time.time()`` when the current trace started (the front end shows the elapsed time)
    status_since = Float(0.0).tag(sync=True)
    #: why the last re-trace or front-end request failed (with its hint); ``""`` otherwise
    status_message = Unicode("").tag(sync=True)
    #: what the capture under way is doing while ``status`` is ``tracing``: ``tracing``, ``checking``,
    #: ``exporting``, ``draft-exporting`` (core/progress.py); ``""`` when none runs
    phase = Unicode("").tag(sync=True)
    #: the method whose graph is shown (``forward`` or the first traced method)
    selected_method = Unicode("").tag(sync=True)
    #: id of the selected node in the selected method's graph; -1 for none
    selected_node = Int(-1).tag(sync=True)
    #: index into the run's divergences flattened case-major (``for case in check.cases: case.diff.divergences``)
    current_divergence = Int(-1).tag(sync=True)
    #: ``{"a", "b", "method", "graph_a", "graph_b", "diff"}`` comparing two history runs; ``{}`` for none
    comparison = Dict().tag(sync=True)
    #: the dims editor of the run on screen (explorer_dims.py): ``{"specs", "inputs", "suggestions", "flags",
    #: "problem"}``; ``{}`` when its back end has none or the run holds no live model
    dims = Dict().tag(sync=True)

    # -- validation at the boundary -----------------------------------------------------------------
    @validate("options")
    def _valid_options(self, proposal: Any) -> dict[str, Any]:
        value = proposal["value"]
        if not isinstance(value, dict):
            raise TraitError(f"options must be a dict of option name -> value, got {value!r}")
        # merge onto the last accepted options (not self.options: under hold_trait_notifications, as when
        # the front end's update is applied, that already holds the partial proposal)
        merged = {**self._applied_options, **value}
        for key, v in merged.items():
            problem = option_problem(key, v, self._n_check_inputs, self._bar)
            if problem is not None:
                raise TraitError(problem)
        return normalized(merged)

    @validate("live")
    def _valid_live(self, proposal: Any) -> bool:
        if self._ready:
            raise TraitError("live is fixed when the explorer is made (it says whether the run can be re-traced)")
        return bool(proposal["value"])

    @validate("history_limit")
    def _valid_history_limit(self, proposal: Any) -> int:
        value = proposal["value"]
        if value < 1:
            raise TraitError(
                f"history_limit must be at least 1, got {value}: it is how many runs the explorer keeps; "
                "use 1 to keep only the run on screen"
            )
        return int(value)

    @validate("selected_method")
    def _valid_selected_method(self, proposal: Any) -> str:
        value = str(proposal["value"])
        graphs = self._current.graphs if self._current is not None else {}
        if value == "" and not graphs:
            return value
        if value not in graphs:
            choices = ", ".join(graphs) or "none (the run on screen has no graph)"
            raise TraitError(
                f"selected_method {value!r} is not a traced method of the run on screen; choose one of: {choices}"
            )
        return value

    @validate("selected_node")
    def _valid_selected_node(self, proposal: Any) -> int:
        value = int(proposal["value"])
        if value == -1:
            return value
        graph = self._current.graphs.get(self.selected_method) if self._current is not None else None
        size = len(graph) if graph is not None else 0
        if not 0 <= value < size:
            have = f"node ids 0..{size - 1}" if size else "no nodes"
            raise TraitError(
                f"selected_node {value} does not exist in the graph of {self.selected_method!r} ({have}); "
                "use -1 to select nothing"
            )
        return int(value)

    @validate("current_divergence")
    def _valid_current_divergence(self, proposal: Any) -> int:
        value = proposal["value"]
        count = divergence_count(self._current)
        if value != -1 and not 0 <= value < count:
            have = f"indices 0..{count - 1}" if count else "no divergences"
            raise TraitError(
                f"current_divergence {value} is out of range: the run on screen has {have} "
                "(check cases in order, each case's divergences in order); use -1 for none"
            )
        return int(value)

    def set_state(self, sync_data: dict[str, Any]) -> None:
        # A bad value from the front end must not end as a traceback in the kernel log only: say it in the
        # widget and send back the values Python kept, so the controls show what is in effect.
        try:
            super().set_state(sync_data)
        except TraitError as e:
            self._fail(str(e))
            self.send_state([k for k in sync_data if k in self.keys])

    def _fail(self, message: str) -> None:
        with self.hold_sync():
            self.status_message = message
            self.status = "error"

    def _clear_error(self) -> None:
        if self.status == "error":
            with self.hold_sync():
                self.status_message = ""
                self.status = "idle"


__all__ = ["MODULE_NAME", "MODULE_VERSION", "STATUSES", "ExplorerState"]
