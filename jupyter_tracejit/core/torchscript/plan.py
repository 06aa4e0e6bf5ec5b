"""From what the user asked to a validated :class:`TracePlan`: what to trace, on which inputs, checked how.

Misuse of the API (a non-callable, bad options, check inputs that are not a list...) raises
:class:`ArgumentProblem`, which the caller records as the run's ``ArgumentError``: nothing here runs user code.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ..errors import TraceError, argument_error
from ..inputs import make_tuple
from ..request import not_a_dict
from ..run import Target
from ..target import target_of
from .options import TraceOptions


class ArgumentProblem(Exception):
    """A misuse of ``tj.trace`` / ``tj.trace_module``; ``error`` is what the run records."""

    def __init__(self, message: str, hint: str, tag: str = "bad_argument") -> None:
        super().__init__(message)
        self.error: TraceError = argument_error(message, hint, tag)

    @classmethod
    def raised(cls, exc: Exception) -> ArgumentProblem:
        """Inspecting the arguments raised (a hostile ``__getattr__``, a property that fails): the run's error,
        since ``tj.trace`` never raises."""
        problem = cls(
            f"inspecting what to trace raised {type(exc).__name__}: {exc}",
            "The object passed to trace raises when its attributes are read; trace a plain function or an "
            "nn.Module whose attributes can be read.",
        )
        problem.error.type = type(exc).__name__
        problem.error.traceback = "".join(traceback.format_exception(exc))
        return problem


@dataclass
class TracePlan:
    """A validated request: what to trace, with which inputs, and how to check it."""

    target: Target
    options: TraceOptions
    #: the nn.Module for trace_module (and for a module traced with trace), else None
    module: torch.nn.Module | None = None
    #: the function (or already-scripted module) for trace, else None
    func: Callable[..., Any] | None = None
    #: method name -> example inputs (positional tuple, or a dict when is_kwarg)
    inputs: dict[str, Any] = field(default_factory=dict)
    is_kwarg: bool = False
    #: check input sets: for modules a list of {method: inputs}; for functions a list of inputs
    check_sets: list[Any] = field(default_factory=list)
    check_labels: list[str] = field(default_factory=list)

    @property
    def probe_dims(self) -> Mapping[int | str, Sequence[int]] | None:
        return self.options.probe_dims


def _validate(options: TraceOptions) -> None:
    problem = options.first_problem()
    if problem is not None:
        raise ArgumentProblem(problem.message, problem.hint)


def _as_args(inputs: Any, is_kwarg: bool) -> Any:
    if is_kwarg:
        return inputs
    try:
        return make_tuple(inputs)
    except TypeError:
        raise ArgumentProblem(
            f"example inputs must be a tensor or a tuple of inputs, got {type(inputs).__name__}",
            "Pass example_inputs=(x,) or example_inputs=(x, y).",
        ) from None


def _check_sets(plan: TracePlan, given: Sequence[Any] | None, default: Any, wrap: Callable[[Any], Any]) -> None:
    """The check input sets (``wrap`` puts each into the form the session runs), or the example inputs."""
    if not plan.options.check_trace:
        return
    if given is not None:
        plan.check_sets = [wrap(c) for c in given]
        plan.check_labels = [f"check_inputs[{i}]" for i in range(len(given))]
    else:
        plan.check_sets = [default]
        plan.check_labels = ["example inputs"]


def plan_trace(func: Any, example_inputs: Any, example_kwarg_inputs: Any, options: TraceOptions) -> TracePlan:
    """Validate a ``tj.trace`` call; raises :class:`ArgumentProblem`."""
    _validate(options)
    if not callable(func):
        raise ArgumentProblem(
            f"tj.trace needs a function or nn.Module to trace, got {type(func).__name__}",
            "Pass the model or function itself, e.g. tj.trace(model, x) — not model(x).",
        )
    not_dict = not_a_dict(
        example_kwarg_inputs,
        "example_kwarg_inputs",
        "keyword inputs",
        "Pass example_kwarg_inputs={'x': x, 'mask': m}.",
        dict,
    )
    if not_dict is not None:
        raise ArgumentProblem(not_dict.message, not_dict.hint)
    if example_inputs is None and example_kwarg_inputs is None:
        raise ArgumentProblem(
            "no example inputs: torch.jit.trace runs the function once on example inputs",
            "Pass example_inputs=(x,) or example_kwarg_inputs={'x': x}.",
        )
    check_inputs = options.check_inputs
    is_kwarg = isinstance(example_kwarg_inputs, dict)
    if is_kwarg and isinstance(example_inputs, tuple) and not example_inputs:
        example_inputs = None  # (), {...}: the inputs are the keyword ones (torch would trace with none)
    if is_kwarg and check_inputs is not None:
        for i, c in enumerate(check_inputs):
            if not isinstance(c, dict):
                raise ArgumentProblem(
                    f"check_inputs[{i}] is a {type(c).__name__}, but keyword example inputs need dict check inputs",
                    "Pass check_inputs=[{'x': x2}, ...] matching example_kwarg_inputs.",
                )
    target = target_of(func)
    if isinstance(func, torch.jit.ScriptModule):
        return TracePlan(target=target, options=options, func=func, is_kwarg=is_kwarg)
    module: torch.nn.Module | None = None
    if isinstance(func, torch.nn.Module):
        module = func
    elif isinstance(getattr(func, "__self__", None), torch.nn.Module) and getattr(func, "__name__", "") == "forward":
        module = func.__self__
    if module is not None:
        # torch.jit.trace on a module is trace_module with {"forward": inputs}
        given = example_kwarg_inputs if example_inputs is None else example_inputs
        plan = TracePlan(
            target=target,
            options=options,
            module=module,
            inputs={"forward": _as_args(given, is_kwarg)},
            is_kwarg=is_kwarg,
        )
        _check_sets(plan, check_inputs, {"forward": given}, lambda c: {"forward": c})
        return plan
    args = example_kwarg_inputs if is_kwarg else _as_args(example_inputs, False)
    plan = TracePlan(target=target, options=options, func=func, inputs={"forward": args}, is_kwarg=is_kwarg)
    _check_sets(plan, check_inputs, args, lambda c: c)
    return plan


def plan_trace_module(mod: Any, inputs: Any, example_inputs_is_kwarg: Any, options: TraceOptions) -> TracePlan:
    """Validate a ``tj.trace_module`` call; raises :class:`ArgumentProblem`."""
    _validate(options)
    if not isinstance(mod, torch.nn.Module):
        raise ArgumentProblem(
            f"trace_module expects an nn.Module, got {type(mod).__name__}",
            "For a plain function use tj.trace(func, example_inputs).",
        )
    if isinstance(mod, torch.jit.ScriptModule):
        raise ArgumentProblem(
            f"{type(mod).__name__} is already TorchScript; there is nothing to trace",
            "Trace the original nn.Module, or look at script_module.graph directly.",
            tag="already_script",
        )
    if not isinstance(inputs, dict) or not inputs:
        raise ArgumentProblem(
            "trace_module expects a non-empty dict of {method_name: example_inputs}",
            "For example: tj.trace_module(model, {'forward': (x,), 'encode': (y,)}).",
        )
    for name in inputs:
        if not isinstance(name, str) or not callable(getattr(mod, name, None)):
            raise ArgumentProblem(
                f"{type(mod).__name__} has no method {name!r}",
                "The keys of inputs must be method names of the module, e.g. {'forward': (x,)}.",
            )
        attribute = getattr(mod, name)
        if isinstance(attribute, torch.nn.Module) and options.check_trace:
            # torch records the submodule's forward as a method of mod, then its check re-traces the submodule
            # itself with the same method name and raises AttributeError
            raise ArgumentProblem(
                f"{name!r} is a submodule of {type(mod).__name__} ({type(attribute).__name__}), not a method: "
                "torch.jit.trace_module's check fails on it (AttributeError)",
                f"Trace the submodule itself: tj.trace_module(model.{name}, {{'forward': inputs}}), "
                f"or tj.trace(model.{name}, inputs).",
            )
    if not isinstance(example_inputs_is_kwarg, bool):
        raise ArgumentProblem(
            f"example_inputs_is_kwarg must be True or False, got {example_inputs_is_kwarg!r}",
            "Pass example_inputs_is_kwarg=True when each method's example inputs are a dict of keyword inputs, "
            "else False.",
        )
    if example_inputs_is_kwarg:
        for name, value in inputs.items():
            if not isinstance(value, dict):
                raise ArgumentProblem(
                    f"example_inputs_is_kwarg=True but the inputs of {name!r} are a {type(value).__name__}",
                    "Give each method a dict of keyword inputs, e.g. {'forward': {'x': x}}.",
                )
    check_inputs = options.check_inputs
    if check_inputs is not None:
        for i, c in enumerate(check_inputs):
            if not isinstance(c, dict):
                raise ArgumentProblem(
                    f"check_inputs[{i}] is a {type(c).__name__}; trace_module needs dicts like its inputs",
                    "Pass check_inputs=[{'forward': (x2,)}, ...].",
                )
    plan = TracePlan(
        target=target_of(mod),
        options=options,
        module=mod,
        inputs={name: _as_args(v, example_inputs_is_kwarg) for name, v in inputs.items()},
        is_kwarg=example_inputs_is_kwarg,
    )
    _check_sets(plan, check_inputs, inputs, lambda c: c)
    return plan


__all__ = ["ArgumentProblem", "TracePlan", "plan_trace", "plan_trace_module"]
