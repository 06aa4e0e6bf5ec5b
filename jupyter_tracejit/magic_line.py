"""A magic's line, read: its words (quoting as a shell would, brackets kept whole), its options (its back end's
options table plus the magic's own), and the call to capture, checked for its shape before anything runs. Every
problem is a :class:`MagicError`: one line with the problem and an example. What differs between the magics
(``%trace``, ``%export``...) is a :class:`Grammar`, made from the back end's registry row (:func:`grammar_of`).
"""

from __future__ import annotations

import ast
import keyword
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from IPython.core.error import UsageError
from IPython.utils.process import arg_split  # type: ignore[attr-defined]  # IPython's public helper, not in __all__

from .core.backend_row import Backend
from .core.options import CommandLineError


def example_of(name: str) -> str:
    """The plainest use of the magic ``name``: what an error's example is when nothing more specific fits."""
    return f"%{name} model(x)"


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
    #: the row's examples by flag and by name (``kwargs``: a call with keyword inputs)
    examples: Mapping[str, str] = field(default_factory=dict)

    @property
    def cell_example(self) -> str:
        return f"%%{self.name} (newline) def f(x): return x * 2 (newline) f(x)"


#: the options every magic has, on where its run goes and how it is shown
OWN_VALUE_OPTIONS = ("-o",)
OWN_SWITCHES = ("--static", "--quiet")


def grammar_of(row: Backend) -> Grammar:
    """The magic of a back end (its row's ``command`` words and options table): named by its verb."""
    words = row.command
    if words is None:
        raise ValueError(f"the back end {row.name!r} has no magic")
    flags = [*words.magic_arguments, *row.table().flags]
    takes_value = [*OWN_VALUE_OPTIONS, *(f.flag for f in flags if f.takes_value)]
    return Grammar(
        name=row.verb,
        value_examples={flag: words.examples.get(flag) for flag in takes_value},
        options=(*OWN_VALUE_OPTIONS, *(f.flag for f in flags), *OWN_SWITCHES),
        option_example=words.option_example,
        inputs_rule=words.inputs_rule,
        mixed_inputs=words.mixed_inputs,
        examples=words.examples,
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


def split_line(line: str, grammar: Grammar) -> tuple[list[str], str]:
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
class MagicOptions:
    """The parsed options of one magic line: its own (where the run goes, how it shows), the back end's options it
    sets (the rest keep their defaults), the options given as Python (unevaluated), and the back end's own
    arguments (``--method``)."""

    output: str
    static: bool = False
    quiet: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    #: ``{"check_inputs": "[(x2,)]"}``: evaluated in the user's namespace once CALL is known
    expressions: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


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


def parse_words(parser: Any, words: list[str], grammar: Grammar) -> Any:
    """The option words parsed by the magic's argparse parser; its complaints are :class:`MagicError` lines."""
    try:
        return parser.parse_args(words)
    except UsageError as e:
        raise _option_error(str(e), grammar) from None


def check_shown(namespace: Any, grammar: Grammar) -> None:
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


def parse_options(parser: Any, words: list[str], row: Backend) -> MagicOptions:
    """Validate the option words of ``row`` 's magic; raises :class:`MagicError` with the first problem."""
    grammar = grammar_of(row)
    ns = parse_words(parser, words, grammar)
    try:
        given, expressions = row.table().from_command_line(ns)
    except CommandLineError as e:
        raise MagicError(str(e), grammar.examples.get(e.flag)) from None
    check_shown(ns, grammar)
    magic_arguments = row.command.magic_arguments if row.command is not None else ()
    extra = {f.option: getattr(ns, f.dest) for f in magic_arguments if getattr(ns, f.dest, None) is not None}
    return MagicOptions(
        output=ns.output, static=ns.static, quiet=ns.quiet, options=given, expressions=expressions, extra=extra
    )


# -- CALL ---------------------------------------------------------------------------------------------


def parse_call(source: str, grammar: Grammar) -> ast.Call:
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


def check_call_shape(call: ast.Call, text: str, grammar: Grammar) -> None:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise MagicError(
            f"CALL {text!r} unpacks arguments with * or **; write each example input out ({grammar.inputs_rule})",
            f"%{grammar.name} f(x, y)",
        )
    if call.args and call.keywords and not grammar.mixed_inputs:
        raise MagicError(
            f"CALL {text!r} mixes positional and keyword arguments; {grammar.inputs_rule}, not both",
            grammar.examples.get("kwargs"),
        )
