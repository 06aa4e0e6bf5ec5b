"""The API: ``tj.trace`` / ``tj.trace_module`` take torch's arguments and return a :class:`~.run.TraceRun`,
never raising; :class:`TraceRequest` keeps what was asked so explorers can trace again with other options."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..caller import calls_from, find_caller
from ..capture import Reply, resume, stamp
from ..check import DEFAULT_TOLERANCE
from ..graph import Frame
from ..run import TraceRun
from ..target import target_of
from .options import TraceOptions
from .plan import ArgumentProblem, plan_trace, plan_trace_module
from .session import TraceSession


@dataclass(frozen=True)
class TraceRequest:
    """What a run was asked to do, with the live callable and inputs: enough to trace again.

    Kept on ``TraceRun.request`` (never serialized) so explorers can re-trace with other options.
    """

    #: ``"trace"`` or ``"trace_module"``
    kind: str
    target: Any
    #: ``trace``: the positional example inputs (or None); ``trace_module``: ``{method: inputs}``
    inputs: Any
    options: TraceOptions = field(default_factory=TraceOptions)
    #: ``trace`` only: the keyword example inputs
    example_kwarg_inputs: Any = None
    #: ``trace_module`` only: each method's inputs are keyword inputs
    example_inputs_is_kwarg: Any = False
    #: where the trace was asked for (see :mod:`.caller`); re-traces name the same place
    caller: Frame | None = field(default=None, compare=False)

    def run(self, **changes: Any) -> TraceRun:
        """Trace again with some options changed (the names of :class:`TraceOptions`), from the same call site."""
        options = self.options.replace(**changes)
        with calls_from(self.caller):
            if self.kind == "trace_module":
                return trace_module(
                    self.target,
                    self.inputs,
                    example_inputs_is_kwarg=self.example_inputs_is_kwarg,
                    **options.as_dict(),
                )
            return trace(self.target, self.inputs, example_kwarg_inputs=self.example_kwarg_inputs, **options.as_dict())

    def describe(self) -> dict[str, Any]:
        """What a run records of the request: its options (JSON-ready) and how the example inputs were passed."""
        described = self.options.to_json()
        if self.kind == "trace_module":
            described["example_inputs_is_kwarg"] = (
                self.example_inputs_is_kwarg
                if isinstance(self.example_inputs_is_kwarg, bool)
                else repr(self.example_inputs_is_kwarg)
            )
        else:
            kwargs = self.example_kwarg_inputs
            described["example_kwarg_inputs"] = (
                None if kwargs is None else sorted(map(str, kwargs)) if isinstance(kwargs, dict) else repr(kwargs)
            )
        return described


def _options(given: dict[str, Any]) -> TraceOptions:
    """The options among a function's locals (its keyword parameters named like :class:`TraceOptions` fields)."""
    return TraceOptions(**{name: given[name] for name in TraceOptions.names()})


def _refused(request: TraceRequest, problem: ArgumentProblem, started: float) -> TraceRun:
    """The run of a request that misuses the API: its error, nothing traced."""
    run = stamp(TraceRun(target=target_of(request.target), options=request.describe(), error=problem.error), started)
    run.request = request
    return run


def trace(
    func: Any,
    example_inputs: Any = None,
    *,
    check_trace: bool = True,
    check_inputs: Sequence[Any] | None = None,
    check_tolerance: float = DEFAULT_TOLERANCE,
    strict: bool = True,
    example_kwarg_inputs: dict[str, Any] | None = None,
    force_outplace: bool = False,
    module_mode: str = "as_is",
    no_grad: bool = False,
    probe: bool = False,
    probe_dims: Mapping[int | str, Sequence[int]] | None = None,
    target_device: str | None = None,
) -> TraceRun:
    """Trace ``func`` like ``torch.jit.trace`` and return everything it did as a :class:`TraceRun`.

    The options mean what they mean for ``torch.jit.trace`` (``force_outplace`` is its private
    ``_force_outplace``). Beyond torch: ``module_mode`` (``"train"`` / ``"eval"`` for this trace only,
    restored after), ``no_grad`` (trace under ``torch.no_grad()``), ``probe`` (also run the generalization
    probe on derived inputs; ``probe_dims`` marks dimensions to vary, ``{arg index or kwarg name: [dims]}``),
    ``target_device`` (where the traced model will run, e.g. ``"cuda"``, when not where it is traced: a device
    baked into the graph that differs is then a warning; otherwise it is a portability note).
    Each option is described in :data:`jupyter_tracejit.core.options.SPECS`.

    Never raises for a failure in the traced code or for bad arguments: see ``run.ok`` and ``run.error``.
    """
    started = time.perf_counter()
    options = _options(locals())
    caller = find_caller()
    request = TraceRequest(
        "trace", func, example_inputs, options, example_kwarg_inputs=example_kwarg_inputs, caller=caller
    )
    try:
        plan = plan_trace(func, example_inputs, example_kwarg_inputs, options)
    except ArgumentProblem as problem:
        return _refused(request, problem, started)
    except Exception as e:  # tj.trace never raises: a hostile object is the run's error too
        return _refused(request, ArgumentProblem.raised(e), started)
    # torch's calls are made from this frame, not from a helper: torch's tracer records every frame above the
    # traced code at each node it records (see .torchscript.calls); make_call written out
    steps = TraceSession(plan, request.describe(), caller).steps(started)
    step = resume(steps, None)
    while not isinstance(step, TraceRun):
        fn, args, kwargs = step
        try:
            reply: Reply = (fn(*args, **kwargs), None)
        except BaseException as e:  # the session restores state, then records it or re-raises an interrupt
            reply = (None, e)
        step = resume(steps, reply)
    step.request = request
    return step


def trace_module(
    mod: Any,
    inputs: Any,
    *,
    check_trace: bool = True,
    check_inputs: Sequence[Any] | None = None,
    check_tolerance: float = DEFAULT_TOLERANCE,
    strict: bool = True,
    example_inputs_is_kwarg: bool = False,
    force_outplace: bool = False,
    module_mode: str = "as_is",
    no_grad: bool = False,
    probe: bool = False,
    probe_dims: Mapping[int | str, Sequence[int]] | None = None,
    target_device: str | None = None,
) -> TraceRun:
    """Trace methods of a module like ``torch.jit.trace_module``: ``inputs`` maps method names to example
    inputs, ``check_inputs`` is a list of such dicts. Extra options as for :func:`trace`."""
    started = time.perf_counter()
    options = _options(locals())
    caller = find_caller()
    request = TraceRequest(
        "trace_module", mod, inputs, options, example_inputs_is_kwarg=example_inputs_is_kwarg, caller=caller
    )
    try:
        plan = plan_trace_module(mod, inputs, example_inputs_is_kwarg, options)
    except ArgumentProblem as problem:
        return _refused(request, problem, started)
    except Exception as e:  # as in trace()
        return _refused(request, ArgumentProblem.raised(e), started)
    steps = TraceSession(plan, request.describe(), caller).steps(started)  # driven from this frame, as in trace()
    step = resume(steps, None)
    while not isinstance(step, TraceRun):
        fn, args, kwargs = step
        try:
            reply: Reply = (fn(*args, **kwargs), None)
        except BaseException as e:
            reply = (None, e)
        step = resume(steps, reply)
    step.request = request
    return step


__all__ = ["TraceRequest", "trace", "trace_module"]
