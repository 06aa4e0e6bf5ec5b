"""``TraceExplorer``: the Python model of the trace explorer widget.

The traits tagged ``sync=True`` are the wire contract mirrored by the ``jupyter-tracejit`` front end
(``TraceExplorerModel`` / ``TraceExplorerView``); ``explorer.schema.json`` writes it down.
The explorer holds the :class:`~jupyter_tracejit.core.run.TraceRun` objects Python-side (:attr:`TraceExplorer.run`
is the one on screen) and sends their JSON; it re-traces through ``run.request`` when ``options`` change (see
:mod:`.retrace`). An export run (``run.backend == "export"``) gets the export's options bar (core/export/options.py
``EXPORT_SPECS``) and re-exports the same way.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from traitlets import observe

from ..core.diff import structural_diff
from ..core.run import TraceRun
from ..core.words import with_article
from . import recapture
from .explorer_dims import dims_of, request_dims
from .explorer_options import (
    CHECK_INPUTS_ENABLED,
    EXPORT_OPTION_KEYS,
    OPTION_KEYS,
    bar_of,
    check_input_labels,
    default_method,
    default_options,
    divergence_count,
    history_entry,
    initial_options,
    main_loop_scheduler,
)
from .explorer_state import MODULE_NAME, MODULE_VERSION, ExplorerState
from .mime import RUN_MIME, run_from_mime, run_mime_payload
from .retrace import Retracer, Scheduler
from .terminal import in_terminal, terminal_report


class TraceExplorer(ExplorerState):
    """Explore a :class:`TraceRun` in a notebook: graph, warnings, check divergences, options, history.

    ``TraceExplorer(run)`` shows ``run``; when the run carries its request (``run.request``, set by
    ``tj.trace``), changing :attr:`options` re-traces after ``debounce`` seconds and shows the new run
    (:attr:`run` is always the run on screen). A finished trace is shown ``settle`` seconds after it ends, so that
    a cancel sent while the kernel was busy tracing is read first (:meth:`cancel`).
    ``scheduler`` (``(delay, fn) -> handle``) replaces the asyncio loop for tests and other event loops.
    """

    def __init__(
        self,
        run: TraceRun | None = None,
        *,
        history_limit: int = 10,
        debounce: float = 0.3,
        settle: float = 0.1,
        scheduler: Scheduler | None = None,
        **kwargs: Any,
    ) -> None:
        if run is not None and not isinstance(run, TraceRun):
            raise TypeError(
                f"TraceExplorer shows a TraceRun, got {type(run).__name__}; "
                "use jupyter_tracejit.explore(model, example_inputs) to trace and explore in one step"
            )
        # Python-side state the validators read; set before the traits so initial values validate
        self._ready = False
        self._current: TraceRun | None = run
        self._history: OrderedDict[str, TraceRun] = OrderedDict()
        self._request = run.request if run is not None else None
        #: the options bar of the run's back end (trace or export), fixed with the explorer
        self._bar = bar_of(run)
        self._check_sets, labels = check_input_labels(run)
        self._n_check_inputs = len(labels)
        source = self._request.options.as_dict() if self._request is not None else (run.options if run else {})
        initial = initial_options(source, self._n_check_inputs, self._bar)
        self._applied_options = initial
        #: run_id -> the options bar's values that traced it (what picking it from the history puts back)
        self._traced_with: dict[str, dict[str, Any]] = {}
        #: set while the options are put back without asking for a re-trace (history pick, cancel)
        self._restoring_options = False
        self._retracer: Retracer[dict[str, Any], TraceRun] = Retracer(
            lambda payload: recapture.work(self, payload),
            on_start=lambda: recapture.on_start(self),
            on_result=lambda run: recapture.on_result(self, run),
            on_error=lambda exc: recapture.on_error(self, exc),
            debounce=debounce,
            settle=settle,
            scheduler=scheduler if scheduler is not None else main_loop_scheduler(),
        )
        if run is not None:
            self._history[run.run_id] = run
            self._traced_with[run.run_id] = initial
        super().__init__(
            run_json=run.to_json() if run is not None else {},
            html=run.to_html() if run is not None else "",
            runs=[history_entry(r, self._options_of(r)) for r in self._history.values()],
            dims=dims_of(run),
            history_limit=history_limit,
            options=initial,
            check_input_labels=labels,
            live=self._request is not None,
            selected_method=default_method(run),
            **kwargs,
        )
        self.on_msg(lambda _widget, content, _buffers: recapture.on_front_end_msg(self, content))
        self._ready = True

    # -- Python API ---------------------------------------------------------------------------------
    @property
    def run(self) -> TraceRun | None:
        """The run on screen (it follows re-traces and history picks)."""
        return self._current

    @property
    def history(self) -> list[TraceRun]:
        """The runs kept, oldest first."""
        return list(self._history.values())

    def retrace(self) -> None:
        """Trace again now with the current :attr:`options` (no debounce)."""
        if not self.live or self._request is None:
            raise RuntimeError(self._not_live_message())
        self._retracer.request(dict(self.options), debounce=0.0)

    def draft(self) -> None:
        """Run the draft of the export on screen (``run.draft()``: ``torch.export.draft_export``, which a refused
        export offers instead of waiting for it) and show the run with it joined when it arrives; as a re-trace:
        ``status`` is ``tracing``, ``phase`` ``draft-exporting``, and the kernel's Interrupt or :meth:`cancel` stops
        it, leaving the run on screen as it was. The front end asks for it with the message ``{"type": "draft"}``."""
        problem = recapture.draft_problem(self._current)
        if problem is not None:
            raise RuntimeError(problem)
        assert self._current is not None
        self._retracer.request({recapture.DRAFT: self._current.run_id}, debounce=0.0)

    def set_dims(self, specs: list[str]) -> None:
        """Export again now with these ``--dynamic`` specs (``["x:0=batch[2,64]", "x:1"]``; ``[]``: every dim
        static) and the options bar's values, as the dims editor's re-export does (``{"type": "dims", "specs":
        [...]}``); the try lands in the history. ``ValueError`` names a bad spec and the form before anything runs."""
        request_dims(self, specs)

    def add_run(self, run: TraceRun, *, show: bool = True) -> None:
        """Put a run traced elsewhere into the history (e.g. the same model with other inputs), to compare."""
        if not isinstance(run, TraceRun):
            raise TypeError(f"add_run takes a TraceRun, got {type(run).__name__}")
        bar = bar_of(run)
        if bar is not self._bar:
            if self._current is not None:
                raise ValueError(
                    f"add_run: this explorer shows {self._bar.backend} runs and the run is "
                    f"{with_article(run.backend)} run (their options differ); explore it on its own: tj.explore(run)"
                )
            # an empty explorer takes the options bar of its first run's back end
            self._bar = bar
            self._applied_options = {}
            self._restore_options(initial_options(run.options, self._n_check_inputs, bar))
        with self.hold_sync():
            if show or self._current is None:
                self._show(run)
            self._remember(run)

    def show_run(self, run_id: str) -> None:
        """Put the history run ``run_id`` on screen, and its options in the options bar: they are the options of
        the next re-trace. A re-trace in progress is dropped (its options are no longer the bar's)."""
        run = self._history_run(run_id)
        self._retracer.cancel()
        with self.hold_sync():
            self._show(run)
            self._restore_options(self._options_of(run))
            self._clear_error()
            self.status = "idle"

    def cancel(self) -> None:
        """Stop waiting for the re-trace asked for: a trace not yet started does not start, the result of one in
        progress is dropped, and the options bar goes back to the options of the run on screen."""
        self._retracer.cancel()
        with self.hold_sync():
            if self._current is not None:
                self._restore_options(self._options_of(self._current))
            if self.status == "tracing":
                self.status = "idle"

    def compare(self, a: str, b: str, method: str = "forward") -> dict[str, Any]:
        """Structural diff of method ``method`` between history runs ``a`` and ``b``; fills :attr:`comparison`."""
        run_a, run_b = self._history_run(a), self._history_run(b)
        for run_id, r in ((a, run_a), (b, run_b)):
            if method not in r.graphs:
                have = ", ".join(r.graphs) or "none (tracing failed)"
                raise ValueError(f"run {run_id!r} has no graph for method {method!r}; its graphs: {have}")
        graph_a, graph_b = run_a.graphs[method], run_b.graphs[method]
        self.comparison = {
            "a": a,
            "b": b,
            "method": method,
            "graph_a": graph_a.to_json(),
            "graph_b": graph_b.to_json(),
            "diff": structural_diff(graph_a, graph_b).to_json(),
        }
        self._clear_error()
        return self.comparison

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any] | None:
        """The widget view plus the run itself (``RUN_MIME``): the extension renders that without a kernel,
        so a saved notebook still shows the explorer, read-only."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data = dict(bundle)
        if self._current is not None:
            data[RUN_MIME] = run_mime_payload(self.run_json)
            # read where neither the widget nor our renderer is available (nbconvert, GitHub); the front end
            # replaces both with the run on screen after every re-trace (mime.ts)
            data["text/html"] = self.html
            # a terminal renders no widget: the report, and where the explorer would render
            data["text/plain"] = terminal_report(self._current) if in_terminal() else self._current.summary()
        return data

    def close(self) -> None:
        # a trace scheduled for a closed widget would only send state nobody listens to
        retracer = getattr(self, "_retracer", None)
        if retracer is not None:
            retracer.cancel()
        # release the model, its inputs and the history's ScriptModules; the run on screen stays readable
        if hasattr(self, "_history"):
            current = self._current
            self._history.clear()
            if current is not None:
                self._history[current.run_id] = current
            self._request = None
        # every DOMWidget makes its own Layout widget, which ipywidgets' close() leaves registered (and its comm
        # open): one widget left behind per %trace run. Ours is never shared, so it goes with the explorer.
        layout = self.layout if "layout" in self._trait_values else None
        super().close()
        if layout is not None:
            layout.close()

    # -- reactions --------------------------------------------------------------------------------------
    @observe("options")
    def _options_changed(self, change: Any) -> None:
        self._applied_options = change["new"]
        if not self._ready or self._restoring_options:
            return
        if not self.live or self._request is None:
            self._fail(self._not_live_message())
            return
        self._retracer.request(dict(change["new"]))

    @observe("history_limit")
    def _history_limit_changed(self, change: Any) -> None:
        if self._ready:
            self._trim()

    @observe("selected_method")
    def _selected_method_changed(self, change: Any) -> None:
        graph = self._current.graphs.get(change["new"]) if self._current is not None else None
        if self.selected_node >= (len(graph) if graph is not None else 0):
            self.selected_node = -1

    # -- helpers ------------------------------------------------------------------------------------------
    def _not_live_message(self) -> str:
        if self.live:  # it was live: closed since (a newer %trace of its cell, or close())
            return (
                "this explorer was closed and no longer holds its model; run the trace again (or "
                "jupyter_tracejit.explore(model, example_inputs)) to explore with re-tracing"
            )
        return (
            "this explorer cannot re-trace: its run has no live model (e.g. it was loaded from JSON); "
            "call jupyter_tracejit.explore(model, example_inputs) to explore with re-tracing"
        )

    def _history_run(self, run_id: Any) -> TraceRun:
        run = self._history.get(run_id) if isinstance(run_id, str) else None
        if run is None:
            known = ", ".join(self._history) or "none"
            raise ValueError(f"unknown run_id {run_id!r}: not in the explorer's history (kept: {known})")
        return run

    def _options_of(self, run: TraceRun) -> dict[str, Any]:
        """The options bar's values for ``run``: those that traced it here, else the closest the bar can offer."""
        known = self._traced_with.get(run.run_id)
        if known is not None:
            return known
        source = run.request.options.as_dict() if run.request is not None else run.options
        return initial_options(source, self._n_check_inputs, self._bar)

    def _restore_options(self, options: dict[str, Any]) -> None:
        """Put ``options`` in the options bar without asking for a re-trace."""
        self._restoring_options = True
        try:
            self.options = options
        finally:
            self._restoring_options = False

    def _show(self, run: TraceRun) -> None:
        """Put ``run`` on screen, keeping the selection where it still exists."""
        self._current = run
        method = self.selected_method if self.selected_method in run.graphs else default_method(run)
        graph = run.graphs.get(method)
        node = self.selected_node if method == self.selected_method and graph is not None else -1
        if graph is None or node >= len(graph):
            node = -1
        divergence = self.current_divergence if self.current_divergence < divergence_count(run) else -1
        with self.hold_sync():  # one state message for the whole switch
            # -1 is valid for any run, so the validators never see a selection of the old run on the new one
            self.selected_node = -1
            self.current_divergence = divergence
            self.selected_method = method
            self.selected_node = node
            self.run_json = run.to_json()
            self.html = run.to_html()
            self.dims = dims_of(run)

    def _remember(self, run: TraceRun) -> None:
        self._history[run.run_id] = run
        self._history.move_to_end(run.run_id)
        self._trim()

    def _trim(self) -> None:
        keep = self._current.run_id if self._current is not None else None
        while len(self._history) > self.history_limit:
            oldest = next((rid for rid in self._history if rid != keep), None)
            if oldest is None:
                break
            del self._history[oldest]
        if self.comparison and not {self.comparison.get("a"), self.comparison.get("b")} <= set(self._history):
            self.comparison = {}  # it names a run the history no longer has
        # dropped runs and results never shown (superseded, cancelled) need not be remembered
        self._traced_with = {k: v for k, v in self._traced_with.items() if k in self._history}
        self.runs = [history_entry(r, self._options_of(r)) for r in self._history.values()]


__all__ = [
    "CHECK_INPUTS_ENABLED",
    "EXPORT_OPTION_KEYS",
    "MODULE_NAME",
    "MODULE_VERSION",
    "OPTION_KEYS",
    "TraceExplorer",
    "default_options",
    "run_from_mime",
    "run_mime_payload",
]
