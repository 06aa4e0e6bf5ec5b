"""The options of an export (:class:`ExportOptions`), as the export back end's table of the options framework
(:data:`EXPORT_TABLE`, :mod:`..options`): what each means, what is allowed, how a run records them, and their
command-line spelling (the ``tracejit export`` command and the ``%export`` magic)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..inputs import describe_inputs
from ..options import (
    BackendOptions,
    CommandLineError,
    Flag,
    OptionProblem,
    OptionSpec,
    OptionTable,
    bool_spec,
    choice_spec,
    mode_flags,
    module_mode_spec,
    specs_by_name,
)

#: what ``draft`` takes: ``on_request`` (a refused export is returned as soon as torch refuses, the draft offered:
#: ``run.draft()`` or the explorer runs it), ``on_failure`` (run ``torch.export.draft_export`` at once when export
#: fails: its report and partial graph), ``always`` (on success too), ``never`` (not even offered)
DRAFT_CHOICES = ("on_request", "on_failure", "always", "never")
#: ``dynamic_shapes="auto"``: the dims that differ between the example and ``check_inputs`` become ``Dim.AUTO``
AUTO = "auto"


def _is_dynamic_shapes(value: Any) -> bool:
    """torch's forms are checked by torch (and the session, which names the argument); here their types (torch's
    words for another were "object of type 'int' has no len()" and a bare AssertionError for a set)."""
    return value is None or isinstance(value, (dict, tuple, list, str))


def _is_input_sets(value: Any) -> bool:
    return value is None or (
        isinstance(value, Sequence) and not isinstance(value, (str, bytes)) and not isinstance(value, torch.Tensor)
    )


#: every export option, what it means and allows (defaults are :class:`ExportOptions`' own)
EXPORT_SPECS = specs_by_name(
    OptionSpec(
        "dynamic_shapes",
        None,
        "a dict by argument name or a tuple by position",
        'the dynamic_shapes the export was asked with (torch\'s form, or "auto"); a re-export keeps them',
        "Pass dynamic_shapes={'x': {0: torch.export.Dim('batch')}} (or a tuple in the order of the inputs, "
        "({0: torch.export.Dim('batch')},)), dynamic_shapes='auto' with check_inputs, or leave it out.",
        "dynamic_shapes",
        _is_dynamic_shapes,
        tag="dynamic_shapes_type",
    ),
    bool_spec(
        "strict", False, "strict export: trace with TorchDynamo's bytecode analysis (torch's strict=True)", "strict"
    ),
    OptionSpec(
        "check_inputs",
        None,
        "a list of input sets",
        "the input sets the exported program is checked against the Python code on; a re-export keeps them",
        "Pass check_inputs=[(x2,), (x3,)]: each entry is the positional inputs of one call.",
        "check inputs",
        _is_input_sets,
    ),
    choice_spec(
        "draft",
        DRAFT_CHOICES,
        "offer torch.export.draft_export when export fails (run.draft() runs it), run it at once when export fails "
        "(its report and partial graph), always, or never",
        "draft='on_request' returns a refused export at once and offers its draft (run.draft()); 'on_failure' "
        "runs draft_export at once when export fails; 'always' runs it on success too; 'never' skips it.",
        "draft",
        {
            "on_request": "draft on request",
            "on_failure": "draft on failure",
            "always": "draft always",
            "never": "no draft",
        },
    ),
    bool_spec("compare_trace", False, "also trace the model and match the two graphs", "compare trace"),
    module_mode_spec("export"),
    bool_spec("no_grad", False, "export under torch.no_grad()", "no_grad"),
)
#: the options bar's export options, in display order (the keys of its ``options`` trait for an export run)
EXPORT_LIVE = ("strict", "draft", "module_mode", "no_grad")
#: export options the explorer shows but cannot change (they hold live tensors and torch ``Dim`` objects): a
#: re-export keeps the request's own
EXPORT_READ_ONLY = ("dynamic_shapes", "check_inputs")


def _known_word(values: Mapping[str, Any]) -> OptionProblem | None:
    """A word for dynamic_shapes is ours ('auto'): another is a form nobody knows."""
    shapes = values.get("dynamic_shapes")
    if not isinstance(shapes, str) or shapes == AUTO:
        return None
    return OptionProblem(
        "dynamic_shapes",
        shapes,
        "",
        "Pass torch's forms (a dict by argument name, or a tuple by position, of {dim: Dim(...)}), or "
        "dynamic_shapes='auto' with check_inputs: the dims that differ between them become Dim.AUTO.",
        text=f"dynamic_shapes={shapes!r} is not a form torch or jupyter-tracejit knows",
    )


def _auto_needs_check_inputs(values: Mapping[str, Any]) -> OptionProblem | None:
    if values.get("dynamic_shapes") != AUTO or values.get("check_inputs"):
        return None
    return OptionProblem(
        "dynamic_shapes",
        AUTO,
        "",
        "Pass check_inputs=[(x_of_another_size,)], or torch's own dynamic_shapes (e.g. "
        "{'x': {0: torch.export.Dim.AUTO}}).",
        text="dynamic_shapes='auto' needs check_inputs: the dims that differ between the example and the check "
        "inputs become dynamic, and without check inputs none do",
    )


@dataclass(frozen=True)
class ExportOptions(BackendOptions):
    """Every option of an export. ``dynamic_shapes`` and ``strict`` mean what they mean for
    ``torch.export.export``; beyond torch: ``check_inputs`` (inputs to check ``ep.module()`` against the Python code
    on), ``draft``, ``compare_trace``, ``module_mode`` and ``no_grad``."""

    dynamic_shapes: Any = EXPORT_SPECS["dynamic_shapes"].default
    strict: bool = EXPORT_SPECS["strict"].default
    #: live input sets, each a tuple of positional inputs (or ``(args, kwargs)``)
    check_inputs: Sequence[Any] | None = EXPORT_SPECS["check_inputs"].default
    draft: str = EXPORT_SPECS["draft"].default
    compare_trace: bool = EXPORT_SPECS["compare_trace"].default
    module_mode: str = EXPORT_SPECS["module_mode"].default
    no_grad: bool = EXPORT_SPECS["no_grad"].default

    def json_value(self, name: str, value: Any) -> Any:
        """As ``RecordedExportOptions`` in ``run.schema.json`` has it: check input sets described by their inputs,
        dynamic shapes by their text (a ``Dim`` prints as its name and range); a value that is not allowed by its
        ``repr`` (the run's error says why)."""
        if value is None:
            return None
        if name == "dynamic_shapes":
            return shapes_text(value)
        if EXPORT_SPECS[name].problem(value) is not None:
            return repr(value)
        if name == "check_inputs":
            return [describe_inputs(as_args(c)) for c in value]
        return value


class DynamicSpecError(ValueError):
    """A ``--dynamic`` spec that does not parse or names an impossible range; the message says the form."""


_DYNAMIC_SPEC = re.compile(
    r"^(?P<name>[A-Za-z_]\w*):(?P<dim>\d+)"
    r"(?:=(?:(?P<times>\d+)\*)?(?P<symbol>[A-Za-z_]\w*)(?:\[(?P<min>\d+)?,(?P<max>\d+)?\])?)?$"
)
DYNAMIC_FORM = (
    "NAME:DIM, NAME:DIM=SYMBOL, NAME:DIM=SYMBOL[MIN,MAX] or NAME:DIM=K*SYMBOL[MIN,MAX] "
    "(x:0, x:0=batch, x:0=batch[2,64], x:1=8*seq[1,16])"
)


def parse_dynamic(specs: Sequence[str]) -> dict[str, dict[int, Any]]:
    """``--dynamic`` specs (the magic's and the command line's) as torch's ``dynamic_shapes`` by argument name:
    ``x:0`` marks dim 0 of ``x`` ``Dim.AUTO`` (export names it), ``x:0=batch`` a ``Dim("batch")`` (one symbol
    wherever the name recurs: ``x:0=batch mask:0=batch``), ``x:0=batch[2,64]`` with its range, ``x:1=8*seq[1,16]``
    a multiple of 8 (``8 * Dim("seq", min=1, max=16)``: torch's suggested fix ``seq = 8*_seq`` as a spec)."""
    dims: dict[str, Any] = {}
    shapes: dict[str, dict[int, Any]] = {}
    for spec in specs:
        m = _DYNAMIC_SPEC.match(spec.replace(" ", ""))
        if m is None:
            raise DynamicSpecError(f"--dynamic {spec!r} is not of the form {DYNAMIC_FORM}")
        name, dim, symbol = m["name"], int(m["dim"]), m["symbol"]
        times = int(m["times"]) if m["times"] is not None else 1
        if times < 2 and m["times"] is not None:
            raise DynamicSpecError(f"--dynamic {spec!r}: a multiple is 2* or more ({name}:{dim}={symbol} for 1*)")
        low = int(m["min"]) if m["min"] is not None else None
        high = int(m["max"]) if m["max"] is not None else None
        if low is not None and high is not None and low > high:
            raise DynamicSpecError(
                f"--dynamic {spec!r}: the range [{low},{high}] is empty (min > max); write {symbol}[{high},{low}]"
            )
        if symbol is None:
            value: Any = torch.export.Dim.AUTO
        elif symbol in dims and (low is not None or high is not None):
            raise DynamicSpecError(f"--dynamic {spec!r}: {symbol} has its range already; give it once")
        elif symbol in dims:
            value = dims[symbol]
        else:
            bounds = {k: v for k, v in (("min", low), ("max", high)) if v is not None}
            value = dims[symbol] = torch.export.Dim(symbol, **bounds)
        if dim in shapes.setdefault(name, {}):
            raise DynamicSpecError(f"--dynamic {spec!r}: {name}:{dim} is given twice")
        shapes[name][dim] = value * times if times > 1 else value
    return shapes


# -- the command line (the ``tracejit export`` command and the ``%export`` magic) -----------------------------


def _dynamic_flag(specs: list[str], flag: str) -> dict[str, dict[int, Any]]:
    try:
        return parse_dynamic(specs)
    except DynamicSpecError as e:
        raise CommandLineError(flag, str(e)) from None


#: the export options' flags, in help order
EXPORT_FLAGS: tuple[Flag, ...] = (
    Flag(
        "dynamic_shapes",
        "--dynamic",
        "a dynamic dimension, NAME:DIM (Dim.AUTO), NAME:DIM=SYMBOL, NAME:DIM=SYMBOL[MIN,MAX] or a multiple "
        "NAME:DIM=K*SYMBOL[MIN,MAX]; repeat for more",
        metavar="SPEC",
        parse=_dynamic_flag,
        repeat=True,
    ),
    Flag(
        "dynamic_shapes",
        "--auto-dynamic",
        "the dims that differ between the example inputs and --check-inputs become Dim.AUTO (dynamic_shapes='auto')",
        value=AUTO,
        needs=(
            (
                "check_inputs",
                "the dims that differ between the example and the check inputs become dynamic, and without check "
                "inputs none do",
            ),
        ),
    ),
    Flag(
        "check_inputs",
        "--check-inputs",
        "input sets to check the exported program on: EXPR, Python evaluated like the example inputs, is a list of "
        "them, e.g. [(x2,), (x3,)]",
        metavar="EXPR",
    ),
    Flag("strict", "--strict", "strict=True: export through TorchDynamo", value=True),
    Flag(
        "draft",
        "--draft",
        "on a refused export, offer torch.export.draft_export (on_request, the default: run.draft() runs it), run "
        "it at once (on_failure), always, or never",
        choices=DRAFT_CHOICES,
    ),
    Flag("compare_trace", "--compare-trace", "also trace the model and match the two graphs", value=True),
    *mode_flags("export"),
)

#: the export back end's options, as the options framework holds them (the registry's ``options``)
EXPORT_TABLE = OptionTable(
    noun="export",
    specs=EXPORT_SPECS,
    live=EXPORT_LIVE,
    read_only=EXPORT_READ_ONLY,
    flags=EXPORT_FLAGS,
    relations=(_known_word, _auto_needs_check_inputs),
)
ExportOptions.table = EXPORT_TABLE  # the flags are declared after the options


def export_support_problem() -> str | None:
    """Why the installed torch cannot run the export back end, or None. It needs ``torch.export`` with
    ``Dim.AUTO`` (torch's own dims it fills in), which the oldest torch this package supports (2.4) lacks; the back
    end is tested on torch 2.13 and 2.14."""
    export_module = getattr(torch, "export", None)
    dim = getattr(export_module, "Dim", None)
    if export_module is None or not hasattr(export_module, "export") or not hasattr(dim, "AUTO"):
        return (
            f"torch {torch.__version__} lacks what the export back end uses (torch.export.export with "
            "torch.export.Dim.AUTO); install a newer torch (the export back end is tested on 2.13 and 2.14), or "
            "trace with tj.trace"
        )
    return None


def as_args(inputs: Any) -> tuple[Any, ...]:
    """One input set as positional inputs: a lone tensor is one input."""
    return inputs if isinstance(inputs, tuple) else (inputs,)


def shapes_text(shapes: Any) -> str:
    """``{'x': {0: Dim('batch', min=2, max=64)}}`` as a short text, every bound written (torch's own repr leaves
    out a minimum of 2), hints as ``Dim.AUTO``, a multiple as ``8*Dim('_seq', min=1, max=8)``."""
    if isinstance(shapes, str):
        return shapes
    if isinstance(shapes, dict):
        return "{" + ", ".join(f"{k!r}: {shapes_text(v)}" for k, v in shapes.items()) + "}"
    if isinstance(shapes, (list, tuple)):
        inner = ", ".join(shapes_text(v) for v in shapes)
        return f"[{inner}]" if isinstance(shapes, list) else f"({inner},)" if len(shapes) == 1 else f"({inner})"
    hint = getattr(shapes, "type", None)
    if hint is not None and type(shapes).__name__ == "_DimHint":
        return f"Dim.{getattr(hint, 'name', hint)}"
    root, fn = getattr(shapes, "root", None), getattr(shapes, "fn", None)
    if root is not None and callable(fn):  # a derived dim (8*_seq): its root's range, not its own
        offset, times = fn(0), fn(1) - fn(0)
        return f"{times}*{shapes_text(root)}" + (f" + {offset}" if offset else "")
    name, low, high = getattr(shapes, "__name__", None), getattr(shapes, "min", None), getattr(shapes, "max", None)
    if isinstance(name, str) and low is not None:
        bounds = [f"min={low}"] + ([f"max={high}"] if isinstance(high, int) and not isinstance(high, bool) else [])
        return f"Dim({name!r}, {', '.join(bounds)})"
    return repr(shapes)


__all__ = [
    "AUTO",
    "DRAFT_CHOICES",
    "DYNAMIC_FORM",
    "EXPORT_FLAGS",
    "EXPORT_LIVE",
    "EXPORT_READ_ONLY",
    "EXPORT_SPECS",
    "EXPORT_TABLE",
    "DynamicSpecError",
    "ExportOptions",
    "as_args",
    "export_support_problem",
    "parse_dynamic",
    "shapes_text",
]
