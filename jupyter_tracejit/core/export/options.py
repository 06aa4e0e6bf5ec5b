"""The options of an export (:class:`ExportOptions`): what each means, what is allowed, and how a run records them."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ..errors import TraceError, argument_error
from ..inputs import describe_inputs
from ..options import CommandLineError, OptionSpec

#: what ``draft`` takes: run ``torch.export.draft_export`` when export fails (its report and partial graph), always,
#: or never
DRAFT_CHOICES = ("on_failure", "always", "never")
MODULE_MODES = ("as_is", "train", "eval")
#: ``dynamic_shapes="auto"``: the dims that differ between the example and ``check_inputs`` become ``Dim.AUTO``
AUTO = "auto"


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _export_bool_spec(name: str, default: bool, doc: str, label: str) -> OptionSpec:
    return OptionSpec(name, default, "True or False", doc, f"Pass {name}=True or {name}=False.", label, _is_bool)


#: the export options the explorer's options bar offers (its ``options`` trait for an export run), what each
#: means and allows; explorer.schema.json ``ExportExplorerOptions`` writes them down for the front end (checked by
#: tests/widgets/test_explorer_schema.py). Defaults are :class:`ExportOptions`' own.
EXPORT_SPECS: dict[str, OptionSpec] = {
    spec.name: spec
    for spec in (
        _export_bool_spec(
            "strict", False, "strict export: trace with TorchDynamo's bytecode analysis (torch's strict=True)", "strict"
        ),
        OptionSpec(
            "draft",
            "on_failure",
            "one of " + ", ".join(repr(c) for c in DRAFT_CHOICES),
            "run torch.export.draft_export when export fails (its report and partial graph), always, or never",
            "draft='on_failure' runs draft_export only when export fails; 'always' runs it on success too; "
            "'never' skips it.",
            "draft",
            lambda v: v in DRAFT_CHOICES,
        ),
        OptionSpec(
            "module_mode",
            "as_is",
            "one of " + ", ".join(repr(m) for m in MODULE_MODES),
            "call .train() or .eval() on the module for this export only (restored after), or leave it as is",
            "Use 'eval' for inference, 'train' to export training behaviour, 'as_is' to leave the module alone.",
            "mode",
            lambda v: v in MODULE_MODES,
        ),
        _export_bool_spec("no_grad", False, "export under torch.no_grad()", "no_grad"),
    )
}
#: the options bar's export options, in display order (the keys of its ``options`` trait for an export run)
EXPORT_LIVE = ("strict", "draft", "module_mode", "no_grad")
#: export options the explorer shows but cannot change (they hold live tensors and torch ``Dim`` objects): a
#: re-export keeps the request's own
EXPORT_READ_ONLY = ("dynamic_shapes", "check_inputs")


@dataclass(frozen=True)
class ExportOptions:
    """Every option of an export. ``dynamic_shapes`` and ``strict`` mean what they mean for
    ``torch.export.export``; beyond torch: ``check_inputs`` (inputs to check ``ep.module()`` against the Python code
    on), ``draft``, ``compare_trace``, ``module_mode`` and ``no_grad``."""

    dynamic_shapes: Any = None
    strict: bool = False
    #: live input sets, each a tuple of positional inputs (or ``(args, kwargs)``)
    check_inputs: Sequence[Any] | None = None
    draft: str = "on_failure"
    compare_trace: bool = False
    module_mode: str = "as_is"
    no_grad: bool = False

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    def replace(self, **changes: Any) -> ExportOptions:
        """A copy with some options changed (``TypeError`` naming the options for a name that is not one)."""
        unknown = sorted(set(changes) - set(self.names()))
        if unknown:
            raise TypeError(f"unknown export option(s): {', '.join(unknown)}; known: {', '.join(self.names())}")
        return dataclasses.replace(self, **changes)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.names()}

    def problem(self) -> TraceError | None:
        """The first option whose value is not allowed (an ``ArgumentError`` naming the problem and the fix)."""
        for name in ("strict", "compare_trace", "no_grad"):
            if not isinstance(getattr(self, name), bool):
                return argument_error(
                    f"{name} must be True or False, got {getattr(self, name)!r}", f"Pass {name}=True or {name}=False."
                )
        if self.draft not in DRAFT_CHOICES:
            return argument_error(
                f"draft must be one of {', '.join(map(repr, DRAFT_CHOICES))}, got {self.draft!r}",
                "draft='on_failure' (the default) runs torch.export.draft_export only when export fails, to show "
                "its report and partial graph; 'always' runs it on success too; 'never' skips it.",
            )
        if self.module_mode not in MODULE_MODES:
            return argument_error(
                f"module_mode must be one of {', '.join(map(repr, MODULE_MODES))}, got {self.module_mode!r}",
                "module_mode='eval' exports in eval mode (dropout off, batch norm from running statistics) and puts "
                "the module back as it was; 'as_is' exports it as it is.",
            )
        if self.check_inputs is not None and (
            isinstance(self.check_inputs, (str, bytes, torch.Tensor)) or not isinstance(self.check_inputs, Sequence)
        ):
            return argument_error(
                f"check_inputs must be a list of input sets, got {type(self.check_inputs).__name__}",
                "Pass check_inputs=[(x2,), (x3,)]: each entry is the positional inputs of one call.",
            )
        if self.dynamic_shapes is not None and not isinstance(self.dynamic_shapes, (dict, tuple, list, str)):
            return argument_error(
                f"dynamic_shapes must be a dict by argument name or a tuple by position, got "
                f"{type(self.dynamic_shapes).__name__} {self.dynamic_shapes!r}"[:200],
                "Pass dynamic_shapes={'x': {0: torch.export.Dim('batch')}} (or a tuple in the order of the inputs, "
                "({0: torch.export.Dim('batch')},)), dynamic_shapes='auto' with check_inputs, or leave it out.",
                tag="dynamic_shapes_type",
            )
        if isinstance(self.dynamic_shapes, str) and self.dynamic_shapes != AUTO:
            return argument_error(
                f"dynamic_shapes={self.dynamic_shapes!r} is not a form torch or jupyter-tracejit knows",
                "Pass torch's forms (a dict by argument name, or a tuple by position, of {dim: Dim(...)}), or "
                "dynamic_shapes='auto' with check_inputs: the dims that differ between them become Dim.AUTO.",
            )
        if self.dynamic_shapes == AUTO and not self.check_inputs:
            return argument_error(
                "dynamic_shapes='auto' needs check_inputs: the dims that differ between the example and the check "
                "inputs become dynamic, and without check inputs none do",
                "Pass check_inputs=[(x_of_another_size,)], or torch's own dynamic_shapes (e.g. "
                "{'x': {0: torch.export.Dim.AUTO}}).",
            )
        return None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready (``RecordedExportOptions`` in ``run.schema.json``): check input sets described by their inputs,
        dynamic shapes by their text (a ``Dim`` prints as its name and range)."""
        return {
            "dynamic_shapes": None if self.dynamic_shapes is None else _shapes_text(self.dynamic_shapes),
            "strict": self.strict if isinstance(self.strict, bool) else repr(self.strict),
            "check_inputs": None
            if self.check_inputs is None
            else [describe_inputs(as_args(c)) for c in self.check_inputs]
            if isinstance(self.check_inputs, Sequence) and not isinstance(self.check_inputs, (str, bytes))
            else repr(self.check_inputs),
            "draft": self.draft if isinstance(self.draft, str) else repr(self.draft),
            "compare_trace": self.compare_trace if isinstance(self.compare_trace, bool) else repr(self.compare_trace),
            "module_mode": self.module_mode if isinstance(self.module_mode, str) else repr(self.module_mode),
            "no_grad": self.no_grad if isinstance(self.no_grad, bool) else repr(self.no_grad),
        }


class DynamicSpecError(ValueError):
    """A ``--dynamic`` spec that does not parse or names an impossible range; the message says the form."""


_DYNAMIC_SPEC = re.compile(
    r"^(?P<name>[A-Za-z_]\w*):(?P<dim>\d+)(?:=(?P<symbol>[A-Za-z_]\w*)(?:\[(?P<min>\d+)?,(?P<max>\d+)?\])?)?$"
)
DYNAMIC_FORM = "NAME:DIM, NAME:DIM=SYMBOL or NAME:DIM=SYMBOL[MIN,MAX] (x:0, x:0=batch, x:0=batch[2,64])"


def parse_dynamic(specs: Sequence[str]) -> dict[str, dict[int, Any]]:
    """``--dynamic`` specs (the magic's and the command line's) as torch's ``dynamic_shapes`` by argument name:
    ``x:0`` marks dim 0 of ``x`` ``Dim.AUTO`` (export names it), ``x:0=batch`` a ``Dim("batch")`` (one symbol
    wherever the name recurs: ``x:0=batch mask:0=batch``), ``x:0=batch[2,64]`` with its range."""
    dims: dict[str, Any] = {}
    shapes: dict[str, dict[int, Any]] = {}
    for spec in specs:
        m = _DYNAMIC_SPEC.match(spec.replace(" ", ""))
        if m is None:
            raise DynamicSpecError(f"--dynamic {spec!r} is not of the form {DYNAMIC_FORM}")
        name, dim, symbol = m["name"], int(m["dim"]), m["symbol"]
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
        shapes[name][dim] = value
    return shapes


# -- the command line (the ``tracejit export`` command and the ``%export`` magic) -----------------------------


def add_export_command_line(add_argument: Callable[..., Any]) -> None:
    """Declare the export options' flags, in help order, with ``add_argument`` (argparse's, or IPython's
    ``argument``); :func:`export_options_from_command_line` reads them back."""
    add_argument(
        "--dynamic",
        action="append",
        default=[],
        metavar="SPEC",
        help="a dynamic dimension, NAME:DIM (Dim.AUTO), NAME:DIM=SYMBOL or NAME:DIM=SYMBOL[MIN,MAX]; repeat for more",
    )
    add_argument(
        "--auto-dynamic",
        action="store_true",
        help="the dims that differ between the example inputs and --check-inputs become Dim.AUTO "
        "(dynamic_shapes='auto')",
    )
    add_argument(
        "--check-inputs",
        metavar="EXPR",
        default=None,
        help="input sets to check the exported program on: EXPR, Python evaluated like the example inputs, is a "
        "list of them, e.g. [(x2,), (x3,)]",
    )
    add_argument("--strict", action="store_true", help="strict=True: export through TorchDynamo")
    add_argument(
        "--draft",
        choices=DRAFT_CHOICES,
        default="on_failure",
        help="run torch.export.draft_export on failure (default), always, or never",
    )
    add_argument("--compare-trace", action="store_true", help="also trace the model and match the two graphs")
    add_argument("--eval", action="store_true", help="module_mode='eval': export in eval mode, restored after")
    add_argument("--train", action="store_true", help="module_mode='train': export in train mode, restored after")
    add_argument("--no-grad", action="store_true", help="no_grad=True: export under torch.no_grad()")


def export_options_from_command_line(namespace: Any) -> tuple[dict[str, Any], str | None]:
    """The export options a parsed command line sets (``check_inputs`` aside) and ``--check-inputs``' unevaluated
    text. Raises :class:`~..options.CommandLineError` for contradicting flags or a bad ``--dynamic`` spec."""
    if namespace.eval and namespace.train:
        raise CommandLineError("--eval", "--eval and --train contradict each other (each sets module_mode); give one")
    if namespace.auto_dynamic and namespace.dynamic:
        raise CommandLineError(
            "--auto-dynamic", "--auto-dynamic and --dynamic both say which dims vary: give one of them"
        )
    if namespace.auto_dynamic and namespace.check_inputs is None:
        raise CommandLineError(
            "--auto-dynamic",
            "--auto-dynamic needs --check-inputs: the dims that differ between the example and the check inputs "
            "become dynamic, and without check inputs none do",
        )
    try:
        dynamic = parse_dynamic(namespace.dynamic) if namespace.dynamic else None
    except DynamicSpecError as e:
        raise CommandLineError("--dynamic", str(e)) from None
    options = {
        "dynamic_shapes": AUTO if namespace.auto_dynamic else dynamic,
        "strict": namespace.strict,
        "draft": namespace.draft,
        "compare_trace": namespace.compare_trace,
        "module_mode": "eval" if namespace.eval else "train" if namespace.train else "as_is",
        "no_grad": namespace.no_grad,
    }
    return options, namespace.check_inputs


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


def _shapes_text(shapes: Any) -> str:
    """``{'x': {0: Dim('batch', min=2, max=64)}}`` as a short text, every bound written (torch's own repr leaves
    out a minimum of 2), hints as ``Dim.AUTO``."""
    if isinstance(shapes, str):
        return shapes
    if isinstance(shapes, dict):
        return "{" + ", ".join(f"{k!r}: {_shapes_text(v)}" for k, v in shapes.items()) + "}"
    if isinstance(shapes, (list, tuple)):
        inner = ", ".join(_shapes_text(v) for v in shapes)
        return f"[{inner}]" if isinstance(shapes, list) else f"({inner},)" if len(shapes) == 1 else f"({inner})"
    hint = getattr(shapes, "type", None)
    if hint is not None and type(shapes).__name__ == "_DimHint":
        return f"Dim.{getattr(hint, 'name', hint)}"
    name, low, high = getattr(shapes, "__name__", None), getattr(shapes, "min", None), getattr(shapes, "max", None)
    if isinstance(name, str) and low is not None:
        bounds = [f"min={low}"] + ([f"max={high}"] if isinstance(high, int) and not isinstance(high, bool) else [])
        return f"Dim({name!r}, {', '.join(bounds)})"
    return repr(shapes)


__all__ = [
    "AUTO",
    "DRAFT_CHOICES",
    "DYNAMIC_FORM",
    "EXPORT_LIVE",
    "EXPORT_READ_ONLY",
    "EXPORT_SPECS",
    "MODULE_MODES",
    "DynamicSpecError",
    "ExportOptions",
    "add_export_command_line",
    "as_args",
    "export_options_from_command_line",
    "export_support_problem",
    "parse_dynamic",
]
