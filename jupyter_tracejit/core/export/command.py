"""A call typed by the user (``%export model(x, mask=m)``, ``tracejit export FILE.py:NAME --inputs ...``) turned
into an export: what to export (a module, or a function ``tj.export`` wraps) and the check input sets. The magic and
the CLI read the call their own way and hand it here (:class:`~..command.CaptureCall`)."""

from __future__ import annotations

from typing import Any

from ..command import CallProblem, Capture, CaptureCall, check_callable, check_input_list
from ..target import CALL_NAMES, bound_module_method, target_of
from .backend import BACKEND
from .dim_specs import argument_names, every_argument
from .request import export

#: the magic's examples (the row's words), for a problem's correct use
EXAMPLES = BACKEND.command.examples if BACKEND.command is not None else {}


def export_target(call: CaptureCall) -> Any:
    """What to export for CALL's callee: a module (called, or its ``forward``), or a function (tj.export wraps it)."""
    check_callable(call.callee, call.callee_text, "export")
    bound = bound_module_method(call.callee, call.attribute)
    if bound is None:
        return call.callee
    module, name = bound
    if name in CALL_NAMES:
        return module
    raise CallProblem(
        f"CALL calls {call.callee_text!r}, the method {name!r} of {type(module).__name__}, but torch.export exports "
        "a module's forward; call the module, or export a function that calls the method "
        f"(def f(x): return model.{name}(x))",
        None,
    )


def check_input_sets(value: Any, expr: str) -> list[Any]:
    """``--check-inputs``' value: a list of input sets, each as ``check_inputs`` of ``tj.export`` takes it (a tuple
    of positional inputs, a dict of keyword inputs, or an ``(args, kwargs)`` pair)."""
    return check_input_list(value, expr, EXAMPLES["--check-inputs"])


def capture(call: CaptureCall) -> Capture:
    """The export a call asks for (the registry's ``command.capture`` of the export back end)."""
    model = export_target(call)
    check_inputs = call.expression("check_inputs", check_input_sets)
    args, kwargs, options = call.inputs()
    # --dynamic names some arguments; torch wants every one of them in a dict (the others static)
    names = argument_names(model, args, kwargs)
    options["dynamic_shapes"] = every_argument(options.get("dynamic_shapes"), names)
    return Capture(lambda: export(model, args, kwargs, check_inputs=check_inputs, **options), target_of(model).name)


__all__ = ["EXAMPLES", "capture", "check_input_sets", "export_target"]
