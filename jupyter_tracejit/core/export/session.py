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
from ..errors import TraceError, argument_error, error_from_exception
from ..graph import Frame
from ..hazards import Finding
from ..inputs import describe_inputs, parameter_types
from ..progress import CHECKING, DRAFTING, EXPORTING, enter_phase
from ..run import Target, TraceRun
from ..source import attribute_to_caller
from ..target import target_of
from ..torch_logs import captured_torch_logs
from ..words import plural
from .check import check_export
from .draft import draft_report, locate_refused_dim
from .failures import DYNAMIC_SHAPES_MISMATCH, TREE_NAME, export_error
from .findings import export_findings
from .graph import argument_names, graph_from_exported_program
from .options import ExportOptions
from .records import ExportReport
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
class ExportSession:
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
        #: ``draft`` option (:data:`~.options.DRAFT_CHOICES`)
        self.draft = draft
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
        if self.caller is not None:
            for graph in run.graphs.values():
                attribute_to_caller(graph, self.caller)
        run.argument_names = {k: v for g in run.graphs.values() for k, v in argument_names(g).items()}
        run.parameters = parameter_types(self.module)
        run.python_runs = self.python_runs
        run.timings.update(self.timings)
        return stamp(run, started)

    def _dim_out_of_range(self) -> TraceError | None:
        """dynamic_shapes marking a dim a tensor input does not have (``{'x': {2: Dim(...)}}`` for a 2-dim ``x``):
        torch fails on it with a bare ``IndexError``. Checked where the structure lines up with the inputs (by
        argument name, or a tuple by position); anything else is left to torch."""
        shapes = self.dynamic_shapes
        bound = self._bound_inputs()
        if isinstance(shapes, dict):
            pairs = [(name, bound.get(name), spec) for name, spec in shapes.items()]
        elif isinstance(shapes, (tuple, list)) and len(shapes) == len(bound):
            pairs = [(name, value, spec) for (name, value), spec in zip(bound.items(), shapes, strict=True)]
        else:
            return None
        for name, value, spec in pairs:
            if not isinstance(value, torch.Tensor) or not isinstance(spec, dict):
                continue
            bad = [d for d in spec if isinstance(d, int) and not -value.dim() <= d < value.dim()]
            if bad:
                sizes = " x ".join(str(n) for n in value.shape) or "a 0-dim tensor"
                return argument_error(
                    f"dynamic_shapes marks dim {', '.join(map(str, bad))} of {name}, which has "
                    f"{plural(value.dim(), 'dim')} ({sizes})",
                    f"Number the dims of {name} from 0 to {value.dim() - 1}: for these inputs, "
                    f"{self.expected_dynamic_shapes()}.",
                    tag="dynamic_shapes_mismatch",
                )
        return None

    def _inputs_mismatch(self) -> TraceError | None:
        """Example inputs the forward cannot take (three for a forward of one): torch's ``TypeError`` raised inside
        its export would read as the model's own failure."""
        try:
            signature = inspect.signature(self.exported.forward)
        except (TypeError, ValueError, AttributeError):
            return None
        try:
            signature.bind(*self.args, **self.kwargs)
        except TypeError as e:
            forward = f"{type(self.exported).__name__}.forward"
            takes = [
                p.name
                for p in signature.parameters.values()
                if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
            ]
            given = plural(len(self.args), "positional input") + (
                f" and {plural(len(self.kwargs), 'keyword input')} ({', '.join(self.kwargs)})" if self.kwargs else ""
            )
            return argument_error(
                f"{forward} takes {', '.join(takes) or 'no inputs'}, but the example inputs are {given}: {e}",
                f"Give one example input per argument of {forward}: ({', '.join(takes)}{',' if len(takes) == 1 else ''}"
                ") as the inputs, or by keyword (kwargs=...).",
                tag="inputs_mismatch",
            )
        return None

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
        with captured_torch_logs() as logs:
            try:
                ep = yield from call_torch(call)
            except Exception as e:
                run.error = export_error(e, self.caller)
                if (
                    TREE_NAME in run.error.message
                    and self.dynamic_shapes is not None
                    and self._var_keyword(self._bound_inputs())
                ):
                    self._var_keyword_error(run.error)
                elif DYNAMIC_SHAPES_MISMATCH.search(run.error.message):
                    self._arguments_error(run.error)
            finally:
                self.timings["export"] = time.perf_counter() - t0
        self.log = logs.text  # after the block: what torch printed to stderr is added when it ends
        if ep is None:
            run.records = ExportReport(log=self.log)  # a failing export is where torch's log matters most
            # a draft of a refused model shows what export would record; arguments it refused refuse it too
            if self.draft in ("on_failure", "always") and run.error is not None and run.error.phase == "export":
                yield from self._draft(run, exported_ok=False)
            return
        t0 = time.perf_counter()
        graph = run.graphs["forward"] = graph_from_exported_program(ep)
        run.traced = ep
        self.timings["graph"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        run.records = report = report_of(ep, graph=graph, log=self.log)
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
            )
            self.timings["check"] = time.perf_counter() - t0

    def _bound_inputs(self) -> dict[str, Any]:
        """The inputs by the forward's argument names, as torch binds them (``arg0``... where that fails)."""
        try:
            return dict(inspect.signature(self.exported.forward).bind(*self.args, **self.kwargs).arguments)
        except (TypeError, ValueError):
            return {f"arg{i}": a for i, a in enumerate(self.args)} | dict(self.kwargs)

    def expected_dynamic_shapes(self) -> str:
        """The structure ``dynamic_shapes`` must have for these inputs, a ``None`` per size (``{'x': {0: None,
        1: None}}``, by the forward's argument names), then each tensor's sizes (``x is 3 x 4``)."""
        bound = self._bound_inputs()

        sizes: list[str] = []

        def shape_of(value: Any, name: str) -> str:
            # a **kwargs argument binds a dict and *args a tuple: torch wants their structure, nested
            if isinstance(value, dict):
                return "{" + ", ".join(f"{k!r}: {shape_of(v, f'{name}[{k!r}]')}" for k, v in value.items()) + "}"
            if isinstance(value, tuple):
                inner = [shape_of(v, f"{name}[{i}]") for i, v in enumerate(value)]
                return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
            if isinstance(value, torch.Tensor):
                sizes.append(f"{name} is {' x '.join(str(n) for n in value.shape) or 'a 0-dim tensor'}")
                return "{" + ", ".join(f"{d}: None" for d in range(value.dim())) + "}" if value.dim() else "None"
            return "None"

        structure = "{" + ", ".join(f"{name!r}: {shape_of(v, name)}" for name, v in bound.items()) + "}"
        return structure + (f" ({', '.join(sizes)})" if sizes else "")

    def _var_keyword(self, bound: dict[str, Any]) -> str:
        """The name of the forward's ``**kwargs`` argument when these inputs (``bound``: :meth:`_bound_inputs`) fill
        it; ``""`` when none does."""
        try:
            parameters = inspect.signature(self.exported.forward).parameters.values()
        except (TypeError, ValueError):
            return ""
        name = next((p.name for p in parameters if p.kind is inspect.Parameter.VAR_KEYWORD), "")
        return name if name and bound.get(name) else ""

    def _var_keyword_error(self, error: TraceError) -> None:
        """dynamic_shapes for a forward whose inputs come through ``**kwargs``, nested as torch documents it: torch
        2.13 fails there ("Must provide a tree_name", an assertion inside its own code; 2.14 exports). What works on
        every version is a forward that names the inputs."""
        bound = self._bound_inputs()
        name = self._var_keyword(bound)
        given = list(bound[name])
        forward = f"{type(self.exported).__name__}.forward"
        error.phase, error.tag = "arguments", "dynamic_shapes_kwargs"
        error.message = (
            f"dynamic_shapes cannot reach inputs {forward} takes through **{name} ({', '.join(given)}): torch "
            f"{torch.__version__} refused it\n{error.message}"  # torch's own words kept below the first line
        )
        named_shapes = ", ".join(
            f"{k!r}: " + ("{0: Dim('name', min=..., max=...)}" if i == 0 else "None") for i, k in enumerate(given)
        )
        error.hint = (
            f"torch.export applies dynamic_shapes to a forward's named arguments, not to what **{name} collects. Wrap "
            f"the model in a small nn.Module whose forward names them, `def forward(self, {', '.join(given)}): return "
            f"self.model({', '.join(f'{k}={k}' for k in given)})`, and export that with "
            f"dynamic_shapes={{{named_shapes}}} (each input named; a Dim where a size varies); or leave "
            "dynamic_shapes out (a static export)."
        )

    def _arguments_error(self, error: TraceError) -> None:
        """torch refused ``dynamic_shapes`` for not matching the inputs: an argument error naming what does not
        match where it can (a name the forward does not take) and showing the structure it needs."""
        error.phase, error.tag = "arguments", "dynamic_shapes_mismatch"
        bound = self._bound_inputs()
        names = list(bound)
        if isinstance(self.dynamic_shapes, dict):
            unknown = [k for k in self.dynamic_shapes if k not in names]
            var_keyword = self._var_keyword(bound)
            collected = [k for k in unknown if var_keyword and k in bound[var_keyword]]
            try:
                parameters = set(inspect.signature(self.exported.forward).parameters)
            except (TypeError, ValueError):
                parameters = set()
            # an argument the forward takes but these inputs leave out is not "not an argument"
            not_given = [k for k in unknown if k in parameters]
            forward = f"{type(self.exported).__name__}.forward"
            if collected:
                error.message = (
                    f"dynamic_shapes names {', '.join(map(repr, collected))}, which {forward} takes through "
                    f"**{var_keyword}: torch wants {'it' if len(collected) == 1 else 'them'} nested under "
                    f"{var_keyword!r}, with every input named"
                )
            elif not_given:
                error.message = (
                    f"dynamic_shapes names {', '.join(map(repr, not_given))}, which {forward} takes but these inputs "
                    f"do not give (its inputs: {', '.join(names) or 'none'}): give "
                    f"{'it an example input' if len(not_given) == 1 else 'them example inputs'} (kwargs=...) or "
                    f"leave {'it' if len(not_given) == 1 else 'them'} out of dynamic_shapes"
                )
            elif unknown:
                error.message = (
                    f"dynamic_shapes names {', '.join(map(repr, unknown))}, which "
                    f"{'is not an argument' if len(unknown) == 1 else 'are not arguments'} of "
                    f"{forward} (its inputs: {', '.join(names) or 'none'})"
                )
        # --dynamic NAME:DIM names a tensor argument: no example when the tensors come in a **kwargs or a container
        tensor = next((name for name, value in bound.items() if isinstance(value, torch.Tensor)), None)
        flag = f' (in %export and on the command line: --dynamic "{tensor}:0=name[min,max]")' if tensor else ""
        error.hint = (
            "dynamic_shapes must follow the inputs, by argument name (or as a tuple by position). For these inputs: "
            f"{self.expected_dynamic_shapes()}; put torch.export.Dim('name', min=..., max=...) or Dim.AUTO "
            f"where a size may vary{flag}."
        )

    def _count_python_run(self) -> None:
        self.python_runs += 1

    def _draft(self, run: TraceRun, *, exported_ok: bool) -> Steps[None]:
        """``torch.export.draft_export`` on the same inputs: its report in ``run.export.draft``; when export failed,
        its graph (which defers what export refused to runtime checks) as the run's graph, the run's error saying
        export's failure. When the draft crashes (it does on ``torch.cond``) or reports what export did not need
        (guards on ``nn.TransformerEncoder``), export's own result stands and a ``draft_failure`` note says so."""
        draft_export = getattr(torch.export, "draft_export", None)
        if draft_export is None:
            return
        call = (
            draft_export,
            (self.exported, self.args),
            {"kwargs": self.kwargs or None, "dynamic_shapes": self.dynamic_shapes, "strict": self.strict},
        )
        enter_phase(DRAFTING)
        t0 = time.perf_counter()
        self.python_runs += 1
        draft_ep = None
        # the draft runs the model on real inputs: the user's RNG is left as torch.export.export leaves it
        rng = torch.random.fork_rng(devices=cuda_devices_of((self.args, self.kwargs), [self.exported]))
        with captured_torch_logs() as logs, rng:
            try:
                draft_ep = yield from call_torch(call)
            except Exception as e:
                crashed: BaseException | None = e
            else:
                crashed = None
            finally:
                self.timings["draft"] = time.perf_counter() - t0
        report = run.records_as(ExportReport) or ExportReport(log=self.log)
        report.log = "\n".join(text for text in (report.log, logs.text) if text)
        run.records = report
        if crashed is not None or draft_ep is None:
            what = f"{type(crashed).__name__}: {str(crashed).splitlines()[0] if str(crashed) else ''}"
            run.findings.append(
                Finding(
                    kind="draft_failure",
                    severity="info",
                    title="draft_export could not run",
                    message=f"torch.export.draft_export raised {what.strip()}; "
                    + ("the export itself succeeded and stands." if exported_ok else "export's own error stands."),
                    hint="Nothing to do for the draft; torch's draft export does not handle every program "
                    "(torch.cond, for one).",
                )
            )
            return
        failures = draft_report(draft_ep) or []
        report.draft = failures
        if exported_ok:
            if failures:
                run.findings.append(
                    Finding(
                        kind="draft_failure",
                        severity="info",
                        title="draft_export reported what export did not need",
                        message=f"draft_export reported {len(failures)} item(s) "
                        f"({', '.join(sorted({f.failure_type for f in failures}))}) on a program export "
                        "accepted as it is: the export's own result stands.",
                        hint="Nothing to do: the export succeeded; the draft's items are in run.export.draft.",
                    )
                )
            return
        # export failed: the draft's graph is what export would have recorded, with its failures deferred
        graph = run.graphs["forward"] = graph_from_exported_program(draft_ep)
        drafted = report_of(draft_ep, graph=graph, log=report.log)
        drafted.draft = failures
        run.records = drafted
        if run.error is not None:
            locate_refused_dim(run.error, drafted)


__all__ = ["ExportSession", "as_module"]
