"""A call typed by the user (``%trace model(x)``, ``tracejit trace FILE.py:NAME --inputs ...``) turned into a trace:
which of ``tj.trace`` / ``tj.trace_module`` to call, on what, with which check input sets. The magic and the CLI
read the call their own way (:mod:`...magic`, :mod:`...cli`) and hand it here (:class:`~..command.CaptureCall`)."""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from typing import Any

import torch

from ..command import CallProblem, Capture, CaptureCall, check_callable, check_input_list
from ..run import TraceRun
from ..target import CALL_NAMES, bound_module_method, target_of
from .backend import BACKEND
from .request import trace, trace_module

#: the magic's examples (the row's words), for a problem's correct use
EXAMPLES = BACKEND.command.examples if BACKEND.command is not None else {}


@dataclass
class Plan:
    """What to trace: ``trace(target, inputs, ...)`` or ``trace_module(target, {method: inputs}, ...)``."""

    kind: str
    target: Any
    inputs: Any
    is_kwarg: bool
    method: str | None = None


def plan_call(call: CaptureCall) -> Plan:
    """Which of ``tj.trace`` / ``tj.trace_module`` to call, on what."""
    callee, callee_text, method = call.callee, call.callee_text, call.extra.get("method")
    check_callable(callee, callee_text, "trace")
    if method is not None and (not method.isidentifier() or keyword.iskeyword(method)):
        raise CallProblem(f"--method needs a method name, got {method!r}", EXAMPLES["--method"])
    is_kwarg = bool(call.kwargs)
    inputs: Any = dict(call.kwargs) if is_kwarg else tuple(call.args)
    bound = bound_module_method(callee, call.attribute)
    if method is not None:
        if isinstance(callee, torch.nn.Module) and not isinstance(callee, torch.jit.ScriptModule):
            module, name = callee, method
            if not callable(getattr(module, name, None)):
                raise CallProblem(
                    f"--method {name}: {type(module).__name__} has no method {name!r}", EXAMPLES["--method"]
                )
        elif bound is not None:
            module, name = bound
            called = "forward" if name in CALL_NAMES else name
            if called != method:
                raise CallProblem(
                    f"--method {method} but CALL calls {callee_text!r} (method {called!r}); name the method CALL calls",
                    EXAMPLES["--method"],
                )
            name = called
        else:
            raise CallProblem(
                f"--method needs CALL to call an nn.Module or one of its methods, got {callee_text!r} "
                f"(a {type(callee).__name__})",
                EXAMPLES["--method"],
            )
        return Plan("trace_module", module, {name: inputs}, is_kwarg, method=name)
    if bound is not None:
        module, name = bound
        if name in CALL_NAMES:
            return Plan("trace", module, inputs, is_kwarg)
        return Plan("trace_module", module, {name: inputs}, is_kwarg, method=name)
    return Plan("trace", callee, inputs, is_kwarg)


def check_inputs_for(value: Any, expr: str, plan: Plan) -> list[Any]:
    """``--check-inputs``' value (written ``expr``), validated, in the form the chosen torch function takes."""
    example = EXAMPLES["check_inputs_kw" if plan.is_kwarg else "--check-inputs"]
    sets: list[Any] = []
    for i, item in enumerate(check_input_list(value, expr, example)):
        if plan.is_kwarg:
            if not isinstance(item, dict):
                raise CallProblem(
                    f"--check-inputs item {i} is a {type(item).__name__}, but CALL passes keyword inputs, so each "
                    "check input set must be a dict of them",
                    example,
                )
            sets.append(item)
        elif isinstance(item, torch.Tensor):
            sets.append((item,))  # torch's make_tuple: a lone tensor is a 1-tuple
        elif isinstance(item, (tuple, list)):
            sets.append(tuple(item))
        else:
            raise CallProblem(
                f"--check-inputs item {i} is a {type(item).__name__}; each check input set is a tuple of inputs "
                "like the call's arguments",
                example,
            )
    if plan.kind == "trace_module":
        return [{plan.method: s} for s in sets]
    return sets


def _trace(plan: Plan, check_inputs: list[Any] | None, options: dict[str, Any]) -> TraceRun:
    common: dict[str, Any] = {**options, "check_inputs": check_inputs}
    if plan.kind == "trace_module":
        return trace_module(plan.target, plan.inputs, example_inputs_is_kwarg=plan.is_kwarg, **common)
    if plan.is_kwarg:
        return trace(plan.target, None, example_kwarg_inputs=plan.inputs, **common)
    return trace(plan.target, plan.inputs, **common)


def target_name(plan: Plan) -> str:
    """What the progress line says is being traced: ``BertModel``, ``f``, ``Net.encode``."""
    name = target_of(plan.target).name
    return f"{name}.{plan.method}" if plan.method not in (None, "forward") else name


def capture(call: CaptureCall) -> Capture:
    """The trace a call asks for (the registry's ``command.capture`` of the TorchScript back end)."""
    plan = plan_call(call)
    check_inputs = call.expression("check_inputs", lambda value, expr: check_inputs_for(value, expr, plan))
    options = dict(call.options)
    return Capture(lambda: _trace(plan, check_inputs, options), target_name(plan))


__all__ = ["EXAMPLES", "Plan", "capture", "check_callable", "plan_call"]
