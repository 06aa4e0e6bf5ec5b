"""``TraceExplorer``: the Python model of the trace explorer widget.

The traits tagged ``sync=True`` are the wire contract mirrored by the ``jupyter-tracejit`` front end
(``TraceExplorerModel`` / ``TraceExplorerView``); ``explorer.schema.json`` writes it down.
The explorer holds the :class:`~jupyter_tracejit.core.run.TraceRun` objects Python-side (:attr:`TraceExplorer.run`
is the one on screen) and sends their JSON; it re-traces through ``run.request`` when ``options`` change (see
:mod:`.retrace`). An export run (``run.backend == "export"``) gets the export's options bar (core/export/options.py
``EXPORT_SPECS``) and re-exports the same way.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import ipywidgets
from traitlets import Bool, Dict, Enum, Float, Int, List, TraitError, Unicode, observe, validate

from .._version import __version__
from ..core.diff import structural_diff
from ..core.inputs import describe_inputs
from ..core.options import INPUT_SETS_KEY, OptionSpec
from ..core.registry import backend, names
from ..core.run import TraceRun
from ..core.words import with_article
from .kernel_activity import as_kernel_work
from .mime import RUN_MIME, run_from_mime, run_mime_payload
from .retrace import Retracer, Scheduler, loop_scheduler
from .terminal import in_terminal, terminal_report

MODULE_NAME = "jupyter-tracejit"
#: the front end's npm version range this model speaks to (same release as the Python package)
MODULE_VERSION = "^" + __version__

STATUSES = ("idle", "tracing", "error")


#: in the ``options`` trait, which of the request's check input sets are on (one bool per set) stands where
#: ``check_inputs`` stands in TraceOptions: the explorer toggles sets, it cannot make new ones
CHECK_INPUTS_ENABLED = INPUT_SETS_KEY


@dataclass(frozen=True)
class _Bar:
    """The options bar of one back end (its registry row's options table): its keys (in order) and the one
    definition of each."""

    backend: str
    #: the capture, in words (``trace``): "unknown trace option"
    noun: str
    keys: tuple[str, ...]
    specs: Mapping[str, OptionSpec]


@functools.cache
def _bar(backend_name: str) -> _Bar:
    """The options bar of runs of ``backend_name``: the table's live options, ``check_inputs`` offered as one
    toggle per set of the request (:data:`CHECK_INPUTS_ENABLED`); read-only options are the front end's to show."""
    row = backend(backend_name)
    table = row.table()
    keys = tuple(row["key"] for row in table.bar_rows() if not row.get("read_only"))
    return _Bar(row.name, row.noun, keys, table.specs)


def _bar_of(run: TraceRun | None) -> _Bar:
    """A run's back end's bar; without a run, the first back end's (the registry's order: torch.jit.trace)."""
    return _bar(run.backend if run is not None else names()[0])


#: the keys of the ``options`` trait of an explorer on a trace, in the options bar's order
OPTION_KEYS = _bar("trace").keys
#: the keys of the ``options`` trait of an explorer on an export run (core/export/options.py ``EXPORT_LIVE``):
#: dynamic_shapes and check_inputs are shown read-only, a re-export keeps the request's
EXPORT_OPTION_KEYS = _bar("export").keys


def _option_problem(key: str, value: Any, n_check_inputs: int, bar: _Bar | None = None) -> str | None:
    """Why ``value`` is not allowed for option ``key`` (names the key, the value and what is allowed)."""
    bar = bar or _bar_of(None)
    if key not in bar.keys:
        return f"unknown {bar.noun} option {key!r} (value {value!r}); the options are: {', '.join(sorted(bar.keys))}"
    if key == CHECK_INPUTS_ENABLED:
        if isinstance(value, list) and len(value) == n_check_inputs and all(isinstance(v, bool) for v in value):
            return None
        return (
            f"option {key!r} must be a list of {n_check_inputs} true/false value(s), one per check input "
            f"set of the traced request (which sets to check with), got {value!r}"
        )
    problem = bar.specs[key].problem(value)
    if problem is None:
        return None
    return f"option {key!r} must be {problem.expects}, got {value!r}; {problem.hint}"


def _normalized(options: dict[str, Any]) -> dict[str, Any]:
    out = dict(options)
    if "check_tolerance" in out:
        out["check_tolerance"] = float(out["check_tolerance"])
    if CHECK_INPUTS_ENABLED in out:
        out[CHECK_INPUTS_ENABLED] = list(out[CHECK_INPUTS_ENABLED])
    return out


def _initial_options(source: dict[str, Any], n_check_inputs: int, bar: _Bar | None = None) -> dict[str, Any]:
    """The explorer's options from a request's (or a saved run's) options; a value we cannot offer falls back
    to the default, so a run traced with bad arguments can still be explored and fixed."""
    bar = bar or _bar_of(None)
    options: dict[str, Any] = {}
    for key in bar.keys:
        if key == CHECK_INPUTS_ENABLED:
            options[key] = [True] * n_check_inputs
        elif key in source and _option_problem(key, source[key], n_check_inputs, bar) is None:
            options[key] = source[key]
        else:
            options[key] = bar.specs[key].default
    return _normalized(options)


def default_options(n_check_inputs: int = 0) -> dict[str, Any]:
    """The ``options`` trait of an explorer whose request says nothing: every option at its default."""
    return _initial_options({}, n_check_inputs)


def _check_input_labels(run: TraceRun | None) -> tuple[list[Any], list[str]]:
    """The request's live check input sets (empty without a request) and one label per available set."""
    if run is None:
        return [], []
    request = run.request
    if request is not None:
        # a back end whose options have no check input sets (a compiled run's further inputs are its calls) has none
        sets = getattr(request.options, "check_inputs", None)
        if not isinstance(sets, (list, tuple)):
            return [], []
        return list(sets), [f"check_inputs[{i}]: {', '.join(describe_inputs(c))}" for i, c in enumerate(sets)]
    # a run loaded from JSON keeps only the descriptions: enough to label, not to re-trace
    described = run.options.get("check_inputs")
    if not isinstance(described, list):
        return [], []
    labels = [
        f"check_inputs[{i}]: {', '.join(map(str, d)) if isinstance(d, list) else d}" for i, d in enumerate(described)
    ]
    return [], labels


def _history_entry(run: TraceRun, options: dict[str, Any]) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "summary": run.summary(),
        "ok": run.ok,
        "verdict": run.verdict.label,
        "created": run.created,
        "options": run.options,
        "explorer_options": options,
    }


def _divergence_count(run: TraceRun | None) -> int:
    if run is None or run.check is None:
        return 0
    return sum(len(c.diff.divergences) for c in run.check.cases if c.diff is not None)


def _default_method(run: TraceRun | None) -> str:
    if run is None or not run.graphs:
        return ""
    return "forward" if "forward" in run.graphs else next(iter(run.graphs))


def _main_loop_scheduler() -> Scheduler | None:
    """Re-traces on the loop of the thread that made the explorer (a cell: the kernel's main thread), even when
    the front end's messages arrive on a subshell's thread (see :func:`.retrace.loop_scheduler`)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None  # no loop (a script): the Retracer's default runs the work at once
    return loop_scheduler(loop) if threading.current_thread() is threading.main_thread() else None


class TraceExplorer(ipywidgets.DOMWidget):
    """Explore a :class:`TraceRun` in a notebook: graph, warnings, check divergences, options, history.

    ``TraceExplorer(run)`` shows ``run``; when the run carries its request (``run.request``, set by
    ``tj.trace``), changing :attr:`options` re-traces after ``debounce`` seconds and shows the new run
    (:attr:`run` is always the run on screen). A finished trace is shown ``settle`` seconds after it ends, so that
    a cancel sent while the kernel was busy tracing is read first (:meth:`cancel`).
    ``scheduler`` (``(delay, fn) -> handle``) replaces the asyncio loop for tests and other event loops.
    """

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
    #: the method whose graph is shown (``forward`` or the first traced method)
    selected_method = Unicode("").tag(sync=True)
    #: id of the selected node in the selected method's graph; -1 for none
    selected_node = Int(-1).tag(sync=True)
    #: index into the run's divergences flattened case-major (``for case in check.cases: case.diff.divergences``)
    current_divergence = Int(-1).tag(sync=True)
    #: ``{"a", "b", "method", "graph_a", "graph_b", "diff"}`` comparing two history runs; ``{}`` for none
    comparison = Dict().tag(sync=True)

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
        self._bar = _bar_of(run)
        self._check_sets, labels = _check_input_labels(run)
        self._n_check_inputs = len(labels)
        source = self._request.options.as_dict() if self._request is not None else (run.options if run else {})
        initial = _initial_options(source, self._n_check_inputs, self._bar)
        self._applied_options = initial
        #: run_id -> the options bar's values that traced it (what picking it from the history puts back)
        self._traced_with: dict[str, dict[str, Any]] = {}
        #: set while the options are put back without asking for a re-trace (history pick, cancel)
        self._restoring_options = False
        self._retracer: Retracer[dict[str, Any], TraceRun] = Retracer(
            self._trace,
            on_start=self._on_trace_start,
            on_result=self._on_trace_result,
            on_error=self._on_trace_error,
            debounce=debounce,
            settle=settle,
            scheduler=scheduler if scheduler is not None else _main_loop_scheduler(),
        )
        if run is not None:
            self._history[run.run_id] = run
            self._traced_with[run.run_id] = initial
        super().__init__(
            run_json=run.to_json() if run is not None else {},
            html=run.to_html() if run is not None else "",
            runs=[_history_entry(r, self._options_of(r)) for r in self._history.values()],
            history_limit=history_limit,
            options=initial,
            check_input_labels=labels,
            live=self._request is not None,
            selected_method=_default_method(run),
            **kwargs,
        )
        self.on_msg(self._on_front_end_msg)
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

    def add_run(self, run: TraceRun, *, show: bool = True) -> None:
        """Put a run traced elsewhere into the history (e.g. the same model with other inputs), to compare."""
        if not isinstance(run, TraceRun):
            raise TypeError(f"add_run takes a TraceRun, got {type(run).__name__}")
        bar = _bar_of(run)
        if bar is not self._bar:
            if self._current is not None:
                raise ValueError(
                    f"add_run: this explorer shows {self._bar.backend} runs and the run is "
                    f"{with_article(run.backend)} run (their options differ); explore it on its own: tj.explore(run)"
                )
            # an empty explorer takes the options bar of its first run's back end
            self._bar = bar
            self._applied_options = {}
            self._restore_options(_initial_options(run.options, self._n_check_inputs, bar))
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
            problem = _option_problem(key, v, self._n_check_inputs, self._bar)
            if problem is not None:
                raise TraitError(problem)
        return _normalized(merged)

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
        count = _divergence_count(self._current)
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

    def _on_front_end_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        try:
            kind = content.get("type") if isinstance(content, dict) else None
            if kind == "retrace":
                self.retrace()
            elif kind == "cancel":
                self.cancel()
            elif kind == "show_run":
                self.show_run(content.get("run_id"))
            elif kind == "compare":
                self.compare(content.get("a"), content.get("b"), content.get("method", "forward"))
            else:
                raise ValueError(
                    f"unknown message type {kind!r} from the front end; "
                    "expected one of: retrace, cancel, show_run, compare"
                )
        except (ValueError, KeyError, RuntimeError, TypeError) as e:
            self._fail(str(e))
        except Exception as e:  # a bug of ours: show it, keep the details in the log, never raise into the kernel
            self.log.warning("trace explorer: handling %r failed", content, exc_info=True)
            self._fail(f"internal error: {type(e).__name__}: {e}")

    # -- re-tracing (called by the Retracer) ------------------------------------------------------------
    def _trace(self, options: dict[str, Any]) -> TraceRun:
        assert self._request is not None
        # the bar's options; the read-only ones (an export's dynamic_shapes and check inputs) stay the request's
        kwargs = {k: options[k] for k in self._bar.keys if k != CHECK_INPUTS_ENABLED}
        if CHECK_INPUTS_ENABLED in self._bar.keys:
            chosen = [c for c, on in zip(self._check_sets, options[CHECK_INPUTS_ENABLED], strict=True) if on]
            # none chosen: None, which checks with the example inputs as torch does by default
            kwargs["check_inputs"] = chosen or None
        with as_kernel_work():  # the kernel's Interrupt stops it, and the status bar says busy
            result: TraceRun = self._diffed(self._request.run(**kwargs))
        self._traced_with[result.run_id] = dict(options)
        return result

    def _diffed(self, run: TraceRun) -> TraceRun:
        """A re-trace of a diff's new side, diffed again against the same old run (the Diff view stays, now of
        the new capture); any other run as it is."""
        against = self._current.diff_against if self._current is not None else None
        if against is None or against.diff.old_run is None:
            return run
        return against.diff.with_new(run).explorer_run()

    def _on_trace_start(self) -> None:
        with self.hold_sync():
            self.status = "tracing"
            self.status_since = time.time()

    def _on_trace_result(self, run: TraceRun) -> None:
        with self.hold_sync():
            if run.error is not None and self._current is not None and self._current.error is None:
                # keep the last good run on screen; the failure is in the status and the history
                self._remember(run)
                self.status_message = str(run.error)
                self.status = "error"
                return
            self._show(run)
            self._remember(run)
            self.status_message = "" if run.error is None else str(run.error)
            self.status = "idle" if run.error is None else "error"

    def _on_trace_error(self, exc: BaseException) -> None:
        if isinstance(exc, KeyboardInterrupt):
            self._fail("re-trace interrupted: the run on screen is the one before it")
            return
        if isinstance(exc, SystemExit):
            self._fail(f"re-trace stopped: the traced code called exit ({exc.code!r}); the kernel keeps running")
            return
        self.log.warning("trace explorer: re-trace failed", exc_info=exc)
        self._fail(f"re-trace failed: {type(exc).__name__}: {exc}")

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

    def _fail(self, message: str) -> None:
        with self.hold_sync():
            self.status_message = message
            self.status = "error"

    def _clear_error(self) -> None:
        if self.status == "error":
            with self.hold_sync():
                self.status_message = ""
                self.status = "idle"

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
        return _initial_options(source, self._n_check_inputs, self._bar)

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
        method = self.selected_method if self.selected_method in run.graphs else _default_method(run)
        graph = run.graphs.get(method)
        node = self.selected_node if method == self.selected_method and graph is not None else -1
        if graph is None or node >= len(graph):
            node = -1
        divergence = self.current_divergence if self.current_divergence < _divergence_count(run) else -1
        with self.hold_sync():  # one state message for the whole switch
            # -1 is valid for any run, so the validators never see a selection of the old run on the new one
            self.selected_node = -1
            self.current_divergence = divergence
            self.selected_method = method
            self.selected_node = node
            self.run_json = run.to_json()
            self.html = run.to_html()

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
        self.runs = [_history_entry(r, self._options_of(r)) for r in self._history.values()]


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
