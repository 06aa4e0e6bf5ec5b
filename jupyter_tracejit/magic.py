"""The capture magics, one per back end of the registry (``%trace`` / ``%%trace``, ``%export`` / ``%%export``):
capture a call typed in a notebook and explore what torch recorded. One mechanism, parameterized by the back end's
row (:mod:`.core.registry`): its options table, its words (help, examples) and its ``capture`` function.

Loaded by ``%load_ext jupyter_tracejit`` (:func:`jupyter_tracejit.load_ipython_extension`); this module,
:mod:`.magic_line` (reading its line) and :mod:`.magic_output` (what it shows) are the only ones of the package that
import IPython, and nothing imports them but the extension loader.

How a line is read (``%trace [options] CALL``)
----------------------------------------------
The options come first; CALL is the rest of the line, kept verbatim (never shell-split, never ``$var``-expanded)
and parsed with :mod:`ast`. It must be one call expression. The callee and each argument expression are
compiled and evaluated separately in the user's namespace, so nothing but the ``-o`` variable is added to it. The
back end decides what the call means (:class:`~.core.command.CaptureCall`): for ``%trace``, positional arguments
become ``example_inputs`` and keyword arguments ``example_kwarg_inputs``; ``%trace --method encode model.encode(x)``
(or a bound ``nn.Module`` method other than ``forward``) is ``tj.trace_module``; ``%export`` takes both kinds of
inputs together, as ``torch.export`` does.

An option value (``--check-inputs EXPR``, ``--tol``, ``-o``, ``--method``) ends at the first blank outside
brackets and quotes, so ``--check-inputs [(x2,), (x3,)]`` needs no quoting; a value in quotes
(``--check-inputs '[(x2, y2)]'``, ``--tol "1e-4"``) is read by IPython's shell-like rules, quotes removed.

What the notebook shows and holds
---------------------------------
While the kernel captures, the output shows a placeholder ("tracing BertModel… 12 s", started at a given time) that
follows the capture's phases (tracing, checking, probing) and has a cancel button where the front end can reach the
kernel (JupyterLab, Notebook 7): cancel interrupts the kernel, the placeholder becomes one line ("cancelled after
3.2 s (checking BertModel)") and ``_trace`` keeps what it held. The explorer replaces the placeholder when the
capture ends. The run goes into ``_<verb>`` (``_trace``, or ``-o NAME``), the explorer into ``_<verb>_explorer``;
when the explorer captures again (or shows a run of its history), the variable follows the run on screen, as long as
it still holds the explorer's run (a variable the user has reassigned is left alone).

In a plain IPython terminal (no widget renders there) the placeholder's phases print as lines, then the text
report of the run and where the explorer would render; ``_trace`` holds the run, no explorer is made.

Errors of the magic itself (bad CALL, bad option, unknown name...) print one line on stderr naming the problem
with an example of correct use, and leave the namespace untouched. Failures inside the captured code are not magic
errors: they are in the run (``run.ok``, ``run.error``) and the explorer shows them.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import sys
import uuid
import weakref
from collections.abc import Callable
from types import FrameType
from typing import Any

from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import no_var_expand
from IPython.core.magic_arguments import argument, kwds, magic_arguments

from .core.backend_row import Backend
from .core.caller import calls_from, find_caller
from .core.command import CallProblem, CaptureCall
from .core.graph import Frame
from .core.registry import capture_function, commands
from .core.run import TraceRun
from .magic_line import (
    Grammar,
    MagicError,
    MagicOptions,
    check_call_shape,
    first_line,
    grammar_of,
    parse_call,
    parse_options,
    split_line,
)
from .magic_output import Placeholder, follow_runs, progress_bundle, progress_shown, static_bundle, summary_lines
from .widgets import TraceExplorer, explore, in_terminal, terminal_report

#: live explorers %trace keeps (each holds its model, inputs and up to history_limit ScriptModules); older ones
#: are closed and stay on the page read-only
MAX_LIVE_EXPLORERS = 10


def _source_of(node: ast.AST, text: str) -> str:
    return ast.get_source_segment(text, node) or ast.unparse(node)


def _evaluate(
    node: ast.expr, text: str, namespace: dict[str, Any], filename: str, what: str, example: str | None = None
) -> Any:
    """Evaluate one expression node in the user's namespace; a failure becomes a :class:`MagicError`."""
    code = compile(ast.fix_missing_locations(ast.Expression(body=node)), filename, "eval")
    try:
        return eval(code, namespace)
    except Exception as e:
        src = _source_of(node, text)
        if isinstance(e, NameError):
            raise MagicError(f"unknown name in {what} {src!r}: {first_line(e)}", example) from None
        raise MagicError(f"evaluating {what} {src!r} raised {type(e).__name__}: {first_line(e)}", example) from None


def option_arguments(declare: Callable[[Callable[..., Any]], None]) -> Callable[[Any], Any]:
    """The flags a command-line table declares (``add_command_line``: ``--no-check``, ``--tol``, ...) as IPython
    ``@argument`` decorators, in help order: a magic and the ``tracejit`` command share one definition of them."""

    def decorate_all(func: Any) -> Any:
        decorators: list[Any] = []
        declare(lambda *flags, **kwargs: decorators.append(argument(*flags, **kwargs)))
        for decorate in reversed(decorators):  # the decorator nearest the function comes last in the help
            func = decorate(func)
        return func

    return decorate_all


class CaptureMagic:
    """One back end's magic (``%trace``, ``%export``) on one shell: reading its line or cell, evaluating the call,
    having the back end capture it (its row's ``capture``), showing the run."""

    def __init__(self, shell: InteractiveShell, row: Backend) -> None:
        if row.command is None:
            raise ValueError(f"the back end {row.name!r} has no magic")
        self.ipython = shell
        self.row = row
        self.words = row.command
        self.grammar: Grammar = grammar_of(row)
        #: where the run and the explorer go without ``-o``: ``_trace``, ``_trace_explorer``
        self.output = f"_{row.verb}"
        self.explorer_output = f"_{row.verb}_explorer"
        #: what IPython registers: the magic with its help and parser (``.parser``)
        self.function: Any = self._magic_function()

    def _magic_function(self) -> Any:
        """The function IPython registers (``%trace`` and ``%%trace``), with its help and its argument parser: the
        magic's own options, the back end's arguments and options table, CALL."""
        verb = self.row.verb

        def magic(line: str, cell: str | None = None) -> None:
            self.capture(line, cell)

        magic.__name__ = magic.__qualname__ = verb
        magic.__doc__ = self.words.magic_doc
        decorated: Any = kwds(epilog=self.words.magic_epilog)(magic)
        decorated = argument(
            "call",
            nargs="*",
            metavar="CALL",
            help=f"the call to {verb}, e.g. model(x); with %%%%{verb}, the last line of the cell",
        )(decorated)
        decorated = argument("--quiet", action="store_true", help="store the run and print its one-line summary only")(
            decorated
        )
        decorated = argument(
            "--static",
            action="store_true",
            help="show the kernel-free view (the run's JSON MIME and summary) instead of the live widget",
        )(decorated)
        decorated = option_arguments(self.row.table().add_command_line)(decorated)
        for f in reversed(self.words.magic_arguments):
            decorated = argument(f.flag, dest=f.dest, metavar=f.metavar, default=None, help=f.help)(decorated)
        decorated = argument(
            "-o",
            dest="output",
            metavar="NAME",
            default=self.output,
            help=f"store the run in NAME (default: {self.output})",
        )(decorated)
        decorated = no_var_expand(magic_arguments()(decorated))
        # argparse would accept --no for --no-check or --no-grad; prefixes are confusing on a notebook line
        decorated.parser.allow_abbrev = False
        return decorated

    @property
    def parser(self) -> Any:
        return self.function.parser

    def capture(self, line: str, cell: str | None = None) -> None:
        """``%verb [options] CALL`` (``cell`` None) or ``%%verb [options]`` with the cell."""
        magic = f"%{self.row.verb}" if cell is None else f"%%{self.row.verb}"
        try:
            words, rest = split_line(line, self.grammar)
            opts = parse_options(self.parser, words, self.row)
            if cell is None:
                call = parse_call(rest, self.grammar)
                self._run(opts, call, rest.strip(), f"<{magic}>", self._line_site(line))
            else:
                read = self._read_cell(rest, cell)
                if read is not None:
                    self._run(opts, *read)
        except MagicError as e:
            # the cell fails (IPython prints a UsageError as one line), so Run All and papermill stop here instead
            # of going on with a stale _trace
            raise UsageError(e.line(magic)) from None

    def _line_site(self, line: str) -> Frame | None:
        """Where the magic's line is: nodes recorded entirely inside torch (nn.Transformer's) point at the line
        that asked for the run, read as the user wrote it rather than as IPython rewrote it (get_ipython()...)."""
        site = find_caller()
        return None if site is None else dataclasses.replace(site, code=f"%{self.row.verb} {line.strip()}")

    def _read_cell(self, rest: str, cell: str) -> tuple[ast.Call, str, str, Frame] | None:
        """Run the cell's code before its last line (``rest``: what follows the options on the magic's line, which
        must be nothing), then give that line's call, the cell's source and file name, and the call's site; None
        when the user's code failed (its traceback is shown)."""
        grammar = self.grammar
        name = grammar.name
        if rest:
            raise MagicError(
                f"%%{name} takes only options on its first line, got {rest!r}; the call to {name} is the last line "
                "of the cell",
                grammar.cell_example,
            )
        try:
            body = self.ipython.transform_cell(cell)
        except SyntaxError as e:
            raise MagicError(f"the cell is not valid Python ({e.msg})", grammar.cell_example) from None
        # line 1 stands for the %%trace line, so line numbers (tracebacks, source lines in the explorer) are the
        # cell's; the cached name makes inspect.getsource work for functions defined here
        source = f"# %%{name}\n" + body
        filename = self.ipython.compile.cache(source, self._cell_number(), raw_code=f"%%{name}\n" + cell)
        try:
            module = ast.parse(source, filename=filename)
        except SyntaxError as e:
            where = f": {e.text.strip()!r}" if e.text and e.text.strip() else ""
            raise MagicError(
                f"syntax error on line {e.lineno} of the cell ({e.msg}){where}", grammar.cell_example
            ) from None
        if not module.body:
            raise MagicError(f"the cell has no code; its last line must be the call to {name}", grammar.cell_example)
        last = module.body[-1]
        if not isinstance(last, ast.Expr) or not isinstance(last.value, ast.Call):
            got = first_line(ast.get_source_segment(source, last) or type(last).__name__)
            raise MagicError(
                f"the last line of a %%{name} cell must be the call to {name}, like model(x); got {got!r}",
                grammar.cell_example,
            )
        call_text = ast.get_source_segment(source, last.value) or ast.unparse(last.value)
        check_call_shape(last.value, call_text, grammar)
        prelude = ast.Module(body=module.body[:-1], type_ignores=[])
        code = compile(prelude, filename, "exec")
        try:
            exec(code, self.ipython.user_ns)
        except Exception as e:
            # the user's own code failed (not the magic's arguments): their traceback, as for any cell, from the
            # cell's frame on (this frame is skipped)
            tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
            self.ipython.showtraceback((type(e), e, tb), tb_offset=0)
            return None
        site = Frame(file=filename, line=last.lineno, func="<module>", code=first_line(call_text))
        return last.value, source, filename, site

    def _cell_number(self) -> int:
        """The execution count the running cell was compiled under, read from the cell's own code: IPython 9
        counts the cell in ``shell.execution_count`` before it runs, earlier versions after."""
        format_code_name = getattr(self.ipython.compile, "format_code_name", None)
        frame: FrameType | None = sys._getframe(1)
        while frame is not None and format_code_name is not None:
            named = format_code_name(frame.f_code.co_filename)
            found = re.search(r"\d+", str(named[1])) if named else None
            if found:
                return int(found.group())
            frame = frame.f_back
        return self.ipython.execution_count

    def _run(self, opts: MagicOptions, call: ast.Call, text: str, filename: str, site: Frame | None) -> None:
        callee, args, kwargs = self._evaluate_call(call, text, filename)
        expressions = {
            option: self._evaluate_option(
                expr, self._flag_of(option), self.grammar.value_examples.get(self._flag_of(option))
            )
            for option, expr in opts.expressions.items()
        }
        attribute = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        capture_call = CaptureCall(
            callee,
            args,
            kwargs,
            options=opts.options,
            expressions=expressions,
            texts=opts.expressions,
            extra=opts.extra,
            callee_text=_source_of(call.func, text),
            attribute=attribute,
        )
        try:
            capture = capture_function(self.row)(capture_call)
        except CallProblem as problem:
            raise MagicError(problem.problem, problem.example) from None
        self._show(capture.run, capture.name, site, opts)

    def _flag_of(self, option: str) -> str:
        """The flag that gives ``option`` as Python (``--check-inputs``)."""
        return next(f.flag for f in self.row.table().flags if f.option == option and f.is_expression)

    def _evaluate_call(self, call: ast.Call, text: str, filename: str) -> tuple[Any, list[Any], dict[str, Any]]:
        """CALL's callee, positional and keyword arguments, each evaluated in the user's namespace."""
        ns = self.ipython.user_ns
        callee = _evaluate(call.func, text, ns, filename, "the callee")
        args = [_evaluate(a, text, ns, filename, "argument") for a in call.args]
        kwargs = {
            k.arg: _evaluate(k.value, text, ns, filename, f"keyword argument {k.arg}") for k in call.keywords if k.arg
        }
        return callee, args, kwargs

    def _evaluate_option(self, text: str, flag: str, example: str | None) -> Any:
        """An option's Python expression (``--check-inputs EXPR``), evaluated in the user's namespace."""
        source = text.strip()
        try:
            expr = ast.parse(source, mode="eval")
        except SyntaxError as e:
            raise MagicError(f"{flag} {text!r} is not a Python expression ({e.msg})", example) from None
        return _evaluate(expr.body, source, self.ipython.user_ns, f"<%{self.row.verb} {flag}>", flag, example)

    def _show(self, capture: Callable[[], TraceRun], name: str, site: Frame | None, opts: MagicOptions) -> None:
        """Run ``capture`` as called from ``site`` and store its run in ``opts.output``; unless ``opts.quiet``, a
        placeholder says what the kernel is ``doing`` to ``name`` (then each phase the capture enters, with a
        cancel: :func:`progress_shown`) until the explorer (also stored in ``_<verb>_explorer``) replaces it."""
        ns = self.ipython.user_ns
        if opts.quiet:
            with calls_from(site):
                run = capture()
            ns[opts.output] = run
            print(summary_lines(run))
            return
        # the trace can take a while (and blocks the kernel): say what is being traced until its result replaces it
        traced: TraceRun | None = None
        with progress_shown(name, self.words.doing) as placeholder, calls_from(site):
            traced = capture()
        if traced is None:  # cancelled: the placeholder says so, the namespace is as it was
            return
        run = traced
        ns[opts.output] = run
        if in_terminal(self.ipython):  # no widget renders here: the report, and where the explorer would
            print(terminal_report(run, opts.output))
            return
        if opts.static:
            placeholder.replace(static_bundle(run), raw=True)
            return
        explorer = explore(run)
        ns[self.explorer_output] = explorer
        follow_runs(explorer, ns, opts.output)
        self._keep_live(explorer)
        placeholder.replace(explorer)

    def _keep_live(self, explorer: TraceExplorer) -> None:
        """Bound what shown explorers keep alive (each holds its model, inputs and ScriptModules): re-running a
        cell closes the explorer its previous run showed, and beyond :data:`MAX_LIVE_EXPLORERS` the oldest is
        closed. A closed explorer stays on the page, read-only, from the run saved in its output. The bound is the
        shell's, over the explorers of %trace and %export."""
        live = _LIVE_EXPLORERS.setdefault(self.ipython, {})
        key = _cell_id(self.ipython) or uuid.uuid4().hex
        previous = live.pop(key, None)
        if previous is not None and previous is not explorer:
            previous.close()
        live[key] = explorer
        while len(live) > MAX_LIVE_EXPLORERS:
            oldest = next(iter(live))
            live.pop(oldest).close()


#: the explorers each shell's magics keep live, by the cell that showed them (oldest first)
_LIVE_EXPLORERS: weakref.WeakKeyDictionary[Any, dict[str, TraceExplorer]] = weakref.WeakKeyDictionary()


def _cell_id(shell: Any) -> str | None:
    """The id JupyterLab and Notebook 7 send with each cell's execute request; None elsewhere."""
    kernel = getattr(shell, "kernel", None)
    get_parent = getattr(kernel, "get_parent", None)
    try:
        parent = get_parent("shell") if callable(get_parent) else None
    except Exception:  # an older or foreign kernel: no cell ids, only the overall bound applies
        return None
    cell_id = parent.get("metadata", {}).get("cellId") if isinstance(parent, dict) else None
    return cell_id if isinstance(cell_id, str) and cell_id else None


def register_magics(ipython: Any) -> dict[str, CaptureMagic]:
    """Register each back end's magic (``%trace`` / ``%%trace``, ``%export`` / ``%%export``) on a shell: what
    ``%load_ext jupyter_tracejit`` does. Returns them by name."""
    magics = {}
    for row in commands():
        magic = magics[row.verb] = CaptureMagic(ipython, row)
        ipython.register_magic_function(magic.function, magic_kind="line_cell", magic_name=row.verb)
    return magics


__all__ = [
    "MAX_LIVE_EXPLORERS",
    "CaptureMagic",
    "MagicError",
    "Placeholder",
    "follow_runs",
    "progress_bundle",
    "progress_shown",
    "register_magics",
    "split_line",
    "static_bundle",
]
