"""The options of a trace, defined once: torch's own plus ours, their defaults, their validation and how each
front end spells them.

:class:`TraceOptions` is what ``tj.trace`` / ``tj.trace_module`` take as keywords, what a
:class:`~.request.TraceRequest` keeps to trace again, and (through :meth:`TraceOptions.to_json`) what a run
records. :data:`SPECS` says, per option, what a valid value is and how to fix a bad one; the API, the widget,
the ``%trace`` magic and the ``tracejit`` command all word their errors from it. :data:`COMMAND_LINE` is the
command-line spelling shared by the magic and the CLI (``--tol``, ``--non-strict``, ...), and :data:`LIVE`
names the options the explorer's options bar offers.

Names of ``check_inputs`` by where they live: the live input sets are ``TraceOptions.check_inputs``; a run's
JSON describes them by their shapes (``options.check_inputs``); the explorer's toggles of which sets to use are
``check_inputs_enabled``; the magic's and the CLI's unevaluated text is ``check_inputs_expr``.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .inputs import describe_inputs
from .jsonio import float_to_json
from .words import with_article

#: torch.jit.trace's default ``check_tolerance``, read from its signature (the same in every torch the CI matrix runs)
DEFAULT_TOLERANCE: float = inspect.signature(torch.jit.trace).parameters["check_tolerance"].default
#: how messages and help spell it
_DEFAULT_TOLERANCE_TEXT = f"{DEFAULT_TOLERANCE:g}".replace("e-0", "e-")  # 1e-5, as torch's docs write it
#: ``module_mode``: leave the module alone, or ``.train()`` / ``.eval()`` it for this trace only
MODULE_MODES = ("as_is", "train", "eval")


@dataclass(frozen=True)
class OptionProblem:
    """Why a value is not allowed for an option: ``"{name} must be {expects}, got {value!r}"`` plus a fix."""

    name: str
    value: Any
    expects: str
    hint: str

    @property
    def message(self) -> str:
        return f"{self.name} must be {self.expects}, got {_shown(self.value)}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else with_article(type(value).__name__)


@dataclass(frozen=True)
class OptionSpec:
    """One option: its default, what a valid value is, how to fix a bad one, and how the explorer labels it."""

    name: str
    default: Any
    #: what a valid value is, as a phrase that completes "must be ..." / "needs ..."
    expects: str
    #: what the option does (command-line help, the options bar's tooltip)
    doc: str
    #: how to fix a bad value
    hint: str
    #: the explorer's short label
    label: str
    check: Callable[[Any], bool]

    def problem(self, value: Any) -> OptionProblem | None:
        return None if self.check(value) else OptionProblem(self.name, value, self.expects, self.hint)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def is_tolerance(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value) and value >= 0


def _is_input_sets(value: Any) -> bool:
    return value is None or (isinstance(value, (list, tuple)) and not isinstance(value, torch.Tensor))


def is_device(value: Any) -> bool:
    """A device name torch understands (``"cuda"``, ``"cuda:0"``, ``"cpu"``, ``"mps"``), not a device object."""
    if not isinstance(value, str):
        return False
    try:
        torch.device(value)
    except (RuntimeError, ValueError):
        return False
    return True


def _is_target_device(value: Any) -> bool:
    return value is None or is_device(value)


def _is_probe_dims(value: Any) -> bool:
    if value is None:
        return True
    if not isinstance(value, Mapping):
        return False
    for key, dims in value.items():
        if isinstance(key, bool) or not isinstance(key, (int, str)):
            return False
        items = [dims] if isinstance(dims, int) else dims
        if not isinstance(items, Sequence) or isinstance(items, str):
            return False
        if not all(isinstance(d, int) and not isinstance(d, bool) for d in items):
            return False
    return True


def _bool_spec(name: str, default: bool, doc: str, label: str) -> OptionSpec:
    return OptionSpec(name, default, "True or False", doc, f"Pass {name}=True or {name}=False.", label, _is_bool)


SPECS: dict[str, OptionSpec] = {
    spec.name: spec
    for spec in (
        _bool_spec("check_trace", True, "check the trace by re-tracing and comparing outputs", "check"),
        OptionSpec(
            "check_inputs",
            None,
            "a list of input sets",
            "the input sets to check the trace with (default: the example inputs)",
            "Pass a list with one tuple per input set, e.g. check_inputs=[(x2,), (x3,)].",
            "check inputs",
            _is_input_sets,
        ),
        OptionSpec(
            "check_tolerance",
            DEFAULT_TOLERANCE,
            "a finite number >= 0",
            f"relative tolerance of the check's output comparison (default {_DEFAULT_TOLERANCE_TEXT})",
            f"torch's default is {_DEFAULT_TOLERANCE_TEXT}; relax it (e.g. 1e-3) for fused or reordered float math.",
            "tol",
            is_tolerance,
        ),
        _bool_spec("strict", True, "strict mode: reject mutable containers (list/dict) at the output", "strict"),
        _bool_spec(
            "force_outplace",
            False,
            "torch's private _force_outplace: record in-place ops as their out-of-place versions",
            "force_outplace",
        ),
        OptionSpec(
            "module_mode",
            "as_is",
            "one of " + ", ".join(repr(m) for m in MODULE_MODES),
            "call .train() or .eval() on the module for this trace only (restored after), or leave it as is",
            "Use 'eval' for inference, 'train' to trace training behaviour, 'as_is' to leave the module alone.",
            "mode",
            lambda v: v in MODULE_MODES,
        ),
        _bool_spec("no_grad", False, "trace under torch.no_grad()", "no_grad"),
        _bool_spec("probe", False, "also run the generalization probe on derived inputs", "probe"),
        OptionSpec(
            "probe_dims",
            None,
            "a dict of {argument index or keyword name: [dims]}",
            "the input dimensions the probe varies (default: the ones that look dynamic)",
            "probe_dims maps an argument index (or keyword name) to dimensions of that input, "
            "e.g. probe_dims={0: [1]}.",
            "probe dims",
            _is_probe_dims,
        ),
        OptionSpec(
            "target_device",
            None,
            "a device name such as 'cuda', 'cuda:0' or 'cpu', or None",
            "the device the traced model will run on, when not the one it is traced on: a device baked into the "
            "graph that differs from it is a warning (default: where it is traced)",
            "Pass the device the traced model is served on as text, e.g. target_device='cuda', or None.",
            "target device",
            _is_target_device,
        ),
    )
}

#: options the explorer's options bar offers (its ``options`` trait), in display order
LIVE = (
    "strict",
    "check_trace",
    "check_tolerance",
    "check_inputs",
    "force_outplace",
    "module_mode",
    "no_grad",
    "target_device",
)


@dataclass(frozen=True)
class TraceOptions:
    """Every option of a trace. The torch ones mean what they mean for ``torch.jit.trace``
    (``force_outplace`` is its private ``_force_outplace``); beyond torch: ``module_mode``, ``no_grad``,
    ``probe``, ``probe_dims`` and ``target_device``. Unvalidated until :meth:`problem` is asked: a bad value is
    the user's to fix, and a run records it rather than raising."""

    check_trace: bool = SPECS["check_trace"].default
    #: live input sets: a list of tuples (or of ``{method: inputs}`` dicts for ``trace_module``)
    check_inputs: Sequence[Any] | None = SPECS["check_inputs"].default
    check_tolerance: float = SPECS["check_tolerance"].default
    strict: bool = SPECS["strict"].default
    force_outplace: bool = SPECS["force_outplace"].default
    module_mode: str = SPECS["module_mode"].default
    no_grad: bool = SPECS["no_grad"].default
    probe: bool = SPECS["probe"].default
    #: ``{argument index or keyword name: [dims]}``
    probe_dims: Mapping[int | str, Sequence[int]] | None = SPECS["probe_dims"].default
    #: where the traced model will run (``"cuda"``), when not where it is traced; ``None``: where it is traced
    target_device: str | None = SPECS["target_device"].default

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_kwargs(cls, **given: Any) -> TraceOptions:
        """Options from keywords; ``TypeError`` naming the known options for a name that is not one."""
        unknown = sorted(set(given) - set(SPECS))
        if unknown:
            raise TypeError(f"unknown trace option(s): {', '.join(unknown)}; known: {', '.join(sorted(SPECS))}")
        return cls(**given)

    def replace(self, **changes: Any) -> TraceOptions:
        """A copy with some options changed (``TypeError`` for a name that is not an option)."""
        return TraceOptions.from_kwargs(**{**self.as_dict(), **changes})

    def as_dict(self) -> dict[str, Any]:
        """The options as keywords for ``tj.trace`` (live values, not JSON)."""
        return {name: getattr(self, name) for name in self.names()}

    def problem(self) -> OptionProblem | None:
        """The first option whose value is not allowed, or None."""
        for name in self.names():
            found = SPECS[name].problem(getattr(self, name))
            if found is not None:
                return found
        return None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready (``RecordedOptions`` in ``run.schema.json``): check input sets described by their inputs,
        probe dims keyed by strings; a value that is not allowed by its ``repr`` (the run's error says why)."""
        out: dict[str, Any] = {}
        for name in self.names():
            value = getattr(self, name)
            if value is None:
                out[name] = None
            elif SPECS[name].problem(value) is not None:
                out[name] = repr(value)
            elif name == "check_inputs":
                out[name] = [describe_inputs(c) for c in value]
            elif name == "probe_dims":
                out[name] = {str(k): [d] if isinstance(d, int) else list(d) for k, d in value.items()}
            elif isinstance(value, float):
                out[name] = float_to_json(value)
            else:
                out[name] = value
        return out


# -- the command line (the %trace magic and the tracejit command) -------------------------------------------


@dataclass(frozen=True)
class Flag:
    """One command-line flag of an option: a switch that sets ``value``, or (``metavar``) one that takes text."""

    option: str
    flag: str
    help: str
    value: Any = None
    metavar: str = ""

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


#: the command-line spellings, in help order; ``--eval`` and ``--train`` exclude each other
COMMAND_LINE: tuple[Flag, ...] = (
    Flag("check_trace", "--no-check", "check_trace=False: skip the re-trace check", value=False),
    Flag(
        "check_inputs",
        "--check-inputs",
        "check_inputs: EXPR, Python evaluated like the example inputs, is a list of input sets to check with, "
        "e.g. [(x2,), (x3,)]; a list of dicts for keyword inputs",
        metavar="EXPR",
    ),
    Flag(
        "check_tolerance",
        "--tol",
        f"check_tolerance (default {_DEFAULT_TOLERANCE_TEXT}), e.g. --tol 1e-4",
        metavar="FLOAT",
    ),
    Flag("strict", "--non-strict", "strict=False: allow mutable container (list/dict) outputs", value=False),
    Flag(
        "force_outplace",
        "--force-outplace",
        "_force_outplace=True: record in-place ops as their out-of-place versions",
        value=True,
    ),
    Flag("module_mode", "--eval", "module_mode='eval': call .eval() for this trace only, restored after", value="eval"),
    Flag(
        "module_mode",
        "--train",
        "module_mode='train': call .train() for this trace only, restored after",
        value="train",
    ),
    Flag("no_grad", "--no-grad", "no_grad=True: trace under torch.no_grad()", value=True),
    Flag("probe", "--probe", "probe=True: also run the generalization probe", value=True),
    Flag(
        "target_device",
        "--target-device",
        "target_device: the device the traced model will run on (e.g. cuda), when not the one it is traced on; a "
        "device baked into the graph that differs is a warning",
        metavar="DEVICE",
    ),
)


class CommandLineError(ValueError):
    """A flag's value cannot be used; the message names the flag, what it needs and what it got."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(message)
        self.flag = flag


def add_command_line(add_argument: Callable[..., Any]) -> None:
    """Declare every flag of :data:`COMMAND_LINE` with ``add_argument`` (argparse's, or IPython's ``argument``).

    Switches store their value under the flag's own ``dest``; :func:`from_command_line` turns them into options.
    """
    for f in COMMAND_LINE:
        if f.metavar:
            add_argument(f.flag, dest=f.dest, metavar=f.metavar, default=None, help=f.help)
        else:
            add_argument(f.flag, dest=f.dest, action="store_true", help=f.help)


def _spelled(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def command_line_spelling(text: str) -> str:
    """Advice written for the API (``strict=False``) spelled for the command line (``--non-strict``)."""
    for f in COMMAND_LINE:
        if f.metavar:
            text = re.sub(rf"\b{f.option}=(?=\S)", f"{f.flag} ", text)
        else:
            text = re.sub(rf"\b{f.option}={re.escape(_spelled(f.value))}(?![\w'])", f.flag, text)
    return text


def parse_tolerance(text: str, flag: str = "--tol") -> float:
    """``--tol``'s value as a float, or :class:`CommandLineError` saying what it needs."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if not is_tolerance(value):
        spec = SPECS["check_tolerance"]
        raise CommandLineError(
            flag,
            f"{flag} needs {spec.expects} (torch's check_tolerance, default {_DEFAULT_TOLERANCE_TEXT}), got {text!r}",
        )
    return value


def parse_device(text: str, flag: str = "--target-device") -> str:
    """``--target-device``'s value, or :class:`CommandLineError` saying what it needs."""
    if not is_device(text):
        raise CommandLineError(
            flag, f"{flag} needs {SPECS['target_device'].expects.removesuffix(', or None')}, got {text!r}"
        )
    return text


def from_command_line(namespace: Any) -> tuple[dict[str, Any], str | None]:
    """The options a parsed command line sets (only those given), and ``--check-inputs``' unevaluated text.

    Raises :class:`CommandLineError` for contradicting or bad flags.
    """
    given: dict[str, Any] = {}
    set_by: dict[str, str] = {}
    check_inputs_expr: str | None = None
    for f in COMMAND_LINE:
        raw = getattr(namespace, f.dest, None)
        if f.metavar:
            if raw is None:
                continue
            if f.option == "check_inputs":
                check_inputs_expr = raw
                continue
            given[f.option] = (
                parse_tolerance(raw, f.flag) if f.option == "check_tolerance" else parse_device(raw, f.flag)
            )
        elif raw:
            if f.option in set_by:
                raise CommandLineError(
                    f.flag,
                    f"{set_by[f.option]} and {f.flag} contradict each other (each sets {f.option} for this trace); "
                    "give one",
                )
            set_by[f.option] = f.flag
            given[f.option] = f.value
    return given, check_inputs_expr


__all__ = [
    "COMMAND_LINE",
    "DEFAULT_TOLERANCE",
    "LIVE",
    "MODULE_MODES",
    "SPECS",
    "CommandLineError",
    "Flag",
    "OptionProblem",
    "OptionSpec",
    "TraceOptions",
    "add_command_line",
    "command_line_spelling",
    "from_command_line",
    "is_device",
    "parse_device",
    "parse_tolerance",
]
