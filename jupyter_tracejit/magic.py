"""``%trace`` and ``%%trace``: trace a call typed in a notebook and explore what ``torch.jit.trace`` recorded.
``%export`` and ``%%export`` (:mod:`.magic_export`) do the same with ``torch.export``, on this module's machinery.

Loaded by ``%load_ext jupyter_tracejit`` (:func:`jupyter_tracejit.load_ipython_extension`); this module,
:mod:`.magic_line` and :mod:`.magic_export` are the only ones of the package that import IPython, and nothing imports
them but the extension loader.

How a line is read (``%trace [options] CALL``)
----------------------------------------------
The options come first; CALL is the rest of the line, kept verbatim (never shell-split, never ``$var``-expanded)
and parsed with :mod:`ast`. It must be one call expression. The callee and each argument expression are
compiled and evaluated separately in the user's namespace, so nothing but the ``-o`` variable is added to it:
positional arguments become ``example_inputs``, keyword arguments ``example_kwarg_inputs``.

An option value (``--check-inputs EXPR``, ``--tol``, ``-o``, ``--method``) ends at the first blank outside
brackets and quotes, so ``--check-inputs [(x2,), (x3,)]`` needs no quoting; a value in quotes
(``--check-inputs '[(x2, y2)]'``, ``--tol "1e-4"``) is read by IPython's shell-like rules, quotes removed.

Which torch function is called
------------------------------
- ``%trace model(x)``, ``%trace f(x, y)``, ``%trace model.forward(x)``: ``tj.trace``;
- ``%trace model(input_ids=ids, mask=m)``: ``tj.trace(model, example_kwarg_inputs={...})``;
- ``%trace --method encode model.encode(x)`` (or ``%trace --method encode model(x)``), and ``%trace model.encode(x)``
  where ``model.encode`` is a bound method of an ``nn.Module`` other than ``forward`` (the method is inferred):
  ``tj.trace_module(model, {"encode": (x,)})``.

What the notebook shows and holds
---------------------------------
While the kernel traces, the output shows a placeholder ("tracing BertModel… 12 s", started at a given time) that
follows the trace's phases (tracing, checking, probing) and has a cancel button where the front end can reach the
kernel (JupyterLab, Notebook 7): cancel interrupts the kernel, the placeholder becomes one line ("cancelled after
3.2 s (checking BertModel)") and ``_trace`` keeps what it held. The explorer replaces the placeholder when the trace
ends. The run goes into ``_trace`` (or ``-o NAME``), the explorer into
``_trace_explorer``; when the explorer re-traces (or shows a run of its history), the variable follows the run on
screen, as long as it still holds the explorer's run (a variable the user has reassigned is left alone).

In a plain IPython terminal (no widget renders there) the placeholder's phases print as lines, then the text
report of the run and where the explorer would render; ``_trace`` holds the run, no explorer is made.

``%export [options] CALL`` is read the same way (its own options, :data:`.magic_export.EXPORT`; positional and
keyword arguments may be mixed, as ``torch.export`` takes both) and shown the same way, into ``_export`` and
``_export_explorer``; what differs between the two magics' lines is a :class:`.magic_line.Grammar`.

Errors of the magic itself (bad CALL, bad option, unknown name...) print one line on stderr naming the problem
with an example of correct use, and leave the namespace untouched. Failures inside the traced code are not magic
errors: they are in the run (``run.ok``, ``run.error``) and the explorer shows them.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import inspect
import re
import sys
import time
import uuid
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any, Protocol

import torch
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, kwds, magic_arguments

from .core.caller import calls_from, find_caller
from .core.graph import Frame
from .core.progress import TRACING, phases_to
from .core.run import TraceRun
from .core.torchscript.options import TRACE_TABLE
from .core.torchscript.plan import target_of
from .core.torchscript.request import trace, trace_module
from .magic_line import (
    CALL_NAMES,
    DEFAULT_OUTPUT,
    EXAMPLES,
    TRACE,
    Grammar,
    MagicError,
    Options,
    check_call_shape,
    first_line,
    parse_call,
    parse_options,
    split_line,
)
from .widgets import (
    PROGRESS_MIME,
    RUN_MIME,
    TraceExplorer,
    explore,
    in_terminal,
    run_mime_payload,
    terminal_report,
    uses_anywidget,
)

#: where the explorer of the last ``%trace`` goes (``_trace_explorer.run`` is the run on screen)
EXPLORER_OUTPUT = "_trace_explorer"
#: live explorers %trace keeps (each holds its model, inputs and up to history_limit ScriptModules); older ones
#: are closed and stay on the page read-only
MAX_LIVE_EXPLORERS = 10


def _display(obj: Any, *, raw: bool = False, display_id: str | None = None, update: bool = False) -> None:
    """Every output of the magic goes through here (tests replace it with a recorder); with ``update``, replaces
    the output shown under ``display_id``."""
    from IPython.display import display

    display(obj, raw=raw, display_id=display_id, update=update)


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


@dataclass
class Plan:
    """What to trace: ``trace(target, inputs, ...)`` or ``trace_module(target, {method: inputs}, ...)``."""

    kind: str
    target: Any
    inputs: Any
    is_kwarg: bool
    method: str | None = None


def _bound_module_method(callee: Any, func_node: ast.expr) -> tuple[torch.nn.Module, str] | None:
    """``(module, name)`` when ``callee`` is a bound method of an ``nn.Module`` (found under ``name``)."""
    owner = getattr(callee, "__self__", None)
    if not inspect.ismethod(callee) or not isinstance(owner, torch.nn.Module):
        return None
    if isinstance(owner, torch.jit.ScriptModule):
        return None
    names = [func_node.attr] if isinstance(func_node, ast.Attribute) else []
    names.append(getattr(callee, "__name__", ""))
    for name in names:
        if name and getattr(owner, name, None) == callee:
            return owner, name
    return None


def check_callable(callee: Any, callee_src: str, grammar: Grammar = TRACE) -> None:
    if not callable(callee):
        raise MagicError(
            f"{callee_src!r} is a {type(callee).__name__}, which cannot be called; CALL must call the model or "
            f"function to {grammar.name}"
        )


def plan_call(
    callee: Any, func_node: ast.expr, call_text: str, args: list[Any], kwargs: dict[str, Any], opts: Options
) -> Plan:
    """Which of ``tj.trace`` / ``tj.trace_module`` to call, on what."""
    callee_src = _source_of(func_node, call_text)
    check_callable(callee, callee_src)
    is_kwarg = bool(kwargs)
    inputs: Any = dict(kwargs) if is_kwarg else tuple(args)
    bound = _bound_module_method(callee, func_node)
    if opts.method is not None:
        if isinstance(callee, torch.nn.Module) and not isinstance(callee, torch.jit.ScriptModule):
            module, name = callee, opts.method
            if not callable(getattr(module, name, None)):
                raise MagicError(f"--method {name}: {type(module).__name__} has no method {name!r}", EXAMPLES["method"])
        elif bound is not None:
            module, name = bound
            called = "forward" if name in CALL_NAMES else name
            if called != opts.method:
                raise MagicError(
                    f"--method {opts.method} but CALL calls {callee_src!r} (method {called!r}); "
                    "name the method CALL calls",
                    EXAMPLES["method"],
                )
            name = called
        else:
            raise MagicError(
                f"--method needs CALL to call an nn.Module or one of its methods, got {callee_src!r} "
                f"(a {type(callee).__name__})",
                EXAMPLES["method"],
            )
        return Plan("trace_module", module, {name: inputs}, is_kwarg, method=name)
    if bound is not None:
        module, name = bound
        if name in CALL_NAMES:
            return Plan("trace", module, inputs, is_kwarg)
        return Plan("trace_module", module, {name: inputs}, is_kwarg, method=name)
    return Plan("trace", callee, inputs, is_kwarg)


def check_inputs_for(value: Any, expr: str, plan: Plan) -> list[Any]:
    """``--check-inputs``' value, validated, in the form the chosen torch function takes."""
    example = EXAMPLES["check_inputs_kw" if plan.is_kwarg else "check_inputs"]
    if not isinstance(value, list):
        raise MagicError(
            f"--check-inputs {expr!r} must evaluate to a list of input sets, one per check, got a "
            f"{type(value).__name__}",
            example,
        )
    sets: list[Any] = []
    for i, item in enumerate(value):
        if plan.is_kwarg:
            if not isinstance(item, dict):
                raise MagicError(
                    f"--check-inputs item {i} is a {type(item).__name__}, but CALL passes keyword inputs, so each "
                    "check input set must be a dict of them",
                    example,
                )
            sets.append(item)
        elif isinstance(item, torch.Tensor):
            sets.append((item,))  # torch's make_tuple: a lone tensor is a 1-tuple
        elif isinstance(item, (tuple, list)):
            sets.append(tuple(item))
        else:
            raise MagicError(
                f"--check-inputs item {i} is a {type(item).__name__}; each check input set is a tuple of inputs "
                "like the call's arguments",
                example,
            )
    if plan.kind == "trace_module":
        return [{plan.method: s} for s in sets]
    return sets


def _trace(plan: Plan, check_inputs: list[Any] | None, opts: Options) -> TraceRun:
    common: dict[str, Any] = {**opts.trace_options, "check_inputs": check_inputs}
    if plan.kind == "trace_module":
        return trace_module(plan.target, plan.inputs, example_inputs_is_kwarg=plan.is_kwarg, **common)
    if plan.is_kwarg:
        return trace(plan.target, None, example_kwarg_inputs=plan.inputs, **common)
    return trace(plan.target, plan.inputs, **common)


def target_name(plan: Plan) -> str:
    """What the placeholder says is being traced: ``BertModel``, ``f``, ``Net.encode``."""
    name = target_of(plan.target).name
    return f"{name}.{plan.method}" if plan.method not in (None, "forward") else name


def progress_bundle(name: str, started: float, phase: str = TRACING) -> dict[str, Any]:
    """The placeholder shown while the kernel traces: our renderer counts the seconds (and offers a cancel), the
    text gives the phase and the start. Where the explorer is the anywidget one, our renderers are not on the page:
    the text only."""
    clock = time.strftime("%H:%M:%S", time.localtime(started))
    bundle: dict[str, Any] = {"text/plain": f"{phase} {name}… (started {clock})"}
    if not uses_anywidget():
        bundle[PROGRESS_MIME] = {"target": name, "started": started, "phase": phase}
    return bundle


class Placeholder:
    """The output that stands for a capture while the kernel is busy with it: what is captured, the phase it is
    in (updated as the capture enters each one) and since when; its result then replaces it."""

    def __init__(self, name: str, phase: str = TRACING) -> None:
        self.name = name
        self.phase = phase
        self.started = time.time()
        self.display_id = uuid.uuid4().hex
        #: the user interrupted the capture (the placeholder's cancel, the kernel's interrupt): nothing to show
        self.cancelled = False

    def show(self) -> None:
        _display(progress_bundle(self.name, self.started, self.phase), raw=True, display_id=self.display_id)

    def enter(self, phase: str) -> None:
        """The capture entered ``phase`` (a :func:`~.core.progress.phases_to` listener)."""
        if phase != self.phase:
            self.phase = phase
            self.replace(progress_bundle(self.name, self.started, phase), raw=True)

    def replace(self, obj: Any, *, raw: bool = False) -> None:
        _display(obj, raw=raw, display_id=self.display_id, update=True)

    def stopped(self, how: str) -> str:
        """One line for a capture that did not finish: "cancelled after 3.2 s (checking BertModel)"."""
        return f"{how} after {time.time() - self.started:.1f} s ({self.phase} {self.name})"


@contextlib.contextmanager
def progress_shown(name: str, phase: str = TRACING) -> Iterator[Placeholder]:
    """Show a :class:`Placeholder` for the capture made inside the block, following its phases.

    An interrupt (the placeholder's cancel button interrupts the kernel) ends the block quietly: the capture has
    put the model back, the placeholder becomes one "cancelled after ..." line and ``cancelled`` is set, so the
    caller stores and shows nothing. Anything else that escapes the capture still leaves no placeholder counting.
    """
    placeholder = Placeholder(name, phase)
    placeholder.show()
    try:
        with phases_to(placeholder.enter):
            yield placeholder
    except KeyboardInterrupt:
        placeholder.cancelled = True
        placeholder.replace({"text/plain": placeholder.stopped("cancelled")}, raw=True)
    except BaseException:
        placeholder.replace({"text/plain": placeholder.stopped("stopped")}, raw=True)
        raise


def follow_runs(explorer: TraceExplorer, namespace: dict[str, Any], name: str) -> None:
    """Keep ``namespace[name]`` on the run the explorer shows, while it holds the explorer's previous run."""
    shown = [explorer.run]

    def on_run(_change: Any) -> None:
        if namespace.get(name) is shown[0] and explorer.run is not None:
            namespace[name] = explorer.run
        shown[0] = explorer.run

    explorer.observe(on_run, names="run_json")


def static_bundle(run: TraceRun) -> dict[str, Any]:
    """The kernel-free view of a run (``--static``): its JSON for our MIME renderer (not where the explorer is the
    anywidget one: no renderer reads it there), its summary, and HTML when the run can render itself as HTML."""
    bundle: dict[str, Any] = {"text/plain": run.summary()}
    if not uses_anywidget():
        bundle[RUN_MIME] = run_mime_payload(run.to_json())
    to_html = getattr(run, "to_html", None)
    if callable(to_html):
        bundle["text/html"] = to_html()
    return bundle


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


class Shows(Protocol):
    """The options of a magic that say where its run goes and how it is shown."""

    output: str
    static: bool
    quiet: bool


# -- the magic ----------------------------------------------------------------------------------------


@magics_class
class TraceMagics(Magics):
    """``%trace`` / ``%%trace``, and what ``%export`` shares with them (:class:`~.magic_export.ExportMagics`):
    reading a cell whose last line is the call, evaluating the call, showing the run."""

    @property
    def ipython(self) -> InteractiveShell:
        """The shell the magics run in (IPython sets ``shell`` when it registers them)."""
        shell = self.shell
        if shell is None:
            raise RuntimeError("the jupyter-tracejit magics are not registered with an IPython shell")
        return shell

    @no_var_expand
    @magic_arguments()
    @argument(
        "-o", dest="output", metavar="NAME", default=DEFAULT_OUTPUT, help="store the run in NAME (default: _trace)"
    )
    @argument(
        "--method",
        metavar="NAME",
        help="trace this module method with trace_module, e.g. --method encode model.encode(x); inferred when "
        "CALL calls a bound nn.Module method other than forward",
    )
    @option_arguments(TRACE_TABLE.add_command_line)
    @argument(
        "--static",
        action="store_true",
        help="show the kernel-free view (the run's JSON MIME and summary) instead of the live widget",
    )
    @argument("--quiet", action="store_true", help="store the run and print its one-line summary only")
    @argument(
        "call",
        nargs="*",
        metavar="CALL",
        help="the call to trace, e.g. model(x); with %%%%trace, the last line of the cell",
    )
    @kwds(
        epilog="Examples: %trace model(x) | %trace --no-check -o run f(x, y) | "
        "%trace --method encode model.encode(x) | %trace --static model(x)"
    )
    @line_cell_magic
    def trace(self, line: str, cell: str | None = None) -> None:
        """Trace a call with torch.jit.trace and show the trace explorer; the run is stored in ``_trace``.

        %trace [options] CALL
            CALL is a call expression evaluated in your namespace; it is traced, not just run:

                %trace model(x)                          # tj.trace(model, (x,))
                %trace f(x, y)                           # tj.trace(f, (x, y))
                %trace model(input_ids=ids, mask=m)      # keyword inputs: example_kwarg_inputs={...}
                %trace --method encode model.encode(x)   # tj.trace_module(model, {"encode": (x,)})
                %trace model.encode(x)                   # the same: a bound nn.Module method other than
                                                         # forward is traced with trace_module
                %trace --eval --probe -o run model(x)    # eval mode for this trace only, probe, store in run
                %trace --check-inputs [(x2,), (x3,)] --tol 1e-4 model(x)
                %trace --quiet model(x)                  # store the run, print one line

            Positional and keyword arguments cannot be mixed, and * / ** unpacking is not allowed: torch.jit.trace
            takes example inputs either as a tuple or as keyword inputs. Option values end at the first blank outside
            brackets, so --check-inputs [(x2,), (x3,)] needs no quotes.

        %%trace [options]
            The cell body is code whose last line is the call to trace. Everything before it runs in your namespace
            (definitions stay there), then the last line is traced as CALL. Edit the function, re-run the cell:

                %%trace --eval
                def f(x):
                    return x * 2 if x.sum() > 0 else x
                f(torch.randn(3))

        The run (a TraceRun) is stored in _trace (or the -o NAME variable) and the explorer in _trace_explorer;
        when the explorer re-traces, _trace follows the run on screen (_trace_explorer.run). Display it again with
        `_trace` or tj.explore(_trace). A failure inside the traced code is recorded in the run (_trace.ok,
        _trace.error) and shown by the explorer; a mistake in the magic's own arguments prints one line and changes
        nothing.
        """
        magic = "%trace" if cell is None else "%%trace"
        try:
            if cell is None:
                self._trace_line(line)
            else:
                self._trace_cell(line, cell)
        except MagicError as e:
            # the cell fails (IPython prints a UsageError as one line), so Run All and papermill stop here instead
            # of going on with a stale _trace
            raise UsageError(e.line(magic)) from None
        return None

    def _options(self, line: str) -> tuple[Options, str]:
        words, rest = split_line(line)
        return parse_options(self.trace.parser, words), rest

    def _trace_line(self, line: str) -> None:
        opts, call_text = self._options(line)
        call = parse_call(call_text)
        self._run(opts, call, call_text.strip(), "<%trace>", self._line_site(TRACE, line))

    def _trace_cell(self, line: str, cell: str) -> None:
        opts, rest = self._options(line)
        read = self._read_cell(rest, cell, TRACE)
        if read is not None:
            self._run(opts, *read)

    def _line_site(self, grammar: Grammar, line: str) -> Frame | None:
        """Where the magic's line is: nodes recorded entirely inside torch (nn.Transformer's) point at the line
        that asked for the run, read as the user wrote it rather than as IPython rewrote it (get_ipython()...)."""
        site = find_caller()
        return None if site is None else dataclasses.replace(site, code=f"%{grammar.name} {line.strip()}")

    def _read_cell(self, rest: str, cell: str, grammar: Grammar) -> tuple[ast.Call, str, str, Frame] | None:
        """Run the cell's code before its last line (``rest``: what follows the options on the magic's line, which
        must be nothing), then give that line's call, the cell's source and file name, and the call's site; None
        when the user's code failed (its traceback is shown)."""
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

    def _run(self, opts: Options, call: ast.Call, text: str, filename: str, site: Frame | None) -> None:
        callee, args, kwargs = self._evaluate_call(call, text, filename)
        plan = plan_call(callee, call.func, text, args, kwargs, opts)
        check_inputs = None
        if opts.check_inputs_expr is not None:
            example = EXAMPLES["check_inputs_kw" if plan.is_kwarg else "check_inputs"]
            value = self._evaluate_option(opts.check_inputs_expr, "--check-inputs", TRACE, example)
            check_inputs = check_inputs_for(value, opts.check_inputs_expr, plan)
        self._show(lambda: _trace(plan, check_inputs, opts), target_name(plan), site, opts, EXPLORER_OUTPUT)

    def _evaluate_call(self, call: ast.Call, text: str, filename: str) -> tuple[Any, list[Any], dict[str, Any]]:
        """CALL's callee, positional and keyword arguments, each evaluated in the user's namespace."""
        ns = self.ipython.user_ns
        callee = _evaluate(call.func, text, ns, filename, "the callee")
        args = [_evaluate(a, text, ns, filename, "argument") for a in call.args]
        kwargs = {
            k.arg: _evaluate(k.value, text, ns, filename, f"keyword argument {k.arg}") for k in call.keywords if k.arg
        }
        return callee, args, kwargs

    def _evaluate_option(self, text: str, flag: str, grammar: Grammar, example: str) -> Any:
        """An option's Python expression (``--check-inputs EXPR``), evaluated in the user's namespace."""
        source = text.strip()
        try:
            expr = ast.parse(source, mode="eval")
        except SyntaxError as e:
            raise MagicError(f"{flag} {text!r} is not a Python expression ({e.msg})", example) from None
        return _evaluate(expr.body, source, self.ipython.user_ns, f"<%{grammar.name} {flag}>", flag, example)

    def _show(
        self,
        capture: Callable[[], TraceRun],
        name: str,
        site: Frame | None,
        opts: Shows,
        explorer_output: str,
        doing: str = "tracing",
    ) -> None:
        """Run ``capture`` as called from ``site`` and store its run in ``opts.output``; unless ``opts.quiet``, a
        placeholder says what the kernel is ``doing`` to ``name`` (then each phase the capture enters, with a
        cancel: :func:`progress_shown`) until the explorer (also stored in ``explorer_output``) replaces it."""
        ns = self.ipython.user_ns
        if opts.quiet:
            with calls_from(site):
                run = capture()
            ns[opts.output] = run
            print(run.summary())
            return
        # the trace can take a while (and blocks the kernel): say what is being traced until its result replaces it
        traced: TraceRun | None = None
        with progress_shown(name, doing) as placeholder, calls_from(site):
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
        ns[explorer_output] = explorer
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


# argparse would accept --no for --no-check or --no-grad; prefixes are confusing on a notebook line
TraceMagics.trace.parser.allow_abbrev = False


def register_magics(ipython: Any) -> None:
    """Register ``%trace`` / ``%%trace`` and ``%export`` / ``%%export`` on a shell (what ``%load_ext
    jupyter_tracejit`` does)."""
    from .magic_export import ExportMagics  # it builds on this module's TraceMagics

    ipython.register_magics(TraceMagics)
    ipython.register_magics(ExportMagics)


__all__ = [
    "DEFAULT_OUTPUT",
    "EXPLORER_OUTPUT",
    "MAX_LIVE_EXPLORERS",
    "MagicError",
    "Placeholder",
    "TraceMagics",
    "follow_runs",
    "progress_bundle",
    "progress_shown",
    "register_magics",
    "split_line",
    "static_bundle",
]
