"""The compile session: the model run under ``torch.compile`` behind the capture seam (:class:`~..capture.Backend`),
a :class:`~..run.TraceRun` with ``backend == "compile"`` out.

The model is compiled once with a recording back end (:class:`~.recorder.Recorder`) and called with each input set
in order (the example inputs, then ``calls``), as a user's code would call ``torch.compile(model)``: the graphs,
breaks and recompilations are what torch does for those calls. With the check on, each call is first made eagerly
(the same random state, the module's buffers put back after) and the compiled call's outputs are compared with
the eager ones. A guest: module mode, grad mode and buffers are restored by :func:`~..capture.guest`, torch's
random state by ``fork_rng`` around each call, and dynamo's state by :mod:`.hygiene`.
"""

from __future__ import annotations

import contextlib
import inspect
import re
import time
import traceback
import types
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import torch
from torch.utils import _pytree as pytree

from ..capture import CAPTURE_LOCK, Steps, call_torch, guest, stamp
from ..check import CheckCase, CheckReport, OutputComparison
from ..compare import compare_outputs
from ..errors import TraceError, error_from_exception
from ..graph import Frame
from ..inputs import describe_inputs, parameter_types
from ..module_state import ModuleState
from ..progress import CHECKING, enter_phase
from ..run import Target, TraceRun
from ..source import attribute_to_caller, source_line
from ..target import target_of
from .breaks import split_reason, user_line, user_stack
from .findings import compile_findings
from .hygiene import DynamoState, captured_dynamo_logs, fresh_entry, optimize_options, recompile_limit
from .options import CompileOptions
from .recorder import Recorder
from .records import GraphBreak
from .report import build

#: the phase a listener hears while the model runs compiled (:mod:`..progress`)
COMPILING = "compiling"
#: the check's tolerance: torch.jit.trace's default ``check_tolerance`` (a relative one, as the trace check's);
#: inductor reorders float math, so its outputs get 100 times that
TOLERANCE = 1e-5
INDUCTOR_TOLERANCE = 1e-3


def call_inputs(entry: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """One entry of ``calls`` as (positional, keyword) inputs: a tuple is the positional inputs, a dict the
    keyword ones."""
    if isinstance(entry, Mapping):
        return (), dict(entry)
    return tuple(entry), {}


def _bound(fn: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any], module: Any) -> dict[str, Any] | None:
    """The call's inputs by the top function's argument names (with ``self``), as dynamo's guards read them."""
    try:
        target = type(module).forward if isinstance(module, torch.nn.Module) else fn
        bound = inspect.signature(target).bind(
            *((module,) if isinstance(module, torch.nn.Module) else ()), *args, **kwargs
        )
        bound.apply_defaults()
    except (TypeError, ValueError):
        return None
    return dict(bound.arguments)


def _tensors(value: Any) -> list[torch.Tensor]:
    return [leaf for leaf in pytree.tree_leaves(value) if isinstance(leaf, torch.Tensor)]


_FROM_USER_CODE = re.compile(r"\n\s*from user code:\s*\n", re.I)


def _unsupported(exc: BaseException) -> bool:
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"Unsupported", "UserError", "UncapturedHigherOrderOpError"})


def _dynamo_frames(exc: BaseException) -> list[tuple[str, int, str]]:
    """The user-code stack dynamo attached to an exception it raised while tracing (its ``real_stack``, else the
    frames its text names), outermost first; empty for an exception that names none."""
    frames: list[tuple[str, int, str]] = []
    for f in getattr(exc, "real_stack", None) or []:
        frames.append((str(getattr(f, "filename", "")), int(getattr(f, "lineno", 0) or 0), str(getattr(f, "name", ""))))
    if not frames:
        for m in re.finditer(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)', str(exc)):
            frames.append((m.group("file"), int(m.group("line")), m.group("func")))
    return frames


def fullgraph_error(exc: BaseException, caller: Frame | None) -> tuple[TraceError, GraphBreak | None]:
    """``fullgraph=True`` refused a break: the run's error at the break's line, with torch's explanation and hints,
    and the break as a record."""
    text = str(exc)
    reason = _FROM_USER_CODE.split(text, maxsplit=1)[0].strip()
    stack = user_stack(_dynamo_frames(exc))
    at = user_line(stack)
    parts = split_reason(reason)
    cause = parts[0] if parts else None
    error = TraceError(
        type=type(exc).__name__,
        message=(cause.gb_type + (f": {cause.explanation}" if cause.explanation else "")) if cause else reason,
        phase="compile",
        tag="graph_break",
        hint=(
            "fullgraph=True turns the first graph break into this error. "
            + (
                " ".join(cause.hints)
                if cause is not None and cause.hints
                else "Rewrite the line so dynamo can trace it."
            )
            + " Compile with fullgraph=False to see every break and the graphs between them."
        ),
        traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
    )
    if at is not None:
        error.file, error.line, error.code = at.file, at.line, at.code or source_line(at.file, at.line)
    elif caller is not None:
        error.file, error.line, error.code = caller.file, caller.line, caller.code
    gb = None
    if at is not None and cause is not None:
        gb = GraphBreak(
            file=at.file,
            line=at.line,
            code=error.code,
            func=at.func,
            reason=reason,
            gb_type=cause.gb_type,
            gb_code=cause.gb_code,
            explanation=cause.explanation,
            hints=list(cause.hints),
            stack=stack,
            package=stack[-1].package if stack and stack[-1].package not in ("", "torch") else "",
        )
    return error, gb


def call_error(exc: BaseException, backend: str, caller: Frame | None) -> TraceError:
    """The run's error for an exception a compiled call raised (the model's own, or dynamo's or the back end's)."""
    error = error_from_exception(exc, phase="compile")
    text = f"{error.type}: {error.message}"
    # an error dynamo raised while tracing the model (its fake-tensor run of a line) is at the user's line it names
    at = user_line(user_stack(_dynamo_frames(exc)))
    if at is not None:
        error.file, error.line, error.code = at.file, at.line, at.code or source_line(at.file, at.line)
    elif not error.file and caller is not None:
        error.file, error.line, error.code = caller.file, caller.line, caller.code
    if "BackendCompilerFailed" in text or "InductorError" in text or "CppCompileError" in text:
        error.tag = "backend_failed"
        error.hint = (
            f"The {backend!r} back end failed to compile a graph"
            + (" (inductor needs a working C++ compiler for the CPU)" if backend == "inductor" else "")
            + ": compile with backend='eager' to see the graphs, breaks and recompilations without it."
        )
    elif not error.hint:
        error.hint = (
            "The model raised while it ran under torch.compile: fix the error at the line shown (the eager model "
            "raises there too unless the line is one dynamo changes), or check that the inputs are what it expects."
        )
    return error


def simple_attributes(module: torch.nn.Module | None) -> dict[tuple[str, str], Any]:
    """``(module path, attribute) -> value`` of every plain Python attribute (a number, a string, a bool) of the
    model's modules: what a forward that writes ``self.calls += 1`` changes."""
    found: dict[tuple[str, str], Any] = {}
    if module is None:
        return found
    try:
        for path, m in module.named_modules():
            for name, value in vars(m).items():
                if name.startswith("_") or name == "training":
                    continue
                if isinstance(value, (bool, int, float, str)):
                    found[(path, name)] = value
    except Exception:  # a module whose attributes cannot be listed
        return found
    return found


class RandomState:
    """torch's random state when a call starts (the CPU's and each CUDA device's the call uses): the eager and the
    compiled call each start from it (dropout draws the same numbers), and the user's state is as it was after."""

    def __init__(self, devices: list[int]) -> None:
        self.devices = devices
        self.cpu = torch.get_rng_state()
        self.cuda = [torch.cuda.get_rng_state(d) for d in devices]

    @classmethod
    def of(cls, model: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> RandomState:
        tensors = _tensors((args, dict(kwargs)))
        if isinstance(model, torch.nn.Module):
            with contextlib.suppress(Exception):
                tensors += list(model.parameters()) + list(model.buffers())
        devices = sorted({t.device.index or 0 for t in tensors if t.device.type == "cuda"})
        return cls(devices)

    @contextlib.contextmanager
    def same(self) -> Iterator[None]:
        with torch.random.fork_rng(devices=self.devices):
            torch.set_rng_state(self.cpu)
            for device, state in zip(self.devices, self.cuda, strict=True):
                torch.cuda.set_rng_state(state, device)
            yield


def restore_attributes(module: torch.nn.Module | None, saved: Mapping[tuple[str, str], Any]) -> None:
    """Put the plain attributes :func:`simple_attributes` saved back (the eager check's run wrote them too)."""
    if module is None:
        return
    for (path, name), value in saved.items():
        with contextlib.suppress(Exception):
            owner = module.get_submodule(path) if path else module
            if vars(owner).get(name, value) != value:
                setattr(owner, name, value)


class CompileSession:
    """The ``torch.compile`` back end (:class:`~..capture.Backend`): one model compiled and called."""

    name: ClassVar[str] = "compile"

    def __init__(
        self,
        model: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any] | None,
        options: CompileOptions,
        *,
        caller: Frame | None = None,
        recorded_options: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.target: Target = target_of(model)
        self.module = model if isinstance(model, torch.nn.Module) else None
        self.args = args
        self.kwargs = dict(kwargs or {})
        self.options = options
        self.caller = caller
        self.recorded_options = recorded_options or options.to_json()
        self.timings: dict[str, float] = {}
        self.python_runs = 0
        #: ``(module path, attribute, before, after)`` of plain attributes the model's code changed while it ran
        self.changed_attributes: list[tuple[str, str, Any, Any]] = []

    def steps(self, started: float) -> Steps[TraceRun]:
        run = TraceRun(
            target=self.target,
            options=self.recorded_options,
            backend=self.name,
            inputs={"forward": describe_inputs(self.args) + (describe_inputs(self.kwargs) if self.kwargs else [])},
        )
        try:
            with CAPTURE_LOCK, guest(self.module, self.options.module_mode, self.options.no_grad):
                enter_phase(COMPILING)
                yield from self._compile(run)
        except Exception as e:  # our own bug or a hostile object: record it, never take the kernel down
            run.error = error_from_exception(e, phase="internal")
        if self.caller is not None:
            for graph in run.graphs.values():
                attribute_to_caller(graph, self.caller)
        run.parameters = parameter_types(self.module)
        run.python_runs = self.python_runs
        run.timings.update(self.timings)
        return stamp(run, started)

    def _inputs(self) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        return [(self.args, self.kwargs)] + [call_inputs(c) for c in (self.options.calls or ())]

    def _compile(self, run: TraceRun) -> Steps[None]:
        options = self.options
        inputs = self._inputs()
        recorder = Recorder(options.backend)
        state = DynamoState()
        cases: list[CheckCase] = []
        limit = recompile_limit()
        before = simple_attributes(self.module)
        fullgraph_break: GraphBreak | None = None
        made = 0
        top: types.CodeType | None = None
        t0 = time.perf_counter()
        try:
            with captured_dynamo_logs() as logs, fresh_entry(self.model) as (target, fresh):
                top = recorder.top = fresh
                compiled = torch._dynamo.optimize(
                    recorder,
                    nopython=options.fullgraph,
                    dynamic=options.dynamic,
                    guard_fail_fn=recorder.guard_failed,
                    **optimize_options(),
                )(target)
                for i, (args, kwargs) in enumerate(inputs):
                    recorder.call = logs.call = i
                    recorder.locals = _bound(target, args, kwargs, self.module)
                    rng = RandomState.of(self.model, args, kwargs)
                    expected, eager_error = self._eager(args, kwargs, rng) if options.check else (None, None)
                    with rng.same():
                        self.python_runs += 1
                        try:
                            actual = yield from call_torch((compiled, args, kwargs))
                        except Exception as e:
                            if options.fullgraph and _unsupported(e):
                                run.error, fullgraph_break = fullgraph_error(e, self.caller)
                            else:
                                run.error = call_error(e, options.backend, self.caller)
                            break
                    made = i + 1
                    if i == 0:
                        self._note_changed_attributes(before)
                    if options.check:
                        cases.append(self._case(i, args, kwargs, expected, actual, eager_error))
                self.timings["compile"] = time.perf_counter() - t0
                t1 = time.perf_counter()
                built = build(
                    recorder,
                    logs.breaks,
                    logs.warnings,
                    model=self.model,
                    top=top,
                    calls=max(made, 1),
                    dynamic=options.dynamic,
                    backend=options.backend,
                    limit=limit,
                )
                built.report.log = logs.text
                del compiled
        finally:
            state.restore(recorder, top)
        report = built.report
        report.unknown.extend(state.notes)
        if fullgraph_break is not None and not any(
            (b.file, b.line) == (fullgraph_break.file, fullgraph_break.line) for b in report.graph_breaks
        ):
            report.graph_breaks.append(fullgraph_break)
        run.graphs = built.graphs
        run.records = report
        if options.check:
            run.check = CheckReport(cases=cases, tolerance=self._tolerance())
        run.findings.extend(
            compile_findings(
                report,
                run.graphs,
                dynamic=options.dynamic,
                changed=self.changed_attributes,
                calls=self._inputs(),
                fullgraph=options.fullgraph,
            )
        )
        self.timings["report"] = time.perf_counter() - t1

    def _eager(
        self, args: tuple[Any, ...], kwargs: Mapping[str, Any], rng: RandomState
    ) -> tuple[Any, BaseException | None]:
        """The check's eager call (the outputs, or what it raised), from the same random state as the compiled
        call, the module's buffers and plain attributes put back after."""
        enter_phase(CHECKING)
        snapshot = ModuleState([self.module]) if self.module is not None else None
        attributes = simple_attributes(self.module)
        expected: Any = None
        eager_error: BaseException | None = None
        with rng.same():
            self.python_runs += 1
            try:
                expected = self.model(*args, **kwargs)
            except Exception as e:
                eager_error = e
        if snapshot is not None:
            snapshot.restore_buffers()
        restore_attributes(self.module, attributes)
        enter_phase(COMPILING)
        return expected, eager_error

    def _note_changed_attributes(self, before: Mapping[tuple[str, str], Any]) -> None:
        """The plain attributes the first compiled call changed (a forward that writes ``self.calls += 1``)."""
        if self.module is None:
            return
        after = simple_attributes(self.module)
        self.changed_attributes = [
            (path, name, value, after[(path, name)])
            for (path, name), value in before.items()
            if (path, name) in after and after[(path, name)] != value
        ]

    def _tolerance(self) -> float:
        return INDUCTOR_TOLERANCE if self.options.backend == "inductor" else TOLERANCE

    def _case(
        self,
        index: int,
        args: tuple[Any, ...],
        kwargs: Mapping[str, Any],
        expected: Any,
        actual: Any,
        eager_error: BaseException | None,
    ) -> CheckCase:
        described = describe_inputs(args) + (describe_inputs(dict(kwargs)) if kwargs else [])
        case = CheckCase(index=index, method="forward", label=f"call {index}", inputs=described)
        if eager_error is not None:
            # the eager model raised where the compiled one did not: they disagree
            case.exception = error_from_exception(eager_error, phase="check")
            return case
        want, got = _tensors(expected), _tensors(actual)
        if len(want) != len(got):
            case.outputs.append(
                OutputComparison(
                    index=0,
                    against="python",
                    ok=False,
                    message=f"the compiled model returned {len(got)} tensors, the eager model {len(want)}",
                )
            )
            return case
        case.outputs = compare_outputs(got, want, "python", self._tolerance())
        return case


__all__ = ["COMPILING", "CompileSession", "call_error", "call_inputs", "fullgraph_error"]
