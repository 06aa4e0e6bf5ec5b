"""``%export`` and ``%%export``: export a call typed in a notebook with ``torch.export`` and explore what it recorded.

The line is read as ``%trace``'s (:mod:`.magic`, :mod:`.magic_line`): options first, then CALL, one call
expression evaluated in the user's namespace. Positional arguments become ``args``, keyword arguments ``kwargs``
(both may be given, as ``torch.export.export`` takes both), and the call is ``tj.export(model, args, kwargs,
**options)``. The export options' flags are the ``tracejit export`` command's (core/export/options.py
``add_export_command_line``), ``--dynamic`` specs included, read by the same ``parse_dynamic``.

The run goes into ``_export`` (or ``-o NAME``), the explorer into ``_export_explorer``; when the explorer
re-exports, the variable follows the run on screen, as with ``%trace``. A failure inside the model (a
data-dependent branch, an op export cannot capture) is in the run (``run.error``, shown by the explorer); a
mistake in the magic's own line prints one line with an example and changes nothing.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import line_cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, kwds, magic_arguments

from .core.export.options import EXPORT_TABLE
from .core.export.request import export as tj_export
from .core.graph import Frame
from .core.options import CommandLineError
from .core.run import TraceRun
from .core.torchscript.plan import target_of
from .magic import TraceMagics, _bound_module_method, _source_of, check_callable, option_arguments
from .magic_line import CALL_NAMES, Grammar, MagicError, check_shown, parse_call, parse_words, split_line

#: where the run goes without ``-o``
DEFAULT_OUTPUT = "_export"
#: where the explorer of the last ``%export`` goes (``_export_explorer.run`` is the run on screen)
EXPLORER_OUTPUT = "_export_explorer"

EXAMPLES = {
    "-o": "%export -o run model(x)",
    "--dynamic": "%export --dynamic x:0=batch[2,64] model(x)",
    "--auto-dynamic": "%export --auto-dynamic --check-inputs [(x2,)] model(x)",
    "--check-inputs": "%export --check-inputs [(x2,), (x3,)] model(x)",
    "--draft": "%export --draft always model(x)",
    "--eval": "%export --eval model(x)",
    "forward": "%export model(x)",
}


#: the export options' flags in help order, each with whether it takes a value
_FLAGS: list[tuple[str, bool]] = []
EXPORT_TABLE.add_command_line(lambda flag, **kwargs: _FLAGS.append((flag, kwargs.get("action") != "store_true")))

EXPORT = Grammar(
    name="export",
    value_examples={flag: EXAMPLES.get(flag) for flag, takes_value in [("-o", True), *_FLAGS] if takes_value},
    options=("-o", *(flag for flag, _ in _FLAGS), "--static", "--quiet"),
    option_example="%export --strict model(x)",
    inputs_rule="torch.export takes a tuple of positional inputs and a dict of keyword inputs",
    mixed_inputs=True,
)


@dataclass
class ExportMagicOptions:
    """The parsed options of one ``%export``: the magic's own, and the export options it sets."""

    output: str = DEFAULT_OUTPUT
    #: ``--check-inputs``' text, evaluated in the user's namespace once CALL is known
    check_inputs_expr: str | None = None
    static: bool = False
    quiet: bool = False
    #: ``tj.export``'s keyword options (``check_inputs`` aside)
    export_options: dict[str, Any] = field(default_factory=dict)


def parse_export_options(parser: Any, words: list[str]) -> ExportMagicOptions:
    """Validate the option words; raises :class:`MagicError` with the first problem."""
    ns = parse_words(parser, words, EXPORT)
    try:
        export_options, expressions = EXPORT_TABLE.from_command_line(ns)
    except CommandLineError as e:
        raise MagicError(str(e), EXAMPLES.get(e.flag)) from None
    check_shown(ns, EXPORT)
    return ExportMagicOptions(
        output=ns.output,
        check_inputs_expr=expressions.get("check_inputs"),
        static=ns.static,
        quiet=ns.quiet,
        export_options=export_options,
    )


def export_target(callee: Any, func_node: ast.expr, call_text: str) -> Any:
    """What to export for CALL's callee: a module (called, or its ``forward``), or a function (tj.export wraps it)."""
    callee_src = _source_of(func_node, call_text)
    check_callable(callee, callee_src, EXPORT)
    bound = _bound_module_method(callee, func_node)
    if bound is None:
        return callee
    module, name = bound
    if name not in CALL_NAMES:
        raise MagicError(
            f"CALL calls {callee_src!r}, the method {name!r} of {type(module).__name__}, but torch.export exports a "
            "module's forward; call the module, or export a function that calls the method "
            f"(def f(x): return model.{name}(x))",
            EXAMPLES["forward"],
        )
    return module


def check_input_sets(value: Any, expr: str) -> list[Any]:
    """``--check-inputs``' value: a list of input sets, each as ``check_inputs`` of ``tj.export`` takes it (a tuple
    of positional inputs, a dict of keyword inputs, or an ``(args, kwargs)`` pair)."""
    if not isinstance(value, list):
        raise MagicError(
            f"--check-inputs {expr!r} must evaluate to a list of input sets, one per check, got a "
            f"{type(value).__name__}",
            EXAMPLES["--check-inputs"],
        )
    return value


@magics_class
class ExportMagics(TraceMagics):
    """``%export`` / ``%%export`` (built on :class:`~.magic.TraceMagics`: only ``export`` is registered here)."""

    @no_var_expand
    @magic_arguments()
    @argument(
        "-o", dest="output", metavar="NAME", default=DEFAULT_OUTPUT, help="store the run in NAME (default: _export)"
    )
    @option_arguments(EXPORT_TABLE.add_command_line)
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
        help="the call to export, e.g. model(x); with %%%%export, the last line of the cell",
    )
    @kwds(
        epilog='Examples: %export model(x) | %export --dynamic "x:0=batch[2,64]" model(x) | '
        "%export --auto-dynamic --check-inputs [(x2,)] -o run model(x) | %export --strict --eval model(x, mask=m)"
    )
    @line_cell_magic
    def export(self, line: str, cell: str | None = None) -> None:
        """Export a call with torch.export and show the explorer; the run is stored in ``_export``.

        %export [options] CALL
            CALL is a call expression evaluated in your namespace; it is exported, not just run:

                %export model(x)                                # tj.export(model, (x,))
                %export model(x, mask=m)                        # tj.export(model, (x,), {"mask": m})
                %export f(x, y)                                 # a function: tj.export wraps it in a module
                %export --dynamic "x:0=batch[2,64]" model(x)    # dim 0 of x is Dim("batch", min=2, max=64)
                %export --dynamic x:0=batch --dynamic mask:0=batch model(x, mask=m)   # one symbol for both
                %export --dynamic x:1 model(x)                  # dim 1 of x is Dim.AUTO: export names it
                %export --auto-dynamic --check-inputs [(x2,)] model(x)   # the dims that differ become Dim.AUTO
                %export --strict --eval -o run model(x)         # strict (TorchDynamo), eval mode, store in run
                %export --draft always --compare-trace model(x) # draft_export's report too; beside a trace

            --dynamic names an argument of forward (NAME:DIM, NAME:DIM=SYMBOL, NAME:DIM=SYMBOL[MIN,MAX]) as
            `tracejit export --dynamic` does. * / ** unpacking is not allowed; a bound method other than forward
            cannot be exported (torch.export exports forward). Option values end at the first blank outside
            brackets, so --check-inputs [(x2,), (x3,)] needs no quotes.

        %%export [options]
            The cell body is code whose last line is the call to export. Everything before it runs in your namespace
            (definitions stay there), then the last line is exported as CALL:

                %%export --dynamic x:0
                class Net(torch.nn.Module):
                    def forward(self, x):
                        return x.relu() * 2
                Net()(torch.randn(4, 3))

        The run (a TraceRun with backend "export") is stored in _export (or the -o NAME variable) and the explorer
        in _export_explorer; when the explorer re-exports, _export follows the run on screen
        (_export_explorer.run). A failure inside the model (a data-dependent branch...) is recorded in the run
        (_export.ok, _export.error) and shown by the explorer; a mistake in the magic's own arguments prints one
        line and changes nothing.
        """
        magic = "%export" if cell is None else "%%export"
        try:
            if cell is None:
                opts, call_text = self._export_options(line)
                call = parse_call(call_text, EXPORT)
                self._export(opts, call, call_text.strip(), "<%export>", self._line_site(EXPORT, line))
            else:
                opts, rest = self._export_options(line)
                read = self._read_cell(rest, cell, EXPORT)
                if read is not None:
                    self._export(opts, *read)
        except MagicError as e:
            raise UsageError(e.line(magic)) from None
        return None

    def _export_options(self, line: str) -> tuple[ExportMagicOptions, str]:
        words, rest = split_line(line, EXPORT)
        return parse_export_options(self.export.parser, words), rest

    def _export(self, opts: ExportMagicOptions, call: ast.Call, text: str, filename: str, site: Frame | None) -> None:
        callee, args, kwargs = self._evaluate_call(call, text, filename)
        model = export_target(callee, call.func, text)
        check_inputs = None
        if opts.check_inputs_expr is not None:
            value = self._evaluate_option(opts.check_inputs_expr, "--check-inputs", EXPORT, EXAMPLES["--check-inputs"])
            check_inputs = check_input_sets(value, opts.check_inputs_expr)

        def capture() -> TraceRun:
            return tj_export(model, tuple(args), kwargs or None, check_inputs=check_inputs, **opts.export_options)

        self._show(capture, target_of(model).name, site, opts, EXPLORER_OUTPUT, doing="exporting")


# argparse would accept --no for --no-grad; prefixes are confusing on a notebook line
ExportMagics.export.parser.allow_abbrev = False

__all__ = ["DEFAULT_OUTPUT", "EXPLORER_OUTPUT", "ExportMagics", "export_target", "parse_export_options"]
