"""Options, defined once per back end: one framework that every back end's table fills in.

An :class:`OptionTable` holds a back end's options (an :class:`OptionSpec` each: default, what a valid value is, how
to fix a bad one, the explorer's label), which of them the explorer's options bar offers (``live``) or only shows
(``read_only``), the rules between options (``relations``), and their command-line spelling (:class:`Flag` s,
shared by the ``tracejit`` command and the magics). The API's keyword checks, the widget's options bar, the magics'
and the CLI's flags, their errors and the help all come from the table: each option is written once per back end,
under one name from the magic to torch (``check_tolerance``: ``--tol`` is only its flag).

The tables live in the back ends' packages (``core/torchscript/options.py`` ``TRACE_TABLE``,
``core/export/options.py`` ``EXPORT_TABLE``); the registry names each (:mod:`.registry`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self, cast

from .words import with_article


@dataclass(frozen=True)
class OptionProblem:
    """Why a value is not allowed for an option: ``"{name} must be {expects}, got {value!r}"`` plus a fix."""

    name: str
    value: Any
    expects: str
    hint: str
    #: the whole message, where a rule between options says it differently
    text: str = ""
    #: the run error's tag (``bad_argument`` unless the option names a more specific one)
    tag: str = "bad_argument"

    @property
    def message(self) -> str:
        return self.text or f"{self.name} must be {self.expects}, got {_shown(self.value)}"


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
    #: the values it takes, where they are few (the options bar offers them as a menu)
    choices: tuple[Any, ...] = ()
    #: the run error's tag for a bad value
    tag: str = "bad_argument"
    #: how the options bar offers it: ``checkbox``, ``menu`` (of ``choices``, read as ``choice_labels`` say),
    #: ``number`` (>= 0), ``device`` (a device name, empty for none), ``text`` or ``input_sets`` (a switch per set of
    #: the request); "" reads it from the default
    control: str = ""
    choice_labels: Mapping[Any, str] = field(default_factory=dict)

    @property
    def bar_control(self) -> str:
        if self.control:
            return self.control
        if self.choices:
            return "menu"
        return "checkbox" if isinstance(self.default, bool) else "text"

    def problem(self, value: Any) -> OptionProblem | None:
        return None if self.check(value) else OptionProblem(self.name, value, self.expects, self.hint, tag=self.tag)


def is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def specs_by_name(*specs: OptionSpec) -> dict[str, OptionSpec]:
    """A back end's options by name, in the order given (its table's, the bar's and the help's order)."""
    return {spec.name: spec for spec in specs}


def bool_spec(name: str, default: bool, doc: str, label: str) -> OptionSpec:
    """An option that is ``True`` or ``False``."""
    return OptionSpec(name, default, "True or False", doc, f"Pass {name}=True or {name}=False.", label, is_bool)


def choice_spec(
    name: str, choices: tuple[str, ...], doc: str, hint: str, label: str, labels: Mapping[str, str] | None = None
) -> OptionSpec:
    """An option that is one of a few words (the first is the default), each read in the bar's menu as ``labels``
    say (the word itself otherwise)."""
    expects = "one of " + ", ".join(repr(c) for c in choices)
    return OptionSpec(
        name, choices[0], expects, doc, hint, label, lambda v: v in choices, choices, choice_labels=labels or {}
    )


#: the options bar's key for input sets it toggles one by one (a trace's ``check_inputs``): the explorer cannot make
#: new sets, it switches the request's on and off
INPUT_SETS_KEY = "check_inputs_enabled"
#: ``module_mode``: leave the module alone, or ``.train()`` / ``.eval()`` it for this capture only
MODULE_MODES = ("as_is", "train", "eval")


def module_mode_spec(noun: str) -> OptionSpec:
    """Every back end's ``module_mode``, worded for its capture (``trace``, ``export``)."""
    return choice_spec(
        "module_mode",
        MODULE_MODES,
        f"call .train() or .eval() on the module for this {noun} only (restored after), or leave it as is",
        f"Use module_mode='eval' for inference (dropout off, batch norm from running statistics), 'train' to "
        f"{noun} training behaviour, 'as_is' to leave the module alone; it is put back as it was after.",
        "mode",
        {"as_is": "mode as is", "train": "train()", "eval": "eval()"},
    )


# -- the command line --------------------------------------------------------------------------------------------


class CommandLineError(ValueError):
    """A flag's value cannot be used; the message names the flag, what it needs and what it got."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(message)
        self.flag = flag


@dataclass(frozen=True)
class Flag:
    """One command-line flag of an option: a switch that sets ``value``; or one that takes text (``metavar``), read
    by ``parse`` (``(text, flag) -> value``; none: the text is Python to evaluate later, such as check inputs) or
    one of ``choices``; ``repeat``: it may be given again, the texts parsed together (a list to ``parse``)."""

    option: str
    flag: str
    help: str
    value: Any = None
    metavar: str = ""
    parse: Callable[[Any, str], Any] | None = None
    choices: tuple[str, ...] = ()
    repeat: bool = False
    #: options this flag needs set on the same command line, each with why
    needs: tuple[tuple[str, str], ...] = ()

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    @property
    def takes_value(self) -> bool:
        return bool(self.metavar or self.choices)

    @property
    def is_expression(self) -> bool:
        """Its text is Python, evaluated where the inputs are (``--check-inputs``)."""
        return bool(self.metavar) and self.parse is None and not self.choices


def mode_flags(noun: str, doing: str = "") -> tuple[Flag, Flag, Flag]:
    """``--eval``, ``--train`` and ``--no-grad``, worded for a back end that captures in that mode (``export``;
    ``doing``: what runs under ``torch.no_grad()`` when not just the capture, ``compile and call``)."""
    return (
        Flag("module_mode", "--eval", f"module_mode='eval': {noun} in eval mode, restored after", value="eval"),
        Flag("module_mode", "--train", f"module_mode='train': {noun} in train mode, restored after", value="train"),
        Flag("no_grad", "--no-grad", f"no_grad=True: {doing or noun} under torch.no_grad()", value=True),
    )


def _spelled(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


@dataclass(frozen=True)
class OptionTable:
    """A back end's options: every spec (in order), the options bar's, the rules between them, the flags."""

    #: the capture's noun in messages (``trace``, ``export``)
    noun: str
    specs: Mapping[str, OptionSpec]
    #: the options the explorer's options bar offers, in its order
    live: tuple[str, ...]
    #: options the bar shows but cannot change (live tensors, torch objects): a re-capture keeps the request's
    read_only: tuple[str, ...] = ()
    #: the command-line spellings, in help order
    flags: tuple[Flag, ...] = ()
    #: rules between options: each returns the problem of a combination, or None
    relations: tuple[Callable[[Mapping[str, Any]], OptionProblem | None], ...] = field(default=())

    def defaults(self) -> dict[str, Any]:
        return {name: spec.default for name, spec in self.specs.items()}

    def unknown(self, names: Any) -> TypeError | None:
        """The error for option names the table does not have, or None."""
        unknown = sorted(set(names) - set(self.specs))
        if not unknown:
            return None
        return TypeError(f"unknown {self.noun} option(s): {', '.join(unknown)}; known: {', '.join(sorted(self.specs))}")

    def problem(self, values: Mapping[str, Any]) -> OptionProblem | None:
        """The first option whose value is not allowed (in the table's order), then the first broken rule."""
        for name, spec in self.specs.items():
            if name in values:
                found = spec.problem(values[name])
                if found is not None:
                    return found
        return next((p for p in (rule(values) for rule in self.relations) if p is not None), None)

    # -- the command line --------------------------------------------------------------------------------------
    def add_command_line(self, add_argument: Callable[..., Any]) -> None:
        """Declare every flag with ``add_argument`` (argparse's, or IPython's ``argument``), in help order;
        :meth:`from_command_line` reads them back."""
        for f in self.flags:
            if f.repeat:
                add_argument(f.flag, dest=f.dest, action="append", default=[], metavar=f.metavar, help=f.help)
            elif f.choices:
                add_argument(f.flag, dest=f.dest, choices=f.choices, default=None, help=f.help)
            elif f.metavar:
                add_argument(f.flag, dest=f.dest, metavar=f.metavar, default=None, help=f.help)
            else:
                add_argument(f.flag, dest=f.dest, action="store_true", help=f.help)

    def from_command_line(self, namespace: Any) -> tuple[dict[str, Any], dict[str, str]]:
        """The options a parsed command line sets (only those given), and the unevaluated text of each expression
        flag by option (``{"check_inputs": "[(x2,)]"}``). Raises :class:`CommandLineError` for contradicting or
        bad flags."""
        given: dict[str, Any] = {}
        expressions: dict[str, str] = {}
        set_by: dict[str, str] = {}
        for f in self.flags:
            raw = getattr(namespace, f.dest, None)
            if raw is None or raw is False or raw == []:
                continue
            if f.option in set_by:
                raise CommandLineError(
                    set_by[f.option],
                    f"{set_by[f.option]} and {f.flag} contradict each other (each sets {f.option} for this "
                    f"{self.noun}); give one",
                )
            set_by[f.option] = f.flag
            if f.is_expression:
                expressions[f.option] = raw
            elif f.parse is not None:
                given[f.option] = f.parse(raw, f.flag)
            else:
                given[f.option] = raw if f.takes_value else f.value
        for f in self.flags:
            for option, why in f.needs if set_by.get(f.option) == f.flag else ():
                if option not in set_by:
                    needed = next(g.flag for g in self.flags if g.option == option)
                    raise CommandLineError(f.flag, f"{f.flag} needs {needed}: {why}")
        return given, expressions

    def command_line_spelling(self, text: str) -> str:
        """Advice written for the API (``strict=False``) spelled for the command line (``--non-strict``)."""
        for f in self.flags:
            if f.takes_value:
                text = re.sub(rf"\b{f.option}=(?=\S)", f"{f.flag} ", text)
            else:
                text = re.sub(rf"\b{f.option}={re.escape(_spelled(f.value))}(?![\w'])", f.flag, text)
        return text

    def bar_rows(self) -> list[dict[str, Any]]:
        """The options bar's options as the front end reads them (the registry writes them into the run schema), in
        order: the key of the bar's ``options`` trait (``check_inputs_enabled`` for input sets, toggled one by
        one), label, description, control, default and choices with their labels; read-only ones (shown, kept by a
        re-capture) flagged, after the live ones."""
        rows = []
        for name in (*self.live, *self.read_only):
            spec = self.specs[name]
            control = spec.bar_control
            key = INPUT_SETS_KEY if control == "input_sets" and name in self.live else name
            row: dict[str, Any] = {"key": key, "label": spec.label, "description": spec.doc, "control": control}
            if name in self.live:
                row["default"] = [] if key == INPUT_SETS_KEY else spec.default
            if spec.choices:
                row["choices"] = list(spec.choices)
                row["choice_labels"] = [spec.choice_labels.get(c, str(c)) for c in spec.choices]
            if name in self.read_only:
                row["read_only"] = True
            rows.append(row)
        return rows


class BackendOptions:
    """What every back end's options dataclass (``TraceOptions``, ``ExportOptions``, ``CompileOptions``) does the
    same way, from its :class:`OptionTable` (``table``): its names, a copy with some changed, the keywords, the first
    value not allowed (:func:`~.errors.option_error` makes it the run's ``ArgumentError``), the JSON a run records.
    Each keeps its own fields and its values' JSON rule (:meth:`json_value`)."""

    #: the back end's options table (its names, their checks)
    table: ClassVar[OptionTable]

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cast(Any, cls)))

    def replace(self, **changes: Any) -> Self:
        """A copy with some options changed (``TypeError`` naming the options for a name that is not one)."""
        unknown = self.table.unknown(changes)
        if unknown is not None:
            raise unknown
        return dataclasses.replace(cast(Any, self), **changes)

    def as_dict(self) -> dict[str, Any]:
        """The options as keywords for the back end's API (live values, not JSON)."""
        return {name: getattr(self, name) for name in self.names()}

    def to_json(self) -> dict[str, Any]:
        """JSON-ready, as a run records its options (the back end's ``Recorded...Options`` in ``run.schema.json``):
        each value as :meth:`json_value` writes it."""
        return {name: self.json_value(name, value) for name, value in self.as_dict().items()}

    def json_value(self, name: str, value: Any) -> Any:
        """One option's value as the run records it (each back end's own rule)."""
        raise NotImplementedError

    def first_problem(self) -> OptionProblem | None:
        """The first option whose value is not allowed (then the first broken rule between options), or None."""
        return self.table.problem(self.as_dict())


__all__ = [
    "INPUT_SETS_KEY",
    "MODULE_MODES",
    "BackendOptions",
    "CommandLineError",
    "Flag",
    "OptionProblem",
    "OptionSpec",
    "OptionTable",
    "bool_spec",
    "choice_spec",
    "is_bool",
    "mode_flags",
    "module_mode_spec",
    "specs_by_name",
]
