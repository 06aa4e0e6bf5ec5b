"""The ``%trace`` line, read: its words (quoting as a shell would, brackets kept whole), its options (the trace
options of :data:`~.core.torchscript.options.TRACE_TABLE` plus the magic's own), and the call to trace, checked
for its shape before anything runs. Every problem is a :class:`MagicError`: one line with the problem and an example.
``%export`` reads its line with the same functions, given its own :class:`Grammar` (:mod:`.magic_export`).
"""

from __future__ import annotations

import ast
import keyword
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from IPython.core.error import UsageError
from IPython.utils.process import arg_split  # type: ignore[attr-defined]  # IPython's public helper, not in __all__

from .core.options import CommandLineError
from .core.torchscript.options import COMMAND_LINE, TRACE_TABLE

#: where the run goes without ``-o`` (like ``_`` for the last output)
DEFAULT_OUTPUT = "_trace"
#: the magic's own options (the trace options come from :data:`jupyter_tracejit.core.torchscript.options.COMMAND_LINE`)
_OWN_VALUE_OPTIONS = ("-o", "--method")
_OWN_SWITCHES = ("--static", "--quiet")
#: options followed by a value; the value may be glued with ``=`` (``--tol=1e-4``) or come as the next word
_VALUE_OPTIONS = frozenset({*_OWN_VALUE_OPTIONS, *(f.flag for f in COMMAND_LINE if f.metavar)})
#: every option, in help order, for the "unknown option" message
_ALL_OPTIONS = (*_OWN_VALUE_OPTIONS, *(f.flag for f in COMMAND_LINE), *_OWN_SWITCHES)
#: names of bound methods that mean "call the module" rather than "trace this method"
CALL_NAMES = frozenset({"forward", "__call__", "_call_impl", "_wrapped_call_impl"})


def example_of(name: str) -> str:
    """The plainest use of the magic ``name``: what an error's example is when nothing more specific fits."""
    return f"%{name} model(x)"


EXAMPLE = example_of("trace")
EXAMPLES = {
    "kwargs": "%trace model(input_ids=ids, mask=m)",
    "method": "%trace --method encode model.encode(x)",
    "check_inputs": "%trace --check-inputs [(x2,), (x3,)] model(x)",
    "check_inputs_kw": "%trace --check-inputs [dict(x=x2), dict(x=x3)] model(x=x)",
    "tol": "%trace --tol 1e-4 model(x)",
    "target_device": "%trace --target-device cuda model(x)",
    "output": "%trace -o run model(x)",
    "mode": "%trace --eval model(x)",
}

_VALUE_EXAMPLES = {
    "-o": EXAMPLES["output"],
    "--method": EXAMPLES["method"],
    "--tol": EXAMPLES["tol"],
    "--check-inputs": EXAMPLES["check_inputs"],
    "--target-device": EXAMPLES["target_device"],
}


@dataclass(frozen=True)
class Grammar:
    """What differs between the lines of the magics (``%trace``, ``%export``); the rest is read alike."""

    #: the magic's name, also the verb of its messages ("the call to trace")
    name: str
    #: the options followed by a value, each with an example of its use (None: the magic's plainest)
    value_examples: Mapping[str, str | None]
    #: every option, in help order, for the "unknown option" message
    options: tuple[str, ...]
    #: the example of an "unknown option" message
    option_example: str
    #: how torch takes the example inputs, for a CALL that unpacks them
    inputs_rule: str
    #: whether CALL may pass positional and keyword inputs together
    mixed_inputs: bool

    @property
    def cell_example(self) -> str:
        return f"%%{self.name} (newline) def f(x): return x * 2 (newline) f(x)"


TRACE = Grammar(
    name="trace",
    value_examples={option: _VALUE_EXAMPLES.get(option) for option in _VALUE_OPTIONS},
    options=_ALL_OPTIONS,
    option_example="%trace --no-check model(x)",
    inputs_rule="torch.jit.trace takes a tuple of inputs or a dict of keyword inputs",
    mixed_inputs=False,
)


class MagicError(Exception):
    """A problem with how the magic was called: reported as one line, nothing traced or stored."""

    def __init__(self, problem: str, example: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        #: a correct use; None: the magic's plainest (``%trace model(x)``)
        self.example = example

    def line(self, magic: str) -> str:
        """``%trace: <problem>. Example: <correct use>`` on one line."""
        problem = " ".join(self.problem.split())
        return f"{magic}: {problem}. Example: {self.example or example_of(magic.lstrip('%'))}"


def first_line(text: object) -> str:
    lines = str(text).strip().splitlines()
    return lines[0] if lines else ""


# -- the command line ---------------------------------------------------------------------------------


def _word_end(line: str, start: int) -> tuple[int, bool]:
    """End of the word starting at ``start`` (the first blank outside brackets and string quotes, or the end of
    the line), and whether its brackets and quotes are closed there."""
    depth = 0
    quote = ""
    i = start
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(depth - 1, 0)
        elif c.isspace() and depth == 0:
            return i, True
        i += 1
    return len(line), not (depth or quote)


def split_line(line: str, grammar: Grammar = TRACE) -> tuple[list[str], str]:
    """The option words (values glued on: ``--tol=1e-4``, ``-orun``) and CALL, the rest of the line verbatim."""
    words: list[str] = []
    i, n = 0, len(line)
    pending = ""  # an option waiting for its value
    while True:
        while i < n and line[i].isspace():
            i += 1
        if i >= n:
            if pending:
                words.append(pending)
            return words, ""
        if not pending and not line.startswith("-", i):
            return words, line[i:].strip()
        j, closed = _word_end(line, i)
        if not closed and pending:
            raise MagicError(
                f"the value of {pending} has an unclosed bracket or quote: {line[i:j]!r}",
                grammar.value_examples.get(pending),
            )
        word = line[i:j]
        i = j
        if pending:
            value = unquote(word)
            words.append(f"{pending}={value}" if pending.startswith("--") else pending + value)
            pending = ""
        elif word == "--":
            return words, line[i:].strip()
        elif word in grammar.value_examples:
            pending = word
        elif "=" in word and word.split("=", 1)[0] in grammar.value_examples:
            option, value = word.split("=", 1)
            words.append(f"{option}={unquote(value)}")
        else:
            words.append(word)


def unquote(value: str) -> str:
    """An option value written in quotes, as IPython users write values with blanks (``--check-inputs '[(x, y)]'``),
    read by IPython's own shell-like rules; an unquoted value is kept as it is."""
    if value[:1] not in ("'", '"'):
        return value
    parts = arg_split(value, posix=True)
    return parts[0] if len(parts) == 1 else value


@dataclass
class Options:
    """The parsed options of one ``%trace``: the magic's own, and the trace options it sets."""

    output: str = DEFAULT_OUTPUT
    method: str | None = None
    #: ``--check-inputs``' text, evaluated in the user's namespace once CALL is known
    check_inputs_expr: str | None = None
    static: bool = False
    quiet: bool = False
    #: the trace options given on the line (``TraceOptions`` names); the rest keep their defaults
    trace_options: dict[str, Any] = field(default_factory=dict)


def _option_error(message: str, grammar: Grammar) -> MagicError:
    """argparse's complaint as one of our lines."""
    name = grammar.name
    if message.startswith("unrecognized arguments:"):
        unknown = message.split(":", 1)[1].split()[0].split("=")[0]
        return MagicError(
            f"unknown option {unknown!r}; the options are {', '.join(grammar.options)} (see %{name}?)",
            grammar.option_example,
        )
    option = message.removeprefix("argument ").split(":")[0].split("/")[-1]
    if "expected one argument" in message:
        return MagicError(f"option {option} needs a value", grammar.value_examples.get(option))
    if "ignored explicit argument" in message:
        return MagicError(f"option {option} takes no value", f"%{name} {option} model(x)")
    if "invalid choice" in message:
        return MagicError(f"{option}: {message.split(':', 1)[1].strip()}", grammar.value_examples.get(option))
    return MagicError(f"bad options ({message})")


def parse_words(parser: Any, words: list[str], grammar: Grammar = TRACE) -> Any:
    """The option words parsed by the magic's argparse parser; its complaints are :class:`MagicError` lines."""
    try:
        return parser.parse_args(words)
    except UsageError as e:
        raise _option_error(str(e), grammar) from None


def check_shown(namespace: Any, grammar: Grammar = TRACE) -> None:
    """The options every magic has, on where its run goes and how it shows: ``-o`` must name a variable, and
    ``--static`` and ``--quiet`` exclude each other."""
    name = grammar.name
    if namespace.static and namespace.quiet:
        raise MagicError(
            "--static and --quiet contradict each other (--static shows the kernel-free view, --quiet shows "
            "one line); give one",
            f"%{name} --static model(x)",
        )
    if not namespace.output.isidentifier() or keyword.iskeyword(namespace.output):
        raise MagicError(f"-o needs a Python variable name, got {namespace.output!r}", f"%{name} -o run model(x)")


def parse_options(parser: Any, words: list[str]) -> Options:
    """Validate the option words; raises :class:`MagicError` with the first problem."""
    ns = parse_words(parser, words)
    try:
        trace_options, expressions = TRACE_TABLE.from_command_line(ns)
    except CommandLineError as e:
        example = EXAMPLES["mode"] if e.flag in ("--eval", "--train") else _VALUE_EXAMPLES.get(e.flag, EXAMPLE)
        raise MagicError(str(e), example) from None
    check_shown(ns)
    if ns.method is not None and (not ns.method.isidentifier() or keyword.iskeyword(ns.method)):
        raise MagicError(f"--method needs a method name, got {ns.method!r}", EXAMPLES["method"])
    return Options(
        output=ns.output,
        method=ns.method,
        check_inputs_expr=expressions.get("check_inputs"),
        static=ns.static,
        quiet=ns.quiet,
        trace_options=trace_options,
    )


# -- CALL ---------------------------------------------------------------------------------------------


def parse_call(source: str, grammar: Grammar = TRACE) -> ast.Call:
    """CALL as an :class:`ast.Call` node, checked for what the magic's torch function can take."""
    text = source.strip()
    if not text:
        raise MagicError(f"missing CALL, the call to {grammar.name} (after the options)")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise MagicError(f"CALL {text!r} is not a Python expression ({e.msg})") from None
    if not isinstance(tree.body, ast.Call):
        raise MagicError(
            f"CALL must be a single call expression like model(x), got {text!r} "
            f"(a {type(tree.body).__name__.lower()}); pass the example inputs in the call"
        )
    check_call_shape(tree.body, text, grammar)
    return tree.body


def check_call_shape(call: ast.Call, text: str, grammar: Grammar = TRACE) -> None:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise MagicError(
            f"CALL {text!r} unpacks arguments with * or **; write each example input out ({grammar.inputs_rule})",
            f"%{grammar.name} f(x, y)",
        )
    if call.args and call.keywords and not grammar.mixed_inputs:
        raise MagicError(
            f"CALL {text!r} mixes positional and keyword arguments; torch.jit.trace takes example inputs either "
            "as a tuple (positional) or as keyword inputs (example_kwarg_inputs), not both",
            EXAMPLES["kwargs"],
        )
