"""A call typed by the user (``%compile model(x, mask=m)``, ``tracejit compile FILE.py:NAME --inputs ...``) turned
into a compiled run: what to compile (a module, or a function; a bound method of a module other than ``forward`` is
compiled as the function it is) and the further calls' input sets (``--calls``). The magic and the CLI read the
call their own way and hand it here (:class:`~..command.CaptureCall`)."""

from __future__ import annotations

from typing import Any

import torch

from ..command import CallProblem, Capture, CaptureCall, check_callable
from ..target import CALL_NAMES, bound_module_method, target_of
from ..words import with_article
from .backend import BACKEND
from .request import compile

#: the magic's examples (the row's words), for a problem's correct use
EXAMPLES = BACKEND.command.examples if BACKEND.command is not None else {}


def compile_target(call: CaptureCall) -> Any:
    """What to compile for CALL's callee: the module it calls (called, or its ``forward``), else the callee itself
    (a function, or a module's other method: torch.compile compiles any callable)."""
    check_callable(call.callee, call.callee_text, "compile")
    bound = bound_module_method(call.callee, call.attribute)
    if bound is not None and bound[1] in CALL_NAMES:
        return bound[0]
    return call.callee


def call_sets(value: Any, expr: str) -> list[Any]:
    """``--calls``' value: a list of input sets, each a tuple of positional inputs or a dict of keyword inputs (a
    lone tensor is one positional input, a list the positional inputs, as torch's make_tuple reads them)."""
    if isinstance(value, tuple):  # one call's inputs, or one call per item? tj.compile's calls is a list
        raise CallProblem(
            f"--calls {expr!r} is a tuple: pass a list with one input set per further call, [{expr.strip()}] for "
            "one call with these inputs (tj.compile's calls is a list too)",
            EXAMPLES["--calls"],
        )
    if not isinstance(value, list):
        raise CallProblem(
            f"--calls {expr!r} must evaluate to a list of input sets, one per further call, got "
            f"{with_article(type(value).__name__)}",
            EXAMPLES["--calls"],
        )
    sets: list[Any] = []
    for i, item in enumerate(value):
        if isinstance(item, torch.Tensor):
            sets.append((item,))
        elif isinstance(item, list):
            sets.append(tuple(item))
        elif isinstance(item, (tuple, dict)):
            sets.append(item)
        else:
            raise CallProblem(
                f"--calls item {i} is {with_article(type(item).__name__)}; each further call is a tuple of "
                "positional inputs like CALL's, or a dict of keyword inputs",
                EXAMPLES["--calls"],
            )
    return sets


def capture(call: CaptureCall) -> Capture:
    """The compiled run a call asks for (the registry's ``command.capture`` of the compile back end)."""
    model = compile_target(call)
    calls = call.expression("calls", call_sets)
    args, kwargs, options = call.inputs()
    return Capture(lambda: compile(model, args, kwargs, calls=calls, **options), target_of(model).name)


__all__ = ["EXAMPLES", "call_sets", "capture", "compile_target"]
