"""The ``tracejit`` command (also ``python -m jupyter_tracejit``): trace from a terminal or CI.

``tracejit trace FILE.py:NAME --inputs EXPR [options] [-o report.html] [--json run.json] [--dot graph.dot]``
    Imports ``FILE.py`` (as a fresh module, its directory first on ``sys.path``, like ``python FILE.py`` but
    without running it as ``__main__``) and traces its attribute ``NAME`` (dotted names reach into classes and
    objects):

    - a function (or any callable): traced with ``tj.trace``;
    - an ``nn.Module`` instance: traced as it is (its train/eval mode unless ``--eval``/``--train``);
    - an ``nn.Module`` subclass: instantiated with no arguments (so in train mode, as PyTorch creates modules),
      then traced.

    ``EXPR`` (``--inputs``, ``--check-inputs``) is a Python expression evaluated in the file's namespace with
    ``torch`` available. ``--inputs`` gives a tuple of positional inputs, a single tensor (one input) or a dict
    (keyword inputs). ``--check-inputs`` gives a list of such input sets (a single set is taken as a list of
    one). ``torch.manual_seed(SEED)`` (``--seed``, default 0) runs before the file is imported, so random
    inputs and weights are the same on every run.

    Prints the text report (summary, warnings with their source lines, check divergences, findings) and exits
    with 0 when the trace is ok, 1 when tracing failed or a check failed (``--fail-on-warnings``: also on tracer
    warnings, findings or a probe disagreement), so it can gate CI; 2 on usage errors (missing file or name, an
    expression that does not evaluate, the file failing to import, an output that would overwrite a file the run
    read), with one line on stderr naming the problem; 130 when interrupted (Ctrl-C), with one line.

    The outputs (``-o``, ``--json``, ``--dot``) are written whole or not at all (:mod:`.core.files`): a full disk
    or an interrupt leaves the files that were there. A closed stdout (``| head -1``) is not an error: the report
    stops, the outputs are still written.

``tracejit view MODEL.pt [-o report.html] [--json run.json] [--dot graph.dot] [--fail-on-warnings]``
    Opens a saved model without running it (``tj.load``: a TorchScript archive ``.pt`` or an exported program
    ``.pt2``, told apart by content), prints the report (its findings: a batch size frozen into a shape, a device
    baked in...) and writes the outputs. Exit 0 when it loaded (1 with ``--fail-on-warnings`` and findings), 2 when
    the file is missing or not a model it can read (the message says what the file is instead).

``tracejit diff OLD NEW [-o diff.html] [--json diff.json] [--values [--atol TOL]]``
    What changed between two saved models (``tj.diff``): the graphs by module scope, the parameters by name and
    type (and values with ``--values``). Exit 0 when they are the same, 1 when they differ, 2 on a usage error
    (a missing or unreadable file), so a CI job can fail when a re-export changes the graph.

``tracejit migrate LIST... [-o report.html] [--json report.json] [--baseline report.json]``: see :mod:`.migrate`.

``tracejit demo [-o demo.html] [--json run.json] [--dot graph.dot] [--no-probe]``
    Traces the bundled example model (:func:`jupyter_tracejit.demo.demo_run`) and prints the report. The model
    has problems on purpose; finding them is the demo working, so the exit code is 0 (``trace`` is the one that
    gates CI).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .cli_output import Stdout, check_outputs
from .cli_target import UsageError, definition_line, input_sets, split_target, target_and_inputs
from .core.files import write_files

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2
#: 128 + SIGINT, as shells report a command stopped with Ctrl-C
EXIT_INTERRUPTED = 130


# -- parsing --------------------------------------------------------------------------------------------------
def _outputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", type=Path, metavar="HTML", help="write a self-contained HTML report here")
    p.add_argument("--json", type=Path, metavar="FILE", help="write the run's JSON (TraceRun.to_json) here")
    p.add_argument("--dot", type=Path, metavar="FILE", help="write the graph's Graphviz DOT source here")


def build_parser(prog: str = "tracejit") -> argparse.ArgumentParser:
    # the options' tables read torch's defaults: imported here, inside main's handling of Ctrl-C (``import torch``
    # takes a second or more; an interrupt then is one line too)
    from .core.registry import commands

    parser = argparse.ArgumentParser(
        prog=prog,
        description="See what torch.jit.trace recorded: trace a function or module from a file, print what the "
        "trace got wrong, and write an offline HTML report. Exit status: 0 ok, 1 problems, 2 usage error.",
    )
    verbs = [row.verb for row in commands()]
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="{" + ",".join([*verbs, "view,diff,migrate,demo"]) + "}"
    )
    for row in commands():
        _capture_command(sub, row)

    v = sub.add_parser(
        "view",
        help="open a saved model (.pt or .pt2) and report, nothing run",
        description="Open a saved TorchScript archive (torch.jit.save, .pt) or exported program (torch.export.save, "
        ".pt2) without running it, print what it holds and its findings, and write the outputs. Exit status: 0 "
        "loaded, 1 findings with --fail-on-warnings, 2 a missing or unreadable file.",
    )
    v.add_argument("model", type=Path, metavar="MODEL", help="the saved model (.pt or .pt2)")
    v.add_argument("--fail-on-warnings", action="store_true", help="exit 1 when the model has findings")
    _trusted(v)
    _imports(v)
    _outputs(v)

    df = sub.add_parser(
        "diff",
        help="what changed between two saved models (or the same model saved twice)",
        description="Compare two saved models (.pt / .pt2): the graphs by module scope, the parameters by name and "
        "type, and their values with --values. Exit status: 0 same, 1 different, 2 usage error.",
    )
    df.add_argument("old", type=Path, metavar="OLD", help="the old model (.pt or .pt2)")
    df.add_argument("new", type=Path, metavar="NEW", help="the new model (.pt or .pt2)")
    df.add_argument("--values", action="store_true", help="compare the parameters' values too")
    df.add_argument(
        "--atol", type=float, default=None, metavar="TOL", help="with --values: the largest difference that is equal"
    )
    df.add_argument("-o", "--output", type=Path, metavar="HTML", help="write the diff as an HTML page here")
    df.add_argument("--json", type=Path, metavar="FILE", help="write the diff's JSON (RunDiff.to_json) here")
    _trusted(df)
    _imports(df)

    from .migrate.command import add_parser as add_migrate

    add_migrate(sub)
    d = sub.add_parser("demo", help="trace a bundled example model and print the report")
    d.add_argument("--no-probe", action="store_true", help="skip the generalization probe")
    _outputs(d)
    return parser


def _capture_command(sub: Any, row: Any) -> None:
    """A back end's subcommand (``tracejit trace``, ``tracejit export``): FILE.py:NAME, its inputs, its options
    table's flags (spelled as in its magic), the seed, the exit rule, the outputs."""
    words = row.command
    c = sub.add_parser(row.verb, help=words.help, description=words.description)
    c.add_argument("target", metavar="FILE.py:NAME", help=words.target_help)
    c.add_argument("--inputs", required=True, metavar="EXPR", help=words.inputs_help)
    row.table().add_command_line(c.add_argument)
    c.add_argument("--seed", type=int, default=0, help="torch.manual_seed before importing the file (default 0)")
    c.add_argument("--fail-on-warnings", action="store_true", help=words.fail_on_warnings_help)
    _outputs(c)


def _trusted(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trusted",
        action="store_true",
        help="let torch read the file as it would (tj.load(path, trusted=True)): pickled objects, compiled code and "
        "TorchScript run at load are then run; only for files whose origin you trust (refused by default)",
    )


def _imports(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE before loading (repeatable): the module whose classes a .pt2's program takes or returns, "
        "registered with torch's pytree when imported (transformers.modeling_outputs for a model's ModelOutput)",
    )


def import_modules(names: list[str]) -> None:
    """``--import``: a .pt2 whose program takes or returns a class registered with torch's pytree (a transformers
    ModelOutput) loads only once the module registering it is imported; a fresh command-line Python has not."""
    if names and "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # a module of the current directory imports, as with python -m
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # any failure of the import itself is the user's to fix, named
            raise UsageError(f"--import {name}: {type(exc).__name__}: {exc}") from None


# -- running --------------------------------------------------------------------------------------------------
def _requested_outputs(args: argparse.Namespace) -> list[tuple[str, Path]]:
    named = (("-o", args.output), ("--json", args.json), ("--dot", args.dot))
    return [(option, path) for option, path in named if path is not None]


def _write_outputs(run: Any, args: argparse.Namespace, say: Callable[[str], None]) -> None:
    """Write every requested output or none (atomically: a failed write leaves the files that were there)."""
    outputs = _requested_outputs(args)
    check_outputs(outputs, sorted(set(run.files())))
    contents: dict[Path, str] = {}
    notes: list[str] = []
    if args.json:
        contents[args.json] = json.dumps(run.to_json(), allow_nan=False)
    if args.dot:
        if run.graph is None:
            notes.append(f"not writing {args.dot}: tracing failed, there is no graph")
        else:
            contents[args.dot] = run.to_dot()
    if args.output:
        from .render.page import render_html

        contents[args.output] = render_html(run)
    write_files(contents)
    for note in notes:
        say(note)
    for path in contents:
        size = f" ({path.stat().st_size / 1024:.0f} KiB)" if path == args.output else ""
        say(f"wrote {path}{size}")


def _exit_code(run: Any, fail_on_warnings: bool) -> int:
    if not run.ok:
        return EXIT_PROBLEMS
    if fail_on_warnings and (run.user_warnings or run.findings or (run.probe is not None and not run.probe.ok)):
        return EXIT_PROBLEMS
    return EXIT_OK


def _checked_target(args: argparse.Namespace) -> tuple[Path, str]:
    """FILE.py:NAME of a capture subcommand (``trace``, ``export``), with its outputs checked before anything runs
    (usage errors)."""
    path, name = split_target(args.target)
    if path.suffix != ".py":
        raise UsageError(f"{path} is not a .py file (expected FILE.py:NAME)")
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    outputs = _requested_outputs(args)
    for _, out in outputs:
        if not out.parent.is_dir():
            raise UsageError(f"cannot write {out}: no such directory {out.parent}")
    # the target file now, before the capture; the other files the run read once it has run (_write_outputs)
    check_outputs(outputs, [str(path)])
    return path, name


def cmd_capture(row: Any, args: argparse.Namespace) -> int:
    """``tracejit <verb> FILE.py:NAME --inputs EXPR [options]``: the back end captures NAME called with the inputs
    (its ``capture``, as its magic does), the report is printed with advice spelled for the command line."""
    from .core.command import CallProblem, CaptureCall
    from .core.options import CommandLineError
    from .core.registry import capture_function

    table = row.table()
    try:
        options, texts = table.from_command_line(args)
    except CommandLineError as exc:
        raise UsageError(str(exc)) from None
    path, name = _checked_target(args)

    from .core.caller import call_site
    from .render.text import format_run

    target, example, kwargs, namespace = target_and_inputs(path, name, args.seed, args.inputs)
    flags = {f.option: f.flag for f in table.flags if f.is_expression}
    expressions = {option: input_sets(text, namespace, flags[option]) for option, text in texts.items()}
    call = CaptureCall(
        target,
        list(example or ()),
        dict(kwargs or {}),
        options=options,
        expressions=expressions,
        texts=texts,
        callee_text=name,
        attribute=name.rsplit(".", 1)[-1],
    )
    try:
        capture = capture_function(row)(call)
    except CallProblem as problem:
        raise UsageError(problem.problem) from None
    with call_site(str(path.resolve()), definition_line(path, name)):
        run = capture.run()
    say = Stdout()
    say(format_run(run, spelling=table.command_line_spelling))
    if run.compared is not None:
        say(f"compared with a trace: {run.compared.comparison.summary()}")
    _write_outputs(run, args, say)
    return _exit_code(run, args.fail_on_warnings)


def cmd_demo(args: argparse.Namespace) -> int:
    from .core.torchscript.options import TRACE_TABLE
    from .demo import demo_run
    from .render.text import format_run

    check_outputs(_requested_outputs(args), [])
    run = demo_run(probe=not args.no_probe)
    say = Stdout()
    say(format_run(run, spelling=TRACE_TABLE.command_line_spelling))
    _write_outputs(run, args, say)
    return 0


def load_model(path: Path, trusted: bool = False) -> Any:
    """``tj.load(path)``, a file it cannot read being a usage error (its message and hint, one line each)."""
    if not path.exists():
        raise UsageError(f"no such file: {path}")
    from .core.archive.saved import load

    run = load(path, trusted=trusted)
    if run.error is not None and run.error.phase == "load":
        raise UsageError(f"{run.error.message}\n{run.error.hint}")
    return run


def _checked_outputs(outputs: list[tuple[str, Path]], inputs: list[str]) -> None:
    for _, out in outputs:
        if not out.parent.is_dir():
            raise UsageError(f"cannot write {out}: no such directory {out.parent}")
    check_outputs(outputs, inputs)


def cmd_view(args: argparse.Namespace) -> int:
    from .render.text import format_run

    _checked_outputs(_requested_outputs(args), [str(args.model)])
    import_modules(args.imports)
    run = load_model(args.model, args.trusted)
    say = Stdout()
    say(format_run(run))
    _write_outputs(run, args, say)
    return _exit_code(run, args.fail_on_warnings)


def cmd_diff(args: argparse.Namespace) -> int:
    from .core.run_diff import DEFAULT_ATOL, diff_runs
    from .render.page import render_html

    if args.atol is not None and not args.values:
        raise UsageError("--atol is the tolerance of --values: add --values, or leave --atol out")
    if args.atol is not None and not args.atol >= 0:
        raise UsageError(f"--atol must be a number >= 0, not {args.atol}")
    outputs = [(option, path) for option, path in (("-o", args.output), ("--json", args.json)) if path is not None]
    _checked_outputs(outputs, [str(args.old), str(args.new)])
    import_modules(args.imports)
    old, new = load_model(args.old, args.trusted), load_model(args.new, args.trusted)
    result = diff_runs(old, new, values=args.values, atol=DEFAULT_ATOL if args.atol is None else args.atol)
    result.old, result.new = str(args.old), str(args.new)
    say = Stdout()
    say(result.summary())
    contents: dict[Path, str] = {}
    if args.json:
        contents[args.json] = json.dumps(result.to_json(), allow_nan=False)
    if args.output:
        # the explorer's page on the new model with its Diff tab (both graphs side by side, offline); the diff's
        # static page when a side failed (no graphs to show)
        contents[args.output] = result.to_html() if result.error else render_html(result.explorer_run())
    write_files(contents)
    for path in contents:
        say(f"wrote {path}")
    return EXIT_OK if result.same else EXIT_PROBLEMS


def _parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    args, extra = parser.parse_known_args(argv)
    if not extra:
        return args
    unknown = [w for w in extra if w.startswith("--")]
    if unknown:  # an option the subcommand does not have, whatever it follows
        parser.error(f"unknown option {unknown[0]}; {parser.prog} {args.command} --help lists its options")
    words = sys.argv[1:] if argv is None else argv
    after = words[: words.index(extra[0])] if extra[0] in words else []
    option = next((w for w in reversed(after) if w.startswith("-")), "")
    if option in ("--inputs", "--check-inputs"):
        given = getattr(args, option[2:].replace("-", "_"))
        together = (
            "(" + ", ".join([given, *extra]) + ")" if option == "--inputs" else "[" + ", ".join([given, *extra]) + "]"
        )
        kind = "a tuple of the inputs" if option == "--inputs" else "a list of the input sets"
        parser.error(
            f"{option} takes one Python expression, but it was followed by {len(extra)} more ({' '.join(extra)}); "
            f"pass several as one expression, {kind}: {option} {shlex.quote(together)}"
        )
    parser.error(f"unrecognized arguments: {' '.join(extra)}")


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    """Run the command line; returns the exit status (``sys.exit(main())``)."""
    prog = prog or "tracejit"
    try:
        parser = build_parser(prog)
        args = _parse(parser, argv)
        from .core.registry import commands

        row = next((r for r in commands() if r.verb == args.command), None)
        if row is not None:
            return cmd_capture(row, args)
        if args.command == "view":
            return cmd_view(args)
        if args.command == "diff":
            return cmd_diff(args)
        if args.command == "migrate":
            from .migrate.command import main as cmd_migrate

            return cmd_migrate(args)
        return cmd_demo(args)
    except UsageError as exc:
        first, _, rest = str(exc).partition("\n")
        print(f"{prog}: error: {first}", file=sys.stderr)
        if rest:
            print(rest, file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        # outputs are written atomically: an interrupt leaves the files that were there, and no partial one
        print(f"{prog}: interrupted; no file was written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as exc:  # cannot write an output file, or the report bundle is missing
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
