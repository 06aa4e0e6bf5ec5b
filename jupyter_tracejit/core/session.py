"""The one caller of ``torch.jit.trace`` / ``torch.jit.trace_module``: options in, :class:`TraceRun` out.

The trace itself runs with ``check_trace=False``; the check is then done by :mod:`.check` the way
torch does it (same re-traces, same comparisons, same ``no_grad``), so the user's code runs as
often as under ``torch.jit.trace`` and the verdict agrees with torch's, but the result is data.

Being a guest in the user's process: grad mode, every submodule's train/eval flag and the warning
filters are restored on every exit path; nothing of torch is patched.
"""

from __future__ import annotations

import contextlib
import datetime
import inspect
import math
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from . import hazards
from .check import (
    CheckCase,
    CheckReport,
    MethodUnderCheck,
    check_graphs,
    clone_inputs,
    describe_inputs,
    run_outputs,
    torch_mismatch_message,
)
from .errors import TraceError, argument_error, error_from_exception
from .from_torchscript import canonical_inlined, canonical_text, extract_graph
from .graph import Graph
from .run import Target, TraceRun
from .tracer_warnings import WarningRecorder

MODULE_MODES = ("as_is", "train", "eval")
#: buffers up to this many elements are compared by value to report which ones tracing changed
_SNAPSHOT_LIMIT = 1 << 20


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


def _changed(buf: torch.Tensor, before: torch.Tensor | int) -> bool:
    if isinstance(before, int):
        return buf._version != before
    return buf.shape != before.shape or not torch.equal(buf.detach(), before)


@dataclass
class _Plan:
    """A validated request: what to trace, with which inputs, and how to check it."""

    target: Target
    options: dict[str, Any]
    #: the nn.Module for trace_module, else None
    module: torch.nn.Module | None = None
    func: Callable[..., Any] | None = None
    #: method name -> example inputs (positional tuple, or a dict when is_kwarg)
    inputs: dict[str, Any] = field(default_factory=dict)
    is_kwarg: bool = False
    #: check input sets: for modules a list of {method: inputs}; for functions a list of inputs
    check_sets: list[Any] = field(default_factory=list)
    check_labels: list[str] = field(default_factory=list)
    check_trace: bool = True
    tolerance: float = 1e-5
    strict: bool = True
    force_outplace: bool = False
    module_mode: str = "as_is"
    no_grad: bool = False
    probe: bool = False
    probe_dims: Mapping[int | str, Sequence[int]] | None = None


def trace(
    func: Any,
    example_inputs: Any = None,
    *,
    check_trace: bool = True,
    check_inputs: Sequence[Any] | None = None,
    check_tolerance: float = 1e-5,
    strict: bool = True,
    example_kwarg_inputs: dict[str, Any] | None = None,
    force_outplace: bool = False,
    module_mode: str = "as_is",
    no_grad: bool = False,
    probe: bool = False,
    probe_dims: Mapping[int | str, Sequence[int]] | None = None,
) -> TraceRun:
    """Trace ``func`` like ``torch.jit.trace`` and return everything it did as a :class:`TraceRun`.

    The options mean what they mean for ``torch.jit.trace`` (``force_outplace`` is its private
    ``_force_outplace``). Beyond torch: ``module_mode`` (``"train"`` / ``"eval"`` for this trace only,
    restored after), ``no_grad`` (trace under ``torch.no_grad()``), ``probe`` (also run the generalization
    probe on derived inputs; ``probe_dims`` marks dimensions to vary, ``{arg index or kwarg name: [dims]}``).

    Never raises for a failure in the traced code or for bad arguments: see ``run.ok`` and ``run.error``.
    """
    given: dict[str, Any] = dict(
        check_trace=check_trace,
        check_inputs=check_inputs,
        check_tolerance=check_tolerance,
        strict=strict,
        example_kwarg_inputs=example_kwarg_inputs,
        force_outplace=force_outplace,
        module_mode=module_mode,
        no_grad=no_grad,
        probe=probe,
        probe_dims=probe_dims,
    )
    started = time.perf_counter()
    options = _describe_options(**given)
    try:
        plan = _plan_trace(
            func,
            example_inputs,
            options,
            check_trace=check_trace,
            check_inputs=check_inputs,
            check_tolerance=check_tolerance,
            strict=strict,
            example_kwarg_inputs=example_kwarg_inputs,
            force_outplace=force_outplace,
            module_mode=module_mode,
            no_grad=no_grad,
            probe=probe,
            probe_dims=probe_dims,
        )
    except _ArgumentProblem as problem:
        return _with_request(
            _failed_run(_target_of(func), options, problem.error, started), "trace", func, example_inputs, given
        )
    return _with_request(_Session(plan).run(started), "trace", func, example_inputs, given)


def trace_module(
    mod: Any,
    inputs: Any,
    *,
    check_trace: bool = True,
    check_inputs: Sequence[Any] | None = None,
    check_tolerance: float = 1e-5,
    strict: bool = True,
    example_inputs_is_kwarg: bool = False,
    force_outplace: bool = False,
    module_mode: str = "as_is",
    no_grad: bool = False,
    probe: bool = False,
    probe_dims: Mapping[int | str, Sequence[int]] | None = None,
) -> TraceRun:
    """Trace methods of a module like ``torch.jit.trace_module``: ``inputs`` maps method names to example
    inputs, ``check_inputs`` is a list of such dicts. Extra options as for :func:`trace`."""
    given: dict[str, Any] = dict(
        check_trace=check_trace,
        check_inputs=check_inputs,
        check_tolerance=check_tolerance,
        strict=strict,
        example_inputs_is_kwarg=example_inputs_is_kwarg,
        force_outplace=force_outplace,
        module_mode=module_mode,
        no_grad=no_grad,
        probe=probe,
        probe_dims=probe_dims,
    )
    started = time.perf_counter()
    options = _describe_options(**given)
    try:
        _validate_common(check_trace, check_tolerance, strict, force_outplace, module_mode, no_grad, probe)
        if not isinstance(mod, torch.nn.Module):
            raise _ArgumentProblem(
                f"trace_module expects an nn.Module, got {type(mod).__name__}",
                "For a plain function use tj.trace(func, example_inputs).",
            )
        if isinstance(mod, torch.jit.ScriptModule):
            raise _ArgumentProblem(
                f"{type(mod).__name__} is already TorchScript; there is nothing to trace",
                "Trace the original nn.Module, or look at script_module.graph directly.",
                tag="already_script",
            )
        if not isinstance(inputs, dict) or not inputs:
            raise _ArgumentProblem(
                "trace_module expects a non-empty dict of {method_name: example_inputs}",
                "For example: tj.trace_module(model, {'forward': (x,), 'encode': (y,)}).",
            )
        for name in inputs:
            if not isinstance(name, str) or not callable(getattr(mod, name, None)):
                raise _ArgumentProblem(
                    f"{type(mod).__name__} has no method {name!r}",
                    "The keys of inputs must be method names of the module, e.g. {'forward': (x,)}.",
                )
        if not isinstance(example_inputs_is_kwarg, bool):
            raise _ArgumentProblem("example_inputs_is_kwarg must be True or False", "Pass a bool.")
        if example_inputs_is_kwarg:
            for name, value in inputs.items():
                if not isinstance(value, dict):
                    raise _ArgumentProblem(
                        f"example_inputs_is_kwarg=True but the inputs of {name!r} are a {type(value).__name__}",
                        "Give each method a dict of keyword inputs, e.g. {'forward': {'x': x}}.",
                    )
        check_sets: list[Any] = []
        if check_inputs is not None:
            _require_list(check_inputs)
            for i, c in enumerate(check_inputs):
                if not isinstance(c, dict):
                    raise _ArgumentProblem(
                        f"check_inputs[{i}] is a {type(c).__name__}; trace_module needs dicts like its inputs",
                        "Pass check_inputs=[{'forward': (x2,)}, ...].",
                    )
            check_sets = list(check_inputs)
        plan = _Plan(
            target=_target_of(mod),
            options=options,
            module=mod,
            inputs={name: _as_args(v, example_inputs_is_kwarg) for name, v in inputs.items()},
            is_kwarg=example_inputs_is_kwarg,
            check_trace=check_trace,
            tolerance=float(check_tolerance),
            strict=strict,
            force_outplace=force_outplace,
            module_mode=module_mode,
            no_grad=no_grad,
            probe=probe,
            probe_dims=probe_dims,
        )
        if check_trace:
            if check_sets:
                plan.check_sets = check_sets
                plan.check_labels = [f"check_inputs[{i}]" for i in range(len(check_sets))]
            else:
                plan.check_sets = [inputs]
                plan.check_labels = ["example inputs"]
    except _ArgumentProblem as problem:
        return _with_request(
            _failed_run(_target_of(mod), options, problem.error, started), "trace_module", mod, inputs, given
        )
    return _with_request(_Session(plan).run(started), "trace_module", mod, inputs, given)


@dataclass(frozen=True)
class TraceRequest:
    """What a run was asked to do, with the live callable and inputs: enough to trace again.

    Kept on ``TraceRun.request`` (never serialized) so explorers can re-trace with other options.
    """

    kind: str  # "trace" or "trace_module"
    target: Any
    inputs: Any
    options: dict[str, Any]

    def run(self, **overrides: Any) -> TraceRun:
        """Trace again with some options changed (same names as :func:`trace` / :func:`trace_module`)."""
        unknown = sorted(set(overrides) - set(self.options))
        if unknown:
            raise TypeError(f"unknown trace option(s): {', '.join(unknown)}; known: {', '.join(sorted(self.options))}")
        options = {**self.options, **overrides}
        if self.kind == "trace_module":
            return trace_module(self.target, self.inputs, **options)
        return trace(self.target, self.inputs, **options)


def _with_request(run: TraceRun, kind: str, target: Any, inputs: Any, options: dict[str, Any]) -> TraceRun:
    run.request = TraceRequest(kind=kind, target=target, inputs=inputs, options=options)
    return run


# -- argument validation ---------------------------------------------------------------------------


class _ArgumentProblem(Exception):
    def __init__(self, message: str, hint: str, tag: str = "bad_argument") -> None:
        super().__init__(message)
        self.error = argument_error(message, hint, tag)


def _require_list(check_inputs: Any) -> None:
    if not isinstance(check_inputs, (list, tuple)) or isinstance(check_inputs, torch.Tensor):
        raise _ArgumentProblem(
            f"check_inputs must be a list of input sets, got {type(check_inputs).__name__}",
            "Pass a list with one tuple per input set, e.g. check_inputs=[(x2,), (x3,)].",
        )


def _validate_common(
    check_trace: Any, tol: Any, strict: Any, force_outplace: Any, module_mode: Any, no_grad: Any, probe: Any
) -> None:
    for name, value in (
        ("check_trace", check_trace),
        ("strict", strict),
        ("force_outplace", force_outplace),
        ("no_grad", no_grad),
        ("probe", probe),
    ):
        if not isinstance(value, bool):
            raise _ArgumentProblem(f"{name} must be True or False, got {value!r}", f"Pass {name}=True or {name}=False.")
    if isinstance(tol, bool) or not isinstance(tol, (int, float)) or not math.isfinite(tol) or tol < 0:
        raise _ArgumentProblem(
            f"check_tolerance must be a finite number >= 0, got {tol!r}",
            "torch's default is 1e-5; relax it (e.g. 1e-3) for fused or reordered float math.",
        )
    if module_mode not in MODULE_MODES:
        raise _ArgumentProblem(
            f"module_mode must be one of {', '.join(repr(m) for m in MODULE_MODES)}, got {module_mode!r}",
            "Use 'eval' for inference, 'train' to trace training behaviour, 'as_is' to leave the module alone.",
        )


def _as_args(inputs: Any, is_kwarg: bool) -> Any:
    """torch's ``make_tuple``: a tensor or dict becomes a 1-tuple, other iterables a tuple."""
    if is_kwarg:
        return inputs
    if isinstance(inputs, (torch.Tensor, dict)):
        return (inputs,)
    if isinstance(inputs, tuple):
        return inputs
    try:
        return tuple(inputs)
    except TypeError:
        raise _ArgumentProblem(
            f"example inputs must be a tensor or a tuple of inputs, got {type(inputs).__name__}",
            "Pass example_inputs=(x,) or example_inputs=(x, y).",
        ) from None


def _plan_trace(
    func: Any,
    example_inputs: Any,
    options: dict[str, Any],
    *,
    check_trace: bool,
    check_inputs: Any,
    check_tolerance: Any,
    strict: bool,
    example_kwarg_inputs: Any,
    force_outplace: bool,
    module_mode: str,
    no_grad: bool,
    probe: bool,
    probe_dims: Any,
) -> _Plan:
    _validate_common(check_trace, check_tolerance, strict, force_outplace, module_mode, no_grad, probe)
    if not callable(func):
        raise _ArgumentProblem(
            f"tj.trace needs a function or nn.Module to trace, got {type(func).__name__}",
            "Pass the model or function itself, e.g. tj.trace(model, x) — not model(x).",
        )
    if example_kwarg_inputs is not None and not isinstance(example_kwarg_inputs, dict):
        raise _ArgumentProblem(
            f"example_kwarg_inputs must be a dict of keyword inputs, got {type(example_kwarg_inputs).__name__}",
            "Pass example_kwarg_inputs={'x': x, 'mask': m}.",
        )
    if example_inputs is None and example_kwarg_inputs is None:
        raise _ArgumentProblem(
            "no example inputs: torch.jit.trace runs the function once on example inputs",
            "Pass example_inputs=(x,) or example_kwarg_inputs={'x': x}.",
        )
    if check_inputs is not None:
        _require_list(check_inputs)
    is_kwarg = isinstance(example_kwarg_inputs, dict)
    if is_kwarg and check_inputs is not None:
        for i, c in enumerate(check_inputs):
            if not isinstance(c, dict):
                raise _ArgumentProblem(
                    f"check_inputs[{i}] is a {type(c).__name__}, but keyword example inputs need dict check inputs",
                    "Pass check_inputs=[{'x': x2}, ...] matching example_kwarg_inputs.",
                )
    common = dict(
        target=_target_of(func),
        options=options,
        is_kwarg=is_kwarg,
        check_trace=check_trace,
        tolerance=float(check_tolerance),
        strict=strict,
        force_outplace=force_outplace,
        module_mode=module_mode,
        no_grad=no_grad,
        probe=probe,
        probe_dims=probe_dims,
    )
    module: torch.nn.Module | None = None
    if isinstance(func, torch.jit.ScriptModule):
        return _Plan(func=func, **common)
    if isinstance(func, torch.nn.Module):
        module = func
    elif isinstance(getattr(func, "__self__", None), torch.nn.Module) and getattr(func, "__name__", "") == "forward":
        module = func.__self__
    if module is not None:
        # torch.jit.trace on a module is trace_module with {"forward": inputs}
        given = example_kwarg_inputs if example_inputs is None else example_inputs
        plan = _Plan(module=module, inputs={"forward": _as_args(given, is_kwarg)}, **common)
        if check_trace:
            if check_inputs is not None:
                plan.check_sets = [{"forward": c} for c in check_inputs]
                plan.check_labels = [f"check_inputs[{i}]" for i in range(len(check_inputs))]
            else:
                plan.check_sets = [{"forward": given}]
                plan.check_labels = ["example inputs"]
        return plan
    args = example_kwarg_inputs if is_kwarg else _as_args(example_inputs, False)
    plan = _Plan(func=func, inputs={"forward": args}, **common)
    if check_trace:
        if check_inputs is not None:
            plan.check_sets = list(check_inputs)
            plan.check_labels = [f"check_inputs[{i}]" for i in range(len(check_inputs))]
        else:
            plan.check_sets = [args]
            plan.check_labels = ["example inputs"]
    return plan


def _describe_options(**options: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in options.items():
        if k == "check_inputs":
            out[k] = None if v is None else [describe_inputs(c) for c in v] if isinstance(v, (list, tuple)) else repr(v)
        elif k == "example_kwarg_inputs":
            out[k] = None if v is None else sorted(v) if isinstance(v, dict) else repr(v)
        elif k == "probe_dims":
            out[k] = (
                None if v is None else {str(a): list(d) for a, d in v.items()} if isinstance(v, Mapping) else repr(v)
            )
        elif isinstance(v, float) and not math.isfinite(v):
            out[k] = repr(v)
        elif isinstance(v, (bool, int, float, str)) or v is None:
            out[k] = v
        else:
            out[k] = repr(v)
    return out


def _target_of(obj: Any) -> Target:
    try:
        if isinstance(obj, torch.jit.ScriptModule):
            return Target(
                name=getattr(obj, "original_name", type(obj).__name__), kind="script", type=type(obj).__name__
            )
        if isinstance(obj, torch.nn.Module):
            fn: Any = type(obj).forward
            target = Target(name=type(obj).__name__, kind="module", type=type(obj).__name__)
        elif callable(obj):
            fn = obj
            target = Target(name=getattr(obj, "__qualname__", getattr(obj, "__name__", repr(obj))), kind="function")
        else:
            return Target(name=repr(obj)[:80], kind="invalid")
        with contextlib.suppress(TypeError, OSError):
            target.file = inspect.getsourcefile(fn) or ""
            target.line = inspect.getsourcelines(fn)[1]
        return target
    except Exception:  # a hostile __getattr__ must not break error reporting
        return Target(name=type(obj).__name__, kind="invalid")


def _stamp(run: TraceRun, started: float) -> TraceRun:
    run.torch_version = torch.__version__
    run.created = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    run.run_id = uuid.uuid4().hex[:12]
    run.timings["total"] = time.perf_counter() - started
    return run


def _failed_run(target: Target, options: dict[str, Any], error: TraceError, started: float) -> TraceRun:
    return _stamp(TraceRun(target=target, options=options, error=error), started)


# -- the session ----------------------------------------------------------------------------------


class _Session:
    def __init__(self, plan: _Plan) -> None:
        self.plan = plan
        self.recorder = WarningRecorder()
        self.python_runs = 0
        self.timings: dict[str, float] = {}
        self.method_of_phase: dict[str, str] = {}

    def run(self, started: float) -> TraceRun:
        plan = self.plan
        run = TraceRun(
            target=plan.target,
            options=plan.options,
            inputs={m: describe_inputs(v) for m, v in plan.inputs.items()},
        )
        mutated: list[str] = []
        top_level_nondeterministic: dict[str, bool] = {}
        try:
            with self._guest(plan) as versions, self.recorder.capture():
                if isinstance(plan.func, torch.jit.ScriptModule):
                    self._already_script(run)
                else:
                    self._trace(run, top_level_nondeterministic)
                    if run.error is None and plan.check_trace:
                        self._check(run, top_level_nondeterministic)
                    if run.error is None and plan.probe:
                        self._probe(run)
                mutated = [name for name, (buf, before) in versions.items() if _changed(buf, before)]
        except Exception as e:  # our own bug or a hostile object: record it, never take the kernel down
            run.error = error_from_exception(e, phase="internal")
        run.warnings = self.recorder.collect(run.graphs, self.method_of_phase)
        self._attach_check_warning_nodes(run)
        run.python_runs = self.python_runs
        run.findings = self._findings(run, top_level_nondeterministic, mutated)
        run.timings.update(self.timings)
        return _stamp(run, started)

    @contextlib.contextmanager
    def _guest(self, plan: _Plan) -> Iterator[dict[str, tuple[torch.Tensor, torch.Tensor | int]]]:
        """Module mode and grad mode for this trace only; restore both on every exit path."""
        module = plan.module
        grad_enabled = torch.is_grad_enabled()
        training = {m: m.training for m in module.modules()} if module is not None else {}
        versions: dict[str, tuple[torch.Tensor, torch.Tensor | int]] = {}
        if module is not None:
            # kernels such as batch_norm update running stats without bumping the version counter:
            # snapshot small buffers by value, large ones by version
            versions = {
                name: (buf, buf.detach().clone() if buf.numel() <= _SNAPSHOT_LIMIT else buf._version)
                for name, buf in module.named_buffers()
            }
        try:
            if module is not None and plan.module_mode == "train":
                module.train()
            elif module is not None and plan.module_mode == "eval":
                module.eval()
            with torch.no_grad() if plan.no_grad else contextlib.nullcontext():
                yield versions
        finally:
            for m, flag in training.items():
                m.training = flag
            torch.set_grad_enabled(grad_enabled)

    def _timed(self, key: str, start: float) -> None:
        self.timings[key] = self.timings.get(key, 0.0) + time.perf_counter() - start

    # -- trace ----------------------------------------------------------------------------------
    def _trace(self, run: TraceRun, top_level_nondeterministic: dict[str, bool]) -> None:
        plan = self.plan
        self.recorder.phase = "trace"
        t0 = time.perf_counter()
        try:
            if plan.module is not None:
                self.python_runs += len(plan.inputs)
                traced = torch.jit.trace_module(
                    plan.module,
                    plan.inputs,
                    check_trace=False,
                    strict=plan.strict,
                    _force_outplace=plan.force_outplace,
                    example_inputs_is_kwarg=plan.is_kwarg,
                )
            else:
                self.python_runs += 1
                args = plan.inputs["forward"]
                if plan.is_kwarg:
                    traced = torch.jit.trace(
                        plan.func,
                        check_trace=False,
                        strict=plan.strict,
                        _force_outplace=plan.force_outplace,
                        example_kwarg_inputs=args,
                    )
                else:
                    traced = torch.jit.trace(
                        plan.func, args, check_trace=False, strict=plan.strict, _force_outplace=plan.force_outplace
                    )
        except Exception as e:
            self._timed("trace", t0)
            run.error = error_from_exception(e, phase="trace")
            return
        self._timed("trace", t0)
        run.traced = traced
        t0 = time.perf_counter()
        self.methods: dict[str, MethodUnderCheck] = {}
        for name in plan.inputs:
            ts_method = traced._c._get_method(name) if plan.module is not None else traced
            ts_graph = ts_method.graph
            top_level_nondeterministic[name] = any(n.isNondeterministic() for n in ts_graph.nodes())
            canonical = canonical_inlined(ts_graph)
            extraction = extract_graph(
                canonical, method=name, code=method_code(ts_method, plan.module), root_type=plan.target.type
            )
            run.graphs[name] = extraction.graph
            if plan.check_trace:
                self.methods[name] = MethodUnderCheck(
                    name=name,
                    traced_graph=ts_graph,
                    trace=extraction,
                    canonical_text=canonical_text(canonical),
                    run_traced=self._runner(ts_method, counts=False),
                    run_python=self._runner(self._python_callable(name), counts=True),
                    root_type=plan.target.type,
                )
        self._timed("extract", t0)

    def _python_callable(self, method: str) -> Callable[..., Any]:
        plan = self.plan
        if plan.module is None:
            assert plan.func is not None
            return plan.func
        return plan.module if method == "forward" else getattr(plan.module, method)

    def _runner(self, fn: Callable[..., Any], *, counts: bool) -> Callable[[Any], Any]:
        plan = self.plan

        def call(inputs: Any) -> Any:
            if counts:
                self.python_runs += 1
            if plan.is_kwarg and isinstance(inputs, dict):
                return fn(**inputs)  # torch passes keyword inputs uncloned
            return fn(*clone_inputs(inputs))

        return call

    def _already_script(self, run: TraceRun) -> None:
        plan = self.plan
        self.recorder.phase = "trace"
        args = plan.inputs.get("forward")
        try:
            # torch warns and returns the module unchanged; call it so its own warning is recorded
            if plan.is_kwarg:
                traced = torch.jit.trace(plan.func, example_kwarg_inputs=args, check_trace=False)
            else:
                traced = torch.jit.trace(plan.func, args, check_trace=False)
            run.traced = traced
            graph = canonical_inlined(traced.graph)
            run.graphs["forward"] = extract_graph(
                graph, method="forward", code=traced.code, root_type=plan.target.name
            ).graph
        except Exception as e:
            run.error = error_from_exception(e)
            return
        run.error = TraceError(
            type="AlreadyScripted",
            message=f"{plan.target.name} is already TorchScript; torch.jit.trace returns it unchanged",
            tag="already_script",
            hint="Trace the original nn.Module instead. The graph shown is the scripted one, control flow included.",
        )

    # -- check ----------------------------------------------------------------------------------
    def _check(self, run: TraceRun, top_level_nondeterministic: dict[str, bool]) -> None:
        plan = self.plan
        report = CheckReport(tolerance=plan.tolerance)
        run.check = report
        t0 = time.perf_counter()
        warned_nondeterministic: set[str] = set()
        with torch.no_grad():  # torch.jit._trace._check_trace is decorated with @torch.no_grad()
            for index, (check_set, label) in enumerate(zip(plan.check_sets, plan.check_labels, strict=True)):
                phase = f"check {index + 1}"
                self.recorder.phase = phase
                if plan.module is not None:
                    cases = self._check_module_set(index, label, check_set)
                else:
                    cases = [self._check_function_set(index, label, check_set)]
                for case in cases:
                    self.method_of_phase[phase] = case.method
                    report.cases.append(case)
                    self._synthesize_torch_warnings(
                        case, top_level_nondeterministic.get(case.method, False), warned_nondeterministic, phase
                    )
        self._timed("check", t0)

    def _check_function_set(self, index: int, label: str, inputs: Any) -> CheckCase:
        plan = self.plan
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        method = self.methods["forward"]
        case = CheckCase(index=index, method="forward", label=label, inputs=describe_inputs(inputs))
        self.python_runs += 1
        try:
            if plan.is_kwarg:
                check_fn = torch.jit.trace(
                    plan.func,
                    check_trace=False,
                    strict=plan.strict,
                    _force_outplace=plan.force_outplace,
                    example_kwarg_inputs=clone_inputs(inputs),
                    _store_inputs=False,
                )
            else:
                check_fn = torch.jit.trace(
                    plan.func,
                    clone_inputs(inputs),
                    check_trace=False,
                    strict=plan.strict,
                    _force_outplace=plan.force_outplace,
                    _store_inputs=False,
                )
        except Exception as e:
            case.exception = error_from_exception(e, phase="check")
            case.exception.message = f"re-tracing with {label} raised {case.exception.type}: {case.exception.message}"
            return case
        run_outputs(case, method, inputs, self._runner(check_fn, counts=False), plan.tolerance)
        case.graph, case.diff, case.text_differs = check_graphs(method, check_fn.graph)
        return case

    def _check_module_set(self, index: int, label: str, check_set: Any) -> list[CheckCase]:
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
            check_mod = torch.jit.trace_module(
                plan.module,
                {name: clone_inputs(data) for name, data in check_set.items()},
                check_trace=False,
                strict=plan.strict,
                _force_outplace=plan.force_outplace,
                _compilation_unit=torch._C.CompilationUnit(),
                example_inputs_is_kwarg=plan.is_kwarg,
                _store_inputs=False,
            )
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
            run_outputs(case, method, inputs, self._runner(check_method, counts=False), plan.tolerance)
            case.graph, case.diff, case.text_differs = check_graphs(method, check_method.graph)
        return cases

    def _synthesize_torch_warnings(
        self, case: CheckCase, top_level_nondeterministic: bool, warned: set[str], phase: str
    ) -> None:
        """torch warns (it does not raise) on output mismatches; record the same warnings it would emit."""
        target = self.plan.target
        for comparison in case.outputs:
            if comparison.ok:
                continue
            key = case.method
            if key not in warned:
                warned.add(key)
                if top_level_nondeterministic:
                    self.recorder.add_synthetic(
                        "Trace had nondeterministic nodes. Did you forget call .eval() on your model? "
                        "This may cause errors in trace checking. To disable trace checking, pass "
                        "check_trace=False to torch.jit.trace()",
                        "TracerWarning",
                        target.file,
                        target.line,
                        phase,
                    )
            self.recorder.add_synthetic(
                torch_mismatch_message(comparison), "TracerWarning", target.file, target.line, phase
            )

    def _attach_check_warning_nodes(self, run: TraceRun) -> None:
        """Warnings synthesized from the check point at the def line; give them the nodes that matter."""
        if run.check is None:
            return
        for w in run.warnings:
            graph = run.graphs.get(w.method)
            if graph is None:
                continue
            if w.category == "nondeterministic":
                w.node_ids = [n.id for n in graph.nodes if n.nondeterministic]
            elif w.category in ("output_mismatch_python", "output_mismatch_retrace"):
                failing = [c for c in run.check.cases if c.method == w.method and not c.outputs_ok]
                w.node_ids = output_warning_nodes(graph, failing[0]) if failing else []

    # -- probe and findings ---------------------------------------------------------------------
    def _probe(self, run: TraceRun) -> None:
        plan = self.plan
        method = "forward" if "forward" in plan.inputs else next(iter(plan.inputs))
        eager = self._python_callable(method)
        traced: Any = run.traced if plan.module is None else getattr(run.traced, method)
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
                tolerance=max(plan.tolerance, 1e-5),
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

    def _findings(
        self, run: TraceRun, top_level_nondeterministic: dict[str, bool], mutated: list[str]
    ) -> list[hazards.Finding]:
        found = list(run.findings)
        for name, graph in run.graphs.items():
            for finding in (
                hazards.nondeterministic_nodes(graph, top_level_nondeterministic.get(name, False)),
                hazards.transformer_fastpath(graph, run.check),
                hazards.device_constants(graph),
                hazards.train_mode_batchnorm(graph, self.python_runs),
            ):
                if finding is not None:
                    found.append(finding)
        cases = len(self.plan.check_sets) if self.plan.check_trace and run.error is None else 0
        runs = hazards.python_runs(self.python_runs, cases, mutated)
        if runs is not None:
            found.append(runs)
        return found


def output_warning_nodes(graph: Graph, case: CheckCase) -> list[int]:
    """Nodes an output-mismatch warning points at: the roots of the case, else the output producers."""
    if case.diff is not None:
        roots = [d.trace_node for d in case.diff.roots if d.trace_node is not None]
        if roots:
            return roots
    return [p.id for v in graph.outputs if (p := graph.producer(v)) is not None]


__all__ = ["trace", "trace_module"]
