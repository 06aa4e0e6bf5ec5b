"""The check of a trace, as the TorchScript session runs it (:class:`CheckSteps`, one of the session's bases): each set
of check inputs re-traced and run, outputs compared and graphs diffed (:mod:`.check`), and the warnings torch's own
check would emit (an output mismatch, nondeterministic nodes) recorded and placed where the graphs first differ."""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING, Any

import torch

from ..check import CheckCase, CheckReport
from ..errors import TraceError, argument_error, error_from_exception
from ..graph import Frame, Graph
from ..inputs import clone_inputs, describe_inputs
from ..run import TraceRun
from ..tracer_warnings import TraceWarning
from .calls import Steps, call_torch, own_compilation_unit
from .check import check_graphs, run_outputs, torch_mismatch_message
from .facts import nondeterministic_warning
from .scope_and_stack import parse_stack

if TYPE_CHECKING:
    from collections.abc import Callable

    from .calls import TraceCall
    from .check import MethodUnderCheck
    from .plan import TracePlan
    from .warning_recorder import WarningRecorder


class CheckSteps:
    """The session's check (what :class:`~.session.TraceSession` declares for it is typed below)."""

    plan: TracePlan
    recorder: WarningRecorder
    caller: Frame | None
    python_runs: int
    methods: dict[str, MethodUnderCheck]
    method_of_phase: dict[str, str]
    nondeterministic_ops: dict[str, tuple[list[str], str]]

    if TYPE_CHECKING:

        def _timed(self, key: str, start: float) -> None: ...
        def _location(self) -> tuple[str, int]: ...
        def _trace_call(self, target: Any, inputs: Any, *, methods: bool, for_check: bool = False) -> TraceCall: ...
        def _runner(self, fn: Callable[..., Any], *, counts: bool, nodes: int = 0) -> Callable[[Any], Any]: ...
        def _module_types(self) -> dict[str, str]: ...

    def _check(self, run: TraceRun, top_level_nondeterministic: dict[str, bool]) -> Steps[None]:
        plan = self.plan
        report = CheckReport(tolerance=float(plan.options.check_tolerance))
        run.check = report
        t0 = time.perf_counter()
        warned_nondeterministic: set[str] = set()
        with torch.no_grad():  # torch.jit._trace._check_trace is decorated with @torch.no_grad()
            for index, (check_set, label) in enumerate(zip(plan.check_sets, plan.check_labels, strict=True)):
                phase = f"check {index + 1}"
                self.recorder.phase = phase
                if plan.module is not None:
                    cases = yield from self._check_module_set(index, label, check_set)
                else:
                    cases = [(yield from self._check_function_set(index, label, check_set))]
                for case in cases:
                    self.method_of_phase[phase] = case.method
                    report.cases.append(case)
                    self._synthesize_torch_warnings(
                        case, top_level_nondeterministic.get(case.method, False), warned_nondeterministic, phase
                    )
                failed = next((c.exception for c in cases if c.exception is not None), None)
                if failed is not None:
                    # torch.jit.trace raises here and returns nothing; it checks no further input sets either
                    run.error = check_error(failed)
                    run.traced = None
                    break
                if any(c.graphs_differ for c in cases):
                    # torch raises its TracingCheckError ("Graphs differed across invocations") at the first
                    # input set whose graph differs: a later set, which may not even run, is never checked
                    break
        self._timed("check", t0)

    def _check_function_set(self, index: int, label: str, inputs: Any) -> Steps[CheckCase]:
        plan = self.plan
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        method = self.methods["forward"]
        case = CheckCase(index=index, method="forward", label=label, inputs=describe_inputs(inputs))
        self.python_runs += 1
        try:
            call = self._trace_call(plan.func, clone_inputs(inputs), methods=False, for_check=True)
            with own_compilation_unit():
                check_fn = yield from call_torch(call)
        except Exception as e:
            case.exception = error_from_exception(e, phase="check")
            case.exception.message = f"re-tracing with {label} raised {case.exception.type}: {case.exception.message}"
            return case
        runner = self._runner(check_fn, counts=False, nodes=len(method.trace.graph))
        run_outputs(case, method, inputs, runner, plan.options.check_tolerance)
        case.graph, case.diff, case.text_differs = check_graphs(method, check_fn.graph)
        return case

    def _check_module_set(self, index: int, label: str, check_set: Any) -> Steps[list[CheckCase]]:
        plan = self.plan
        assert plan.module is not None
        cases = [
            CheckCase(index=index, method=name, label=label, inputs=describe_inputs(check_set.get(name, ())))
            for name in plan.inputs
        ]
        missing = [name for name in plan.inputs if name not in check_set]
        if missing:
            for case in cases:
                case.exception = argument_error(
                    f"{label} has no inputs for method(s) {', '.join(missing)}",
                    "Give every traced method an entry in each check_inputs dict.",
                )
            return cases
        self.python_runs += len(check_set)
        try:
            call = self._trace_call(
                plan.module,
                {name: clone_inputs(data) for name, data in check_set.items()},
                methods=True,
                for_check=True,
            )
            with own_compilation_unit():
                check_mod = yield from call_torch(call)
        except Exception as e:
            err = error_from_exception(e, phase="check")
            err.message = f"re-tracing with {label} raised {err.type}: {err.message}"
            for case in cases:
                case.exception = err
            return cases
        for case in cases:
            method = self.methods[case.method]
            check_method = check_mod._c._get_method(case.method)
            inputs = check_set[case.method]
            if isinstance(inputs, torch.Tensor) or (isinstance(inputs, dict) and not plan.is_kwarg):
                inputs = (inputs,)
            runner = self._runner(check_method, counts=False, nodes=len(method.trace.graph))
            run_outputs(case, method, inputs, runner, plan.options.check_tolerance)
            case.graph, case.diff, case.text_differs = check_graphs(method, check_method.graph)
            if case.graph is not None:
                case.graph = case.graph.with_scope_types(self._module_types())
        return cases

    def _synthesize_torch_warnings(
        self, case: CheckCase, top_level_nondeterministic: bool, warned: set[str], phase: str
    ) -> None:
        """torch warns (it does not raise) on output mismatches; record the same warnings it would emit: its text,
        at the line of the first nondeterministic node, or where the trace was asked for."""
        file, line = self._location()
        for comparison in case.outputs:
            if comparison.ok:
                continue
            key = case.method
            if key not in warned:
                warned.add(key)
                if top_level_nondeterministic:
                    texts, source_range = self.nondeterministic_ops[case.method]
                    at = self._user_frame(source_range)
                    self.recorder.add_synthetic(
                        nondeterministic_message(texts),
                        "TracerWarning",
                        at.file if at is not None else file,
                        at.line if at is not None else line,
                        phase,
                    )
            self.recorder.add_synthetic(torch_mismatch_message(comparison), "TracerWarning", file, line, phase)

    def _user_frame(self, source_range: str) -> Frame | None:
        loc = parse_stack(source_range)
        if loc is None or loc.user_frame.internal:
            return self.caller
        return loc.user_frame

    def _attach_check_warning_nodes(self, run: TraceRun) -> None:
        """Warnings synthesized from the check point at the def line; give them the nodes that matter."""
        if run.check is None:
            return
        for w in run.warnings:
            graph = run.graphs.get(w.method)
            if graph is None:
                continue
            if w.category == "nondeterministic":
                w.node_ids = [n.id for n in graph.nodes if n.nondeterministic and n.parent is None]
            elif w.category in ("output_mismatch_python", "output_mismatch_retrace"):
                failing = [c for c in run.check.cases if c.method == w.method and not c.outputs_ok]
                w.node_ids = output_warning_nodes(graph, failing[0]) if failing else []
                diff = failing[0].diff if failing else None
                # output_warning_nodes gave the roots' trace nodes when there are any, else the output producers
                at_a_root = diff is not None and any(d.trace_node is not None for d in diff.roots)
                place_at_first_difference(w, graph, at_a_root=at_a_root)


def nondeterministic_message(node_texts: list[str]) -> str:
    """torch's "Trace had nondeterministic nodes" warning, in the installed torch's words (``_check_trace``)."""
    return nondeterministic_warning().message(node_texts)


#: what a failure inside the check means, whatever raised
CHECK_HINT = (
    "The check re-traces and runs your code with each set of check inputs, under torch.no_grad(); "
    "torch.jit.trace raises here and returns nothing. Fix the code (or the check inputs) for that case, "
    "or pass check_trace=False to skip the check."
)


def check_error(failed: TraceError) -> TraceError:
    """The run's error for an exception inside the check: what raised, where, and what the check does."""
    hint = CHECK_HINT if not failed.hint else f"{failed.hint} {CHECK_HINT}"
    return dataclasses.replace(failed, phase="check", hint=hint)


def output_warning_nodes(graph: Graph, case: CheckCase) -> list[int]:
    """Nodes an output-mismatch warning points at: the roots of the case, else the output producers."""
    if case.diff is not None:
        roots = [d.trace_node for d in case.diff.roots if d.trace_node is not None]
        if roots:
            return roots
    return [p.id for v in graph.outputs if (p := graph.producer(v)) is not None]


def place_at_first_difference(warning: TraceWarning, graph: Graph, *, at_a_root: bool) -> None:
    """Move an output-mismatch warning from the def line (where torch's check reports it) to where the outputs
    differ first: the line of its first node (a root divergence, else the returned value's producer) when that
    node was recorded in the same file; else (ops recorded in torch's or a library's code) it stays there. Either
    way ``placement`` says why it is where it is (``at_a_root``: the nodes are the check's root divergences)."""
    for node_id in sorted(warning.node_ids):
        source = graph.nodes[node_id].source
        frame = source.user_frame if source is not None else None
        if frame is not None and not frame.internal and frame.file == warning.file:
            warning.line, warning.code, warning.func = frame.line, frame.code, frame.func
            warning.placement = (
                "Shown where the graphs first differ (the check's first root divergence)"
                if at_a_root
                else "Shown at the line that computes the returned value (the graphs agree: the numbers part)"
            ) + "; torch reports it at the traced function's definition."
            return
    warning.placement = (
        "Shown at the traced function's definition, where torch reports it: the ops where the outputs first differ "
        "were recorded inside torch's or an installed library's code (or none was found), not on a line of this "
        "file."
        if warning.node_ids
        else "Shown at the traced function's definition, where torch reports it: the graphs agree, so no op marks "
        "where the numbers part (random ops or the tolerance, see the advice)."
    )


__all__ = ["CHECK_HINT", "CheckSteps", "check_error", "nondeterministic_message", "output_warning_nodes"]
