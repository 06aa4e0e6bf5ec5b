"""The export session: one ``torch.export.export`` call behind the capture seam (:class:`~..capture.Backend`), a
:class:`~..run.TraceRun` with ``backend == "export"`` out.

Internal for now (no public API calls it yet). Being a guest as the TorchScript session is: module mode, grad mode
and the module's buffers are restored by :func:`~..capture.guest`; torch's loggers, which print several kB of
partial graphs and guard tracebacks to stderr on every failing export, are captured for the call
(:func:`captured_torch_logs`) and put back as they were; the text is kept in :attr:`ExportSession.log`.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import torch

from ..capture import CAPTURE_LOCK, Steps, call_torch, drive, guest, stamp
from ..derived import cuda_devices_of
from ..errors import TraceError, error_from_exception
from ..graph import Frame
from ..inputs import describe_inputs, parameter_types
from ..progress import CHECKING, DRAFTING, EXPORTING, enter_phase
from ..run import Target, TraceRun
from ..source import attribute_to_caller
from ..target import target_of
from ..torch_logs import captured_torch_logs
from .advice import specialized_advice
from .check import check_budget, check_export
from .draft import draft_crashed, join_draft, offer
from .failures import DYNAMIC_SHAPES_MISMATCH, TREE_NAME, export_error
from .findings import export_findings
from .given import GivenInputs
from .graph import argument_names, graph_from_exported_program
from .options import ExportOptions
from .places import PlaceRecorder, env_of_exception, recording_places
from .records import DimAdvice, ExportReport
from .refusal import at_users_frame, refused_dims
from .report import report_of


# -- a function as a module ---------------------------------------------------------------------------------------
def as_module(fn: Callable[..., Any]) -> torch.nn.Module:
    """An ``nn.Module`` whose ``forward`` calls ``fn`` with its signature (export binds ``dynamic_shapes`` by the
    argument names), its class named after the function."""
    name = getattr(fn, "__name__", "function")
    if not name.isidentifier():
        name = "function"

    def forward(self: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    try:
        params = list(inspect.signature(fn).parameters.values())
        self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
        forward.__signature__ = inspect.Signature([self_param, *params])  # type: ignore[attr-defined]
    except (TypeError, ValueError):  # a builtin without a signature: export binds by position
        pass
    cls = type(name, (torch.nn.Module,), {"forward": forward, "__module__": getattr(fn, "__module__", __name__)})
    return cls()


# -- the session ----------------------------------------------------------------------------------------------------
class ExportSession(GivenInputs):
    """The ``torch.export`` back end (:class:`~..capture.Backend`): one export of a module or function."""

    name: ClassVar[str] = "export"

    def __init__(
        self,
        module: torch.nn.Module | Callable[..., Any],
        args: Any,
        kwargs: dict[str, Any] | None = None,
        *,
        dynamic_shapes: Any = None,
        strict: bool = False,
        module_mode: str = "as_is",
        no_grad: bool = False,
        caller: Frame | None = None,
        check_inputs: Sequence[Any] | None = None,
        check: bool = True,
        draft: str = "never",
    ) -> None:
        self.target: Target = target_of(module)
        #: the user's module, whose state the guest guard restores (None for a function)
        self.module = module if isinstance(module, torch.nn.Module) else None
        self.exported = self.module if self.module is not None else as_module(module)
        self.args: tuple[Any, ...] = args if isinstance(args, tuple) else (args,)
        self.kwargs = dict(kwargs or {})
        self.dynamic_shapes = dynamic_shapes
        self.strict = strict
        self.module_mode = module_mode
        self.no_grad = no_grad
        #: where the user asked for the export: the location of whatever happened entirely inside torch
        self.caller = caller
        #: the export check (:mod:`.check`): ``ep.module()`` against the Python code on these input sets and on the
        #: declared ranges' minimum, middle and maximum
        self.check_inputs = list(check_inputs) if check_inputs is not None else None
        self.check = check
        #: when to run ``torch.export.draft_export`` (its report; its graph when export fails): the request's
        #: ``draft`` option (:data:`~.options.DRAFT_CHOICES`); ``on_request`` offers it on a refusal
        self.draft = draft
        #: where the export's guards were made (:mod:`.places`), kept for the check's failing guards
        self.places: PlaceRecorder | None = None
        #: what torch logged during the export (the stderr text it would have printed), for a run.export section
        self.log = ""
        self.timings: dict[str, float] = {}
        #: how often the user's Python code ran: export runs it once (on fake tensors)
        self.python_runs = 0
        #: the options as the request recorded them (``dynamic_shapes="auto"`` and all), when a request made this
        self.recorded_options: dict[str, Any] | None = None

    def options(self) -> dict[str, Any]:
        """What the run records of the request (run.schema.json ``RecordedExportOptions``): what the request says
        (:attr:`recorded_options`, set by :func:`~.request.export`), else this session's own settings."""
        if self.recorded_options is not None:
            return self.recorded_options
        return ExportOptions(
            dynamic_shapes=self.dynamic_shapes,
            strict=self.strict,
            check_inputs=self.check_inputs,
            module_mode=self.module_mode,
            no_grad=self.no_grad,
        ).to_json()

    def run(self, started: float) -> TraceRun:
        """The whole session, the export call made from the driver's frame."""
        return drive(self.steps(started))

    def steps(self, started: float) -> Steps[TraceRun]:
        run = TraceRun(
            target=self.target,
            options=self.options(),
            backend=self.name,
            inputs={"forward": describe_inputs(self.args) + (describe_inputs(self.kwargs) if self.kwargs else [])},
        )
        try:
            with CAPTURE_LOCK, guest(self.module, self.module_mode, self.no_grad):
                enter_phase(EXPORTING)
                yield from self._export(run)
        except Exception as e:  # our own bug or a hostile object: record it, never take the kernel down
            run.error = error_from_exception(e, phase="internal")
        self._finish(run)
        return stamp(run, started)

    def draft_steps(self, run: TraceRun) -> Steps[TraceRun]:
        """The draft of a run this session's request made (``run.draft()``), joined to it: as :meth:`steps`, the
        draft only. An interrupt leaves the run as it was (it is joined only once the draft returns)."""
        python_runs = run.python_runs
        try:
            with CAPTURE_LOCK, guest(self.module, self.module_mode, self.no_grad):
                yield from self._draft(run, exported_ok=run.error is None)
        except Exception as e:  # our own bug: a note, the run as it was
            run.findings.append(draft_crashed(e, exported_ok=run.error is None))
        self._finish(run)
        run.python_runs = python_runs + self.python_runs
        return run

    def _finish(self, run: TraceRun) -> None:
        if self.caller is not None:
            for graph in run.graphs.values():
                attribute_to_caller(graph, self.caller)
        run.argument_names = {k: v for g in run.graphs.values() for k, v in argument_names(g).items()}
        run.parameters = parameter_types(self.module)
        run.python_runs = self.python_runs
        run.timings.update(self.timings)

    def _export(self, run: TraceRun) -> Steps[None]:
        refused = self._inputs_mismatch() or self._dim_out_of_range()
        if refused is not None:
            run.error = refused
            return
        call = (
            torch.export.export,
            (self.exported, self.args),
            {"kwargs": self.kwargs or None, "dynamic_shapes": self.dynamic_shapes, "strict": self.strict},
        )
        t0 = time.perf_counter()
        self.python_runs += 1
        ep = None
        advice: list[DimAdvice] = []
        with captured_torch_logs() as logs, recording_places() as places:
            self.places = places
            try:
                ep = yield from call_torch(call)
            except Exception as e:
                run.error, advice = self._refusal(e, places)
            finally:
                self.timings["export"] = time.perf_counter() - t0
        self.log = logs.text  # after the block: what torch printed to stderr is added when it ends
        if ep is None:
            # a failing export is where torch's log matters most
            run.records = failed = ExportReport(log=self.log, advice=advice)
            # a draft of a refused model shows what export would record; arguments it refused refuse it too
            export_refused = run.error is not None and run.error.phase == "export"
            if export_refused and self.draft in ("on_failure", "always"):
                yield from self._draft(run, exported_ok=False)
            elif export_refused and self.draft == "on_request" and run.error is not None and draft_exists():
                failed.draft_offer = offer(run.error)
            return
        t0 = time.perf_counter()
        graph = run.graphs["forward"] = graph_from_exported_program(ep)
        run.traced = ep
        self.timings["graph"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        run.records = report = report_of(ep, graph=graph, log=self.log, places=self.places)
        report.advice = specialized_advice(report, self.given_shapes(), self.module)
        run.findings.extend(export_findings(report, graph))
        self.timings["report"] = time.perf_counter() - t0
        if self.draft == "always":
            yield from self._draft(run, exported_ok=True)
        if self.check:
            enter_phase(CHECKING)
            t0 = time.perf_counter()
            run.check = check_export(
                ep,
                self.exported,
                self.args,
                self.kwargs,
                check_inputs=self.check_inputs,
                caller=self.caller,
                on_python_run=self._count_python_run,
                places=self.places,
                timings=self.timings,
                budget=check_budget(self.timings["export"]),
            )
            self.timings["check"] = time.perf_counter() - t0

    def _refusal(self, exc: BaseException, places: PlaceRecorder) -> tuple[TraceError, list[DimAdvice]]:
        """The run's error for what export raised: at the user's line (a library's line moved to the user's frame
        that called into it), the dims it refused located from the shape environment and advised
        (:mod:`.refusal`); an argument error when torch refused ``dynamic_shapes`` for not following the inputs."""
        error = export_error(exc, self.caller)
        if TREE_NAME in error.message and self.dynamic_shapes is not None and self._var_keyword(self._bound_inputs()):
            self._var_keyword_error(error)
            return error, []
        if DYNAMIC_SHAPES_MISMATCH.search(error.message):
            self._arguments_error(error)
            return error, []
        env = places.env if places.env is not None else env_of_exception(exc)
        advice = refused_dims(error, env, places, self.given_shapes(), self.module)
        if not advice:
            at_users_frame(error, exc)
        return error, advice

    def _count_python_run(self) -> None:
        self.python_runs += 1

    def _draft(self, run: TraceRun, *, exported_ok: bool) -> Steps[None]:
        """``torch.export.draft_export`` on the same inputs, joined to the run (:func:`~.draft.join_draft`): its report
        in ``run.export.draft``; when export failed, its graph (which defers what export refused to runtime checks)
        as the run's graph, the run's error saying export's failure. When the draft crashes (it does on
        ``torch.cond``) or reports what export did not need (guards on ``nn.TransformerEncoder``), export's own
        result stands and a ``draft_failure`` note says so."""
        if not draft_exists():
            return
        call = (
            torch.export.draft_export,
            (self.exported, self.args),
            {"kwargs": self.kwargs or None, "dynamic_shapes": self.dynamic_shapes, "strict": self.strict},
        )
        enter_phase(DRAFTING)
        t0 = time.perf_counter()
        self.python_runs += 1
        draft_ep = None
        crashed: BaseException | None = None
        # the draft runs the model on real inputs: the user's RNG is left as torch.export.export leaves it
        rng = torch.random.fork_rng(devices=cuda_devices_of((self.args, self.kwargs), [self.exported]))
        with captured_torch_logs() as logs, rng, recording_places() as places:
            try:
                draft_ep = yield from call_torch(call)
            except Exception as e:
                crashed = e
            finally:
                self.timings["draft"] = time.perf_counter() - t0
        report = run.records_as(ExportReport) or ExportReport(log=self.log)
        report.log = "\n".join(text for text in (report.log, logs.text) if text)
        run.records = report
        if draft_ep is None:
            if report.draft_offer is not None:
                report.draft_offer.status = "failed"
            run.findings.append(draft_crashed(crashed, exported_ok=exported_ok))
            return
        join_draft(run, draft_ep, report.log, exported_ok=exported_ok, places=places)


def draft_exists() -> bool:
    """Whether this torch has ``torch.export.draft_export``."""
    return hasattr(torch.export, "draft_export")


__all__ = ["ExportSession", "as_module"]
