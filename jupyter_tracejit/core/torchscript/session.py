"""The trace session: a validated :class:`~.plan.TracePlan` in, a :class:`TraceRun` out.

The trace itself runs with ``check_trace=False``; the check is then done by :mod:`.check` the way
torch does it (same re-traces, same comparisons, same ``no_grad``), so the user's code runs as
often as under ``torch.jit.trace`` and the verdict agrees with torch's, but the result is data.

Being a guest in the user's process: grad mode, every submodule's train/eval flag and the warning
filters are restored on every exit path; nothing of torch is patched.
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import torch

from .. import hazards
from ..caller import is_own_file
from ..capture import CAPTURE_LOCK, drive, guest, stamp
from ..check import DEFAULT_TOLERANCE
from ..errors import error_from_exception
from ..graph import Frame
from ..inputs import clone_inputs, describe_inputs, parameter_types
from ..progress import CHECKING, PROBING, TRACING, enter_phase
from ..run import TraceRun
from ..source import attribute_to_caller, is_torch_file
from ..tracer_warnings import is_torch_jit_notice
from .calls import Steps, TraceCall, call_torch, own_compilation_unit, trace_call
from .canonical import canonical_inlined, canonical_text, has_calls
from .check import MethodUnderCheck
from .check_steps import CheckSteps, output_warning_nodes
from .deep_stack import run_with_stack
from .extract import extract_graph
from .plan import TracePlan
from .schemas import argument_names
from .warning_recorder import WarningRecorder

#: torch's code printer is quadratic in the number of submodules (3 s for 4,000): skip `.code` beyond this
CODE_MAX_SUBMODULES = 1000


def method_code(ts_method: Any, module: torch.nn.Module | None) -> str:
    """The method's TorchScript code for the inspector, unless printing it would take seconds."""
    if module is not None and sum(1 for _ in module.modules()) > CODE_MAX_SUBMODULES:
        return (
            f"# .code not captured: {type(module).__name__} has more than {CODE_MAX_SUBMODULES} submodules and\n"
            "# torch's code printer takes seconds there. run.traced.code prints it."
        )
    return str(ts_method.code)


# -- the session ----------------------------------------------------------------------------------


class TraceSession(CheckSteps):
    """The TorchScript back end (:class:`~..capture.Backend`): runs one plan: trace, check, probe, findings;
    ``options`` is what the run records of the request."""

    name: ClassVar[str] = "trace"

    def __init__(self, plan: TracePlan, options: dict[str, Any], caller: Frame | None = None) -> None:
        self.plan = plan
        self.options = options
        #: where the user asked for the trace: the location of whatever happened entirely inside torch
        self.caller = caller
        self.recorder = WarningRecorder()
        self.python_runs = 0
        #: eager runs made only to name an output torch rejected (counted in python_runs too)
        self.naming_runs = 0
        self.timings: dict[str, float] = {}
        self.method_of_phase: dict[str, str] = {}
        self._types: dict[str, str] | None = None
        #: method -> (torch's printout of its top-level nondeterministic nodes, the first one's source range)
        self.nondeterministic_ops: dict[str, tuple[list[str], str]] = {}

    def run(self, started: float) -> TraceRun:
        """The whole session, each torch call made from the driver's frame (callers that mind the depth drive
        :meth:`steps` from their own frame, see :mod:`..capture`)."""
        return drive(self.steps(started))

    def steps(self, started: float) -> Steps[TraceRun]:
        """The session as a generator: it yields each ``torch.jit.trace`` call for the driver to make and is sent
        back what the call returned or raised (see :mod:`.calls`); it returns the finished run."""
        plan = self.plan
        run = TraceRun(
            target=plan.target,
            options=self.options,
            backend=self.name,
            inputs={m: describe_inputs(v) for m, v in plan.inputs.items()},
        )
        mutated: list[str] = []
        top_level_nondeterministic: dict[str, bool] = {}
        try:
            with (
                CAPTURE_LOCK,
                guest(plan.module, plan.options.module_mode, plan.options.no_grad) as state,
                self.recorder.capture(),
            ):
                enter_phase(TRACING)
                if isinstance(plan.func, torch.jit.ScriptModule):
                    self._already_script(run)
                else:
                    yield from self._trace(run, top_level_nondeterministic)
                    if run.error is None and plan.options.check_trace:
                        enter_phase(CHECKING)
                        yield from self._check(run, top_level_nondeterministic)
                    if run.error is None and plan.options.probe:
                        enter_phase(PROBING)
                        self._probe(run)
                mutated = state.changed_buffers() if state is not None else []
        except Exception as e:  # our own bug or a hostile object: record it, never take the kernel down
            run.error = error_from_exception(e, phase="internal")
        self._attribute_to_caller(run)
        run.warnings = self.recorder.collect(run.graphs, self.method_of_phase)
        self._warnings_to_caller(run)
        self._attach_check_warning_nodes(run)
        run.python_runs = self.python_runs
        run.findings = self._findings(run, top_level_nondeterministic, mutated)
        checked = [c.graph for c in run.check.cases if c.graph is not None] if run.check is not None else []
        run.argument_names = argument_names([*run.graphs.values(), *checked])
        run.parameters = parameter_types(plan.module)
        run.timings.update(self.timings)
        return stamp(run, started)

    def _attribute_to_caller(self, run: TraceRun) -> None:
        """Nodes and errors located only inside torch get the caller's line (see :mod:`.caller`)."""
        caller = self.caller
        if caller is None:
            return
        graphs = list(run.graphs.values())
        if run.check is not None:
            graphs += [c.graph for c in run.check.cases if c.graph is not None]
        for graph in graphs:
            attribute_to_caller(graph, caller)
        errors = [run.error] + ([c.exception for c in run.check.cases] if run.check is not None else [])
        for error in errors:
            if error is not None and not error.file and error.phase != "arguments":
                error.file, error.line, error.code = caller.file, caller.line, caller.code

    def _warnings_to_caller(self, run: TraceRun) -> None:
        """torch's deprecation notice names the caller of torch.jit.trace, which is this package's own code (the
        session, the magic): it is the caller's. Other warnings at our files are traced code's (the demo model)."""
        caller = self.caller
        if caller is None:
            return
        for w in run.warnings:
            if w.category == "deprecated" and is_torch_jit_notice(w.message) and w.file and is_own_file(w.file):
                w.file, w.line, w.code, w.func = caller.file, caller.line, caller.code, caller.func

    def _location(self) -> tuple[str, int]:
        """Where warnings about the whole trace point: the traced function's ``def`` line, unless that is in torch
        (an ``nn.Sequential``), then the caller's line."""
        target = self.plan.target
        if target.file and not is_torch_file(target.file):
            return target.file, target.line
        if self.caller is not None:
            return self.caller.file, self.caller.line
        return target.file, target.line

    def _timed(self, key: str, start: float) -> None:
        self.timings[key] = self.timings.get(key, 0.0) + time.perf_counter() - start

    # -- trace ----------------------------------------------------------------------------------
    def _trace(self, run: TraceRun, top_level_nondeterministic: dict[str, bool]) -> Steps[None]:
        plan = self.plan
        self.recorder.phase = "trace"
        t0 = time.perf_counter()
        try:
            self.python_runs += len(plan.inputs)
            if plan.module is not None:
                call = self._trace_call(plan.module, plan.inputs, methods=True)
            else:
                call = self._trace_call(plan.func, plan.inputs["forward"], methods=False)
            with own_compilation_unit():
                traced = yield from call_torch(call)
        except Exception as e:
            self._timed("trace", t0)
            inputs = list(plan.inputs.values())
            run.error = error_from_exception(e, phase="trace", inputs=inputs)
            if run.error.tag == "output_type":
                # torch names no more than a type: what the code returned makes the hint say what to change
                returned = self._returned_eagerly()
                if returned:
                    run.error = error_from_exception(e, phase="trace", inputs=inputs, returned=returned[0])
            return
        self._timed("trace", t0)
        run.traced = traced
        t0 = time.perf_counter()
        self.methods: dict[str, MethodUnderCheck] = {}
        for name in plan.inputs:
            ts_method = traced._c._get_method(name) if plan.module is not None else traced
            ts_graph = ts_method.graph
            calls = has_calls(ts_graph)
            # the canonical copy (2 µs a node) is what the check compares and what inlining needs; without either,
            # the trace's own graph extracts the same (extract_graph numbers unnamed values as canonicalize does)
            canonical = canonical_inlined(ts_graph) if plan.options.check_trace or calls else None
            extraction = extract_graph(
                canonical if canonical is not None else ts_graph,
                method=name,
                # printed on first use: torch's code printer costs ~3 µs per node
                code=functools.partial(method_code, ts_method, plan.module),
                root_type=plan.target.type,
                number_unnamed=canonical is None,
            )
            # torch's check warns about the random ops at the top level of the traced graph. Without calls to inline,
            # that graph and the extracted one have the same nodes, so the scan (a pybind call per node) is needed
            # only when the extraction found a random op, or when calls hide nodes (a module's CallMethod)
            random_ops = (
                [n for n in ts_graph.nodes() if n.isNondeterministic()]
                if calls or any(n.nondeterministic for n in extraction.graph.nodes)
                else []
            )
            top_level_nondeterministic[name] = bool(random_ops)
            if random_ops:
                self.nondeterministic_ops[name] = ([str(op) for op in random_ops], random_ops[0].sourceRange())
            if plan.module is not None:
                extraction.graph = extraction.graph.with_scope_types(self._module_types())
            run.graphs[name] = extraction.graph
            if canonical is not None and plan.options.check_trace:
                self.methods[name] = MethodUnderCheck(
                    name=name,
                    traced_graph=ts_graph,
                    trace=extraction,
                    canonical_text=canonical_text(canonical),
                    run_traced=self._runner(ts_method, counts=False, nodes=len(extraction.graph)),
                    run_python=self._runner(self._python_callable(name), counts=True),
                    root_type=plan.target.type,
                )
        self._timed("extract", t0)

    def _returned_eagerly(self) -> tuple[Any] | tuple[()]:
        """What the traced code returns, from one eager run on copies of the example inputs (``()`` if it raised).

        Only for a trace torch refused for its output. Not a hook on the module: torch compiles a module's hooks
        with its methods when it scripts the module (``@torch.jit.export`` methods), and a hook on every module
        (a global one) would put a frame into every node's recorded stack. The module stays as the user gave it;
        the run counts in ``python_runs``; its warnings repeat the trace's and are not recorded again."""
        plan = self.plan
        method = "forward" if "forward" in plan.inputs else next(iter(plan.inputs))
        inputs = plan.inputs[method]
        self.python_runs += 1
        self.naming_runs += 1
        try:
            with warnings.catch_warnings(), torch.no_grad():
                warnings.simplefilter("ignore")
                fn = self._python_callable(method)
                if plan.is_kwarg and isinstance(inputs, dict):
                    return (fn(**inputs),)
                return (fn(*clone_inputs(inputs if isinstance(inputs, tuple) else (inputs,))),)
        except Exception:
            return ()

    def _module_types(self) -> dict[str, str]:
        """Module path -> class name, from the module itself: torch's module hierarchy string leaves out the names
        of containers (``layers.0`` of an ``nn.ModuleList`` reads ``0(Linear)``), the module never does."""
        if self._types is None:
            module = self.plan.module
            assert module is not None
            self._types = {
                path: type(m).__name__ if not isinstance(m, torch.jit.ScriptModule) else m.original_name
                for path, m in module.named_modules(remove_duplicate=False)
            }
        return self._types

    def _trace_call(self, target: Any, inputs: Any, *, methods: bool, for_check: bool = False) -> TraceCall:
        """How to call torch for this plan; the caller makes the call (see :mod:`.calls`)."""
        options = self.plan.options
        return trace_call(
            target,
            inputs,
            methods=methods,
            is_kwarg=self.plan.is_kwarg,
            strict=options.strict,
            force_outplace=options.force_outplace,
            for_check=for_check,
        )

    def _python_callable(self, method: str) -> Callable[..., Any]:
        plan = self.plan
        if plan.module is None:
            assert plan.func is not None
            return plan.func
        return plan.module if method == "forward" else getattr(plan.module, method)

    def _runner(self, fn: Callable[..., Any], *, counts: bool, nodes: int = 0) -> Callable[[Any], Any]:
        """Call ``fn`` on a set of inputs as torch's check does; ``nodes`` (the size of a traced graph ``fn``
        runs) sizes the C stack it needs (see :mod:`.deep_stack`)."""
        plan = self.plan

        def call(inputs: Any) -> Any:
            if counts:
                self.python_runs += 1
            if plan.is_kwarg and isinstance(inputs, dict):
                return run_with_stack(nodes, fn, **inputs)  # torch passes keyword inputs uncloned
            return run_with_stack(nodes, fn, *clone_inputs(inputs))

        return call

    def _already_script(self, run: TraceRun) -> None:
        """torch.jit.trace returns a ScriptModule unchanged (with its warning, recorded here) and checks nothing;
        so does this run, showing the scripted graph, control flow included."""
        plan = self.plan
        self.recorder.phase = "trace"
        try:
            # torch warns and returns the module unchanged; call it so its own warning is recorded
            fn, args, kwargs = self._trace_call(plan.func, plan.inputs.get("forward"), methods=False)
            traced = fn(*args, **kwargs)
            run.traced = traced
            graph = canonical_inlined(traced.graph)
            run.graphs["forward"] = extract_graph(
                graph, method="forward", code=traced.code, root_type=plan.target.name
            ).graph
        except Exception as e:
            run.error = error_from_exception(e)

    # -- probe and findings ---------------------------------------------------------------------
    def _probe(self, run: TraceRun) -> None:
        plan = self.plan
        method = "forward" if "forward" in plan.inputs else next(iter(plan.inputs))
        eager = self._python_callable(method)
        run_traced: Any = run.traced if plan.module is None else getattr(run.traced, method)
        nodes = len(run.graphs[method])

        def traced(*args: Any, **kwargs: Any) -> Any:
            return run_with_stack(nodes, run_traced, *args, **kwargs)

        from .probe import run_probe  # imported on demand: most runs do not probe

        t0 = time.perf_counter()
        try:
            run.probe = run_probe(
                eager,
                traced,
                plan.inputs[method],
                is_kwarg=plan.is_kwarg,
                dims=plan.probe_dims,
                module=plan.module,
                tolerance=max(float(plan.options.check_tolerance), DEFAULT_TOLERANCE),
            )
        except ValueError as e:  # bad probe_dims: say so, keep the trace
            run.findings.append(
                hazards.Finding(
                    kind="probe_error",
                    severity="error",
                    title="generalization probe not run",
                    message=str(e),
                    hint="probe_dims maps an argument index (or keyword name) to dimensions of that input, "
                    "e.g. probe_dims={0: [1]}.",
                )
            )
        self._timed("probe", t0)

    def _devices_used(self) -> set[str]:
        """Where this run's inputs (example and check) and the module's parameters and buffers are."""
        plan = self.plan
        found = tensor_devices([list(plan.inputs.values()), plan.check_sets], set())
        if plan.module is not None:
            found.update(str(t.device) for t in (*plan.module.parameters(), *plan.module.buffers()))
        return found

    def _findings(
        self, run: TraceRun, top_level_nondeterministic: dict[str, bool], mutated: list[str]
    ) -> list[hazards.Finding]:
        found = list(run.findings)
        for name, graph in run.graphs.items():
            for finding in (
                hazards.nondeterministic_nodes(graph, top_level_nondeterministic.get(name, False)),
                hazards.transformer_fastpath(graph, run.check),
                hazards.frozen_loops(graph, run.check),
                hazards.device_constants(graph, self._devices_used(), self.plan.options.target_device),
                hazards.train_mode_batchnorm(graph, self.python_runs),
            ):
                if finding is not None:
                    found.append(finding)
        cases = len(self.plan.check_sets) if self.plan.options.check_trace and run.error is None else 0
        runs = hazards.python_runs(self.python_runs, cases, mutated, self.naming_runs)
        if runs is not None:
            found.append(runs)
        return found


def tensor_devices(value: Any, found: set[str], depth: int = 0) -> set[str]:
    """The devices of the tensors in ``value`` and the containers in it (lists, tuples, dicts), added to ``found``."""
    if isinstance(value, torch.Tensor):
        found.add(str(value.device))
    elif depth < 8 and isinstance(value, (list, tuple)):
        for item in value:
            tensor_devices(item, found, depth + 1)
    elif depth < 8 and isinstance(value, dict):
        for item in value.values():
            tensor_devices(item, found, depth + 1)
    return found


__all__ = ["CODE_MAX_SUBMODULES", "TraceSession", "method_code", "output_warning_nodes", "stamp"]
