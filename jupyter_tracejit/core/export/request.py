"""``tj.export(...)``: torch.export's arguments in, a :class:`~..run.TraceRun` out, never raising (as ``tj.trace``);
:class:`ExportRequest` keeps what was asked so an explorer can export again with other options. ``tj.compare``
puts a trace beside an export of the same model.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils import _pytree as pytree

from ..caller import calls_from, find_caller
from ..capture import drive
from ..capture_compare import RunComparison, compare_runs
from ..capture_diff import TraceComparison, compare_captures
from ..categories import BY_NAME
from ..derived import cuda_devices_of
from ..hazards import Finding
from ..registry import api
from ..request import ApiWords, ModelRequest, refusal
from ..run import TraceRun, display_names
from ..tracer_warnings import FROZEN
from ..verdict import first_line
from .check import check_input_set
from .options import AUTO, ExportOptions, as_args, export_support_problem
from .records import ExportReport
from .session import ExportSession


@dataclass(frozen=True)
class _Place:
    """Where an input was given: ``("arg", 3)`` or ``("kw", "mask")``."""

    how: str
    key: Any


def auto_dynamic_shapes(
    example: tuple[Any, ...],
    check_inputs: Sequence[Any],
    kwargs: Mapping[str, Any] | None = None,
    model: Any = None,
) -> Any:
    """torch's ``dynamic_shapes`` for ``dynamic_shapes="auto"``: every dim of a tensor input whose size differs
    between the example and any check input set (:func:`~.check.check_input_set`) becomes ``Dim.AUTO``; inputs with
    no such dim are ``None`` (static). By position (a tuple) for positional inputs only; with keyword inputs, by the
    forward's argument names as torch binds them (``**kwargs`` a dict of its own): a tuple cannot name them."""
    kwargs = dict(kwargs or {})
    places = [_Place("arg", i) for i in range(len(example))] + [_Place("kw", k) for k in kwargs]
    varying: dict[_Place, set[int]] = {p: set() for p in places}

    def value(place: _Place, args: tuple[Any, ...], kw: Mapping[str, Any]) -> Any:
        if place.how == "arg":
            return args[place.key] if place.key < len(args) else None
        return kw.get(place.key)

    for entry in check_inputs:
        other = check_input_set(entry)
        for place in places:
            a, b = value(place, example, kwargs), value(place, *other)
            if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dim() == b.dim():
                varying[place].update(d for d in range(a.dim()) if a.shape[d] != b.shape[d])

    def spec(place: _Place) -> Any:
        dims = varying[place]
        is_tensor = isinstance(value(place, example, kwargs), torch.Tensor)
        return {d: torch.export.Dim.AUTO for d in sorted(dims)} if dims and is_tensor else None

    if not kwargs:
        return tuple(spec(p) for p in places)
    forward = model.forward if isinstance(model, torch.nn.Module) else model
    try:  # each argument name bound to its input: what torch matches a dict of dynamic shapes against
        positional = [p for p in places if p.how == "arg"]
        bound = inspect.signature(forward).bind(*positional, **{p.key: p for p in places if p.how == "kw"})
    except (TypeError, ValueError):  # no signature to bind by: export itself says what does not match
        return None
    shapes: dict[str, Any] = {}
    for name, bound_to in bound.arguments.items():
        if isinstance(bound_to, dict):  # **kwargs
            shapes[name] = {k: spec(p) for k, p in bound_to.items()}
        elif isinstance(bound_to, tuple):  # *args
            shapes[name] = tuple(spec(p) for p in bound_to)
        else:
            shapes[name] = spec(bound_to)
    return shapes


@dataclass(frozen=True)
class ExportRequest(ModelRequest):
    """What a run was asked to do, with the live model and inputs: enough to export again."""

    options: ExportOptions = field(default_factory=ExportOptions)

    def api(self) -> Callable[..., TraceRun]:
        return export


_WORDS = ApiWords(
    "export",
    "torch.export captures",
    "Export",
    "example inputs",
    "export(model, (x,))",
    "Upgrade torch to export; tj.trace works with this torch.",
)


def export(
    model: Any,
    args: Any = (),
    kwargs: dict[str, Any] | None = None,
    *,
    dynamic_shapes: Any = None,
    strict: bool = False,
    check_inputs: Sequence[Any] | None = None,
    draft: str = "on_request",
    compare_trace: bool = False,
    module_mode: str = "as_is",
    no_grad: bool = False,
) -> TraceRun:
    """Export ``model`` like ``torch.export.export`` and return what it recorded as a :class:`TraceRun` with
    ``backend == "export"`` and the ``ExportedProgram`` as ``run.traced``. A plain function is wrapped in a module;
    a lone tensor is the one input. Never raises for a failure in the model or for bad arguments: see ``run.error``.
    """
    started = time.perf_counter()
    options = ExportOptions(dynamic_shapes, strict, check_inputs, draft, compare_trace, module_mode, no_grad)
    caller = find_caller()
    request = ExportRequest(model, as_args(args), kwargs, options, caller=caller)
    refused = refusal(request, ExportSession.name, export_support_problem(), args, _WORDS, started)
    if refused is not None:
        return refused
    session = session_for(request)
    # export records no Python frame per node (tj.trace writes its driver loop out for that): the shared driver
    run = drive(session.steps(started))
    run.request = request
    if compare_trace:
        compare_with_trace(run, model, request.args, kwargs, module_mode=module_mode, no_grad=no_grad)
    return run


def session_for(request: ExportRequest) -> ExportSession:
    """The session that exports what ``request`` asks (``dynamic_shapes="auto"`` made torch's ``Dim.AUTO`` s)."""
    o = request.options
    shapes = o.dynamic_shapes
    if shapes == AUTO:
        shapes = auto_dynamic_shapes(request.args, o.check_inputs or (), request.kwargs, request.target)
    session = ExportSession(
        request.target,
        request.args,
        dict(request.kwargs) if request.kwargs else None,
        dynamic_shapes=shapes,
        strict=o.strict,
        module_mode=o.module_mode,
        no_grad=o.no_grad,
        caller=request.caller,
        check_inputs=o.check_inputs,
        draft=o.draft,
    )
    session.recorded_options = o.to_json()
    return session


def draft_run(run: TraceRun) -> TraceRun:
    """``run.draft()`` of an export run: ``torch.export.draft_export`` on the run's request, joined to the run (its
    graph, report and located dims for a refused export; its report beside an accepted one); the run, changed in
    place, is returned. The draft's phase is ``draft-exporting``; an interrupt (the kernel's, the explorer's
    cancel) leaves the run as it was. A run that holds no live model (read from JSON or a file) cannot draft:
    ``ValueError`` says what to do instead."""
    if run.backend != ExportSession.name:
        raise ValueError(
            f"run.draft() drafts an export (torch.export.draft_export); this is a {run.backend} run: "
            "tj.export(model, args).draft()"
        )
    request = run.request
    if not isinstance(request, ExportRequest):
        raise ValueError(
            "run.draft() needs the run's live model and inputs: this run holds no live model (read from JSON or a "
            "file); export again with tj.export(model, args, ..., draft='on_failure') to get the draft with the run"
        )
    session = session_for(request)
    records = run.records_as(ExportReport)
    session.log = records.log if records is not None else ""
    started = time.perf_counter()
    with calls_from(request.caller):
        drive(session.draft_steps(run))
    run.timings["draft"] = time.perf_counter() - started
    o = request.options
    if o.compare_trace and run.compared is None and run.graph is not None:
        # the comparison a refused export could not make: against its draft, the refused line first
        run.findings = [f for f in run.findings if f.kind != "compare_trace"]
        with calls_from(request.caller):
            compare_with_trace(run, request.target, request.args, request.kwargs, module_mode=o.module_mode,
                               no_grad=o.no_grad)  # fmt: skip
    run.file_names = display_names(run.files())
    return run


def compare_with_trace(
    run: TraceRun, model: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any] | None, **options: Any
) -> None:
    """``compare_trace=True``: trace the same model on the same inputs (no check: the comparison is the point) and
    put how the two graphs correspond in ``run.compared``; when either side has no graph, a note says why."""
    trace = api("trace")  # the TorchScript back end's tj.trace, through the registry: back ends import no other

    by_name = keyword_inputs(model, args, kwargs) if kwargs else None
    if by_name is not None:  # torch.jit.trace takes positional or keyword inputs, never both: all by keyword
        args, kwargs = (), by_name
    # torch.jit.trace takes tensors only: Python values given by keyword (use_cache=False) are bound to the forward
    values = {k: v for k, v in (kwargs or {}).items() if not any(map(torch.is_tensor, pytree.tree_leaves(v)))}
    tensors = {k: v for k, v in (kwargs or {}).items() if k not in values}
    # the trace runs the model: the user's RNG is left as tj.export without compare_trace leaves it
    modules = [model] if isinstance(model, torch.nn.Module) else []
    rng = torch.random.fork_rng(devices=cuda_devices_of((args, kwargs), modules))
    with rng, python_values_bound(model, values) as target:
        traced = trace(target, args or None, example_kwarg_inputs=tensors or None, check_trace=False, strict=False,
                       **options)  # fmt: skip
    compare(traced, run)


@contextlib.contextmanager
def python_values_bound(model: Any, values: Mapping[str, Any]) -> Iterator[Any]:
    """``model`` with keyword ``values`` bound to its forward for the block: a module keeps its identity (a wrapper
    module would put every scope under its attribute's name), its ``forward`` shadowed on the instance and put
    back; a function is wrapped in one of its name and signature (torch.jit.trace cannot trace a partial)."""
    if not values:
        yield model
    elif isinstance(model, torch.nn.Module) and "forward" not in vars(model):
        model.forward = functools.partial(model.forward, **values)
        try:
            yield model
        finally:
            del model.forward
    else:  # a function (or a module whose instance has a forward of its own already: left alone)

        def bound(*args: Any, **kwargs: Any) -> Any:
            return model(*args, **kwargs, **values)

        bound.__name__ = getattr(model, "__name__", type(model).__name__)
        bound.__qualname__ = getattr(model, "__qualname__", bound.__name__)
        with contextlib.suppress(TypeError, ValueError):
            bound.__signature__ = inspect.signature(functools.partial(model, **values))  # type: ignore[attr-defined]
        yield bound


def keyword_inputs(model: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any] | None:
    """``args`` and ``kwargs`` as one dict by the forward's argument names (``**kwargs`` spread out), the form
    torch.jit.trace's ``example_kwarg_inputs`` takes; None when they do not bind by name (a ``*args`` forward)."""
    forward = model.forward if isinstance(model, torch.nn.Module) else model
    try:
        signature = inspect.signature(forward)
        bound = signature.bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        return None
    named: dict[str, Any] = {}
    for name, value in bound.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            if value:
                return None
        elif kind is inspect.Parameter.VAR_KEYWORD:
            named.update(value)
        else:
            named[name] = value
    return named


def _clipped(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters: torch's first line may hold a whole printed output (every tensor)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def compare(trace_run: TraceRun, export_run: TraceRun) -> TraceComparison | RunComparison | None:
    """How a trace and an export of the same model correspond (``tj.compare``): ops matched within each module
    scope, what differs grouped by line with its reason (:mod:`..capture_diff`). Kept in ``export_run.compared``
    (saved with the run); None, with a note on the export run, when either side has no graph. Any other pair of
    back ends (a compiled run beside a trace or an export) is compared by :func:`..capture_compare.compare_runs`,
    in either order."""
    if {trace_run.backend, export_run.backend} != {"trace", "export"}:
        return compare_runs(trace_run, export_run)
    if trace_run.backend != "trace" or export_run.backend != "export":
        raise ValueError(
            f"compare takes a trace run and an export run, in that order; got {trace_run.backend!r} and "
            f"{export_run.backend!r}: compare(tj.trace(model, args), tj.export(model, args))"
        )
    if trace_run.graph is None or export_run.graph is None:
        failed = "the trace" if trace_run.graph is None else "the export"
        why = trace_run.error if trace_run.graph is None else export_run.error
        export_run.findings.append(
            Finding(
                kind="compare_trace",
                severity="info",
                title="no trace-versus-export comparison",
                message=f"{failed} recorded no graph"
                + (f" ({why.type}: {_clipped(first_line(why.message))})" if why else ""),
                # the failed side's own hint says how to fix it (an HF model output the tracer cannot return, ...)
                hint="The comparison needs both graphs; fix what the error names first."
                + (f" {failed.capitalize()}'s hint: {why.hint}" if why is not None and why.hint else ""),
            )
        )
        export_run.compared = None
        return None
    frozen = {
        (w.file, w.line): BY_NAME[w.category].title for w in trace_run.warnings if w.category in FROZEN and w.file
    }
    callers = {
        (caller.file, caller.line)
        for run in (trace_run, export_run)
        if (caller := getattr(run.request, "caller", None)) is not None
    }
    export_run.compared = TraceComparison(
        trace=trace_run.graph,
        trace_summary=trace_run.summary(),
        comparison=compare_captures(trace_run.graph, export_run.graph, frozen_lines=frozen, callers=callers),
        export_run=export_run,
    )
    refused = export_run.error
    if refused is not None and refused.phase == "export" and refused.file:
        # the export's graph is its draft: what matches there says nothing of the line export refused
        export_run.compared.comparison.mark_refused(
            trace_run.graph, export_run.graph, refused.file, refused.line, refused.code
        )
    return export_run.compared


__all__ = ["ExportRequest", "auto_dynamic_shapes", "compare", "draft_run", "export", "session_for"]
